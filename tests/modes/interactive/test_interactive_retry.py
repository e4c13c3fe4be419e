"""Issue 32: retries on screen say how long they wait, and a last line says when they gave up."""

from __future__ import annotations

import asyncio
from pathlib import Path

from interactive_support import controlled, screen_text

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.session import retry as session_retry
from tau.agent.settings import Settings
from tau.session.manager import SessionManager


async def no_wait(ms: int, signal: object) -> bool:
    return False


OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error: Overloaded"}


def _session(tmp_path: Path, steps: list) -> AgentSession:
    scripted = FauxModel(steps, record=None)
    settings = Settings.in_memory(
        {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 1500}, "compaction": {"enabled": False}}
    )
    manager = SessionManager.in_memory(tmp_path)
    return AgentSession(manager, settings, scripted.registry, scripted.model, cwd=tmp_path)


def test_retries_show_the_wait_and_a_last_line_when_they_give_up(tmp_path, monkeypatch):
    monkeypatch.setattr(session_retry, "_sleep_aborted", no_wait)  # the waits are said, not waited
    session = _session(tmp_path, [OVERLOADED, OVERLOADED, OVERLOADED])
    controller = controlled(session)

    asyncio.run(session.prompt("hello"))
    text = screen_text(controller)
    assert "Retrying (1/2) in 1.5s: 529 overloaded_error: Overloaded" in text
    assert "Retrying (2/2) in 3s: 529 overloaded_error: Overloaded" in text
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert last == "Retry failed after 2 attempts: 529 overloaded_error: Overloaded"
    assert controller.footer.working_message is None


def test_a_retry_that_succeeds_ends_without_a_failure_line(tmp_path, monkeypatch):
    monkeypatch.setattr(session_retry, "_sleep_aborted", no_wait)
    session = _session(tmp_path, [OVERLOADED, {"text": "fine now"}])
    controller = controlled(session)
    asyncio.run(session.prompt("hello"))
    text = screen_text(controller)
    assert "Retrying (1/2) in 1.5s" in text and "fine now" in text
    assert "Retry failed" not in text
