"""``AgentSession.switch_session``: resuming another session file in place (pi ``switchSession``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from session_support import Harness, ScriptedHooks

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.session.manager import SessionManager
from waiting import until


def run(coro):
    return asyncio.run(coro)


def _texts(session: AgentSession, role: str) -> list[str]:
    out = []
    for message in session.messages:
        if message["role"] == role:
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0].get("text"))
    return out


# -- switch_session ----------------------------------------------------------------------------


def _finished_session(tmp_path: Path, name: str, reply: str, level: str = "high") -> str:
    scripted = FauxModel([{"text": reply}], record=None, model_overrides={"reasoning": True})
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    session = AgentSession(
        manager,
        Settings.in_memory({"retry": {"enabled": False}}),
        scripted.registry,
        scripted.model,
        cwd=tmp_path,
        thinking_level=level,
        active_tools=["read"],
    )
    run(session.prompt(name))
    path = manager.get_session_file()
    manager.close()
    return path


def test_switch_session_resumes_the_file_with_its_level_and_tools(tmp_path):
    target = _finished_session(tmp_path, "old question", "old answer", level="low")
    seen: list[tuple] = []
    hooks = ScriptedHooks(
        session_before_switch=lambda event: seen.append(
            ("before", event["reason"], event["targetSessionFile"])
        ),
        session_shutdown=lambda event: seen.append(
            ("shutdown", event["reason"], event.get("targetSessionFile"))
        ),
        session_start=lambda event: seen.append(("start", event["reason"], event.get("previousSessionFile"))),
    )
    h = Harness(
        tmp_path,
        [{"text": "current"}, {"text": "continued"}],
        hooks=hooks,
        thinking_level="high",
        model_overrides={"reasoning": True},
    )
    # the resumed file names faux/faux-1: restore the reasoning variant this test runs with
    reasoning = h.session.model
    h.registry.find = lambda provider, model_id: (
        reasoning if (provider, model_id) == ("faux", "faux-1") else None
    )
    assert h.session.thinking_level == "high"
    run(h.session.prompt("current question"))
    previous = h.session.session_file
    assert run(h.session.switch_session(target)) == {"cancelled": False}
    assert seen == [
        ("before", "resume", target),
        ("shutdown", "resume", target),
        ("start", "resume", previous),
    ]
    session = h.session
    assert session.session_file == target
    assert _texts(session, "user") == ["old question"]
    assert session.thinking_level == "low"
    assert session.get_active_tool_names() == ["read"]
    run(session.prompt("more"))
    assert _texts(session, "assistant") == ["old answer", "continued"]
    lines = [json.loads(line) for line in Path(target).read_text().splitlines()]
    assert [line.get("message", {}).get("role") for line in lines if line["type"] == "message"][-2:] == [
        "user",
        "assistant",
    ]
    # the session left behind is untouched and can be opened again (its lock is released)
    SessionManager.open(previous).close()


def test_switch_session_can_be_cancelled(tmp_path):
    target = _finished_session(tmp_path, "old question", "old answer")
    hooks = ScriptedHooks(session_before_switch=lambda event: {"cancel": True})
    h = Harness(tmp_path, [{"text": "current"}], hooks=hooks)
    run(h.session.prompt("current question"))
    before = h.session.session_file
    assert run(h.session.switch_session(target)) == {"cancelled": True}
    assert h.session.session_file == before and _texts(h.session, "user") == ["current question"]


def test_switch_session_aborts_a_run_and_keeps_it_in_the_file_left(tmp_path):
    target = _finished_session(tmp_path, "old question", "old answer")
    h = Harness(tmp_path, [{"bash": "sleep 60"}, {"text": "never"}])

    async def scenario():
        first = asyncio.ensure_future(h.session.prompt("go"))
        await until(lambda: "tool_execution_start" in h.types())
        await h.session.switch_session(target)
        await first

    run(scenario())
    assert h.session.session_file == target and not h.session.is_streaming
    left = [e["message"] for e in h.manager.get_entries() if e["type"] == "message"]
    assert [m["role"] for m in left][-3:] == ["assistant", "toolResult", "assistant"]
    assert left[-1]["stopReason"] == "aborted"


def test_switch_session_to_a_file_that_is_not_a_session_changes_nothing(tmp_path):
    bogus = tmp_path / "notes.jsonl"
    bogus.write_text('{"hello": 1}\n')
    h = Harness(tmp_path, [{"text": "current"}])
    run(h.session.prompt("current question"))
    before = h.session.session_file
    with pytest.raises(RuntimeError, match=r"notes\.jsonl"):
        run(h.session.switch_session(bogus))
    assert h.session.session_file == before and bogus.read_text() == '{"hello": 1}\n'


def test_switch_session_to_a_file_whose_directory_is_gone_says_so(tmp_path):
    target = _finished_session(tmp_path, "old question", "old answer")
    lines = Path(target).read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(tmp_path / "removed")
    Path(target).write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    h = Harness(tmp_path, [])
    with pytest.raises(RuntimeError, match="Stored session working directory does not exist"):
        run(h.session.switch_session(target))
    assert h.session.session_file != target
    SessionManager.open(target).close()  # not left locked
