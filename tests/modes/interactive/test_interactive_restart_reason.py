"""The interactive mode starts again on a session after ``/reload`` (or a resume it cannot make in
place): the next runtime is told why, so ``session_start`` says ``reload`` or ``resume`` as pi's does,
and the one it leaves shuts down with the same reason."""

from __future__ import annotations

import argparse
import asyncio

import tau.modes.interactive as interactive
from tau.modes.interactive.app import InteractiveMode


def test_the_next_runtime_starts_with_the_reason_the_mode_left_with(monkeypatch):
    calls: list[str | None] = []
    outcomes = iter([(0, "/tmp/s.jsonl", "reload"), (0, "/tmp/t.jsonl", "resume"), (0, None, "quit")])

    async def run_once(args, initial, messages, images=None):
        calls.append(getattr(args, "start_reason", None))
        return next(outcomes)

    monkeypatch.setattr(interactive, "_run_once", run_once)
    args = argparse.Namespace(resume=False, session=None, continue_=False, no_session=False)
    assert asyncio.run(interactive._sessions(args, None, [], None)) == 0
    assert calls == [None, "reload", "resume"]


def test_reload_leaves_with_the_reason_reload():
    mode = InteractiveMode.__new__(InteractiveMode)  # only the switch bookkeeping is exercised
    mode.switch_to, mode.switch_reason = None, "resume"
    mode.session = type(
        "S", (), {"session_manager": type("M", (), {"get_session_file": lambda self: None})()}
    )()
    mode.exit = lambda: None  # type: ignore[method-assign]
    mode.reload()
    assert mode.switch_reason == "reload" and mode.switch_to is not None
