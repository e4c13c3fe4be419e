"""The loop made visible: one line per hidden continuation, and one when it stops with tasks open.

The lines go to ``ctx.ui.notice``: a dim line in the terminal, stderr in print, JSON and RPC modes,
never stdout and never the session (the model does not see them).
"""

from __future__ import annotations

from typing import Any

from tau.bundled.todo_loop.state import Limits, Observation

__all__ = ["PREFIX", "continuing", "show", "stopped"]

PREFIX = "todo-loop: "


def _open(count: int) -> str:
    return f"{count} task{'' if count == 1 else 's'} open"


def continuing(seen: Observation, rounds: int, limits: Limits) -> str:
    """``todo-loop: continuing, 2 tasks open (round 1/25)``."""
    return f"{PREFIX}continuing, {_open(seen.open_count or 0)} (round {rounds}/{limits.cap_text})"


def stopped(seen: Observation, reason: str | None) -> str | None:
    """``todo-loop: stopped with 2 tasks open: <reason>``; ``None`` when nothing is left open."""
    if reason is None:
        return None
    if seen.unavailable is not None:
        return f"{PREFIX}stopped: {reason}"
    count = seen.tasks.open_count if seen.tasks is not None else 0
    return f"{PREFIX}stopped with {_open(count)}: {reason}" if count else None


def show(ctx: Any, text: str) -> None:
    """Write ``text`` as a notice (a UI from before ``notice`` existed gets an info notification)."""
    notice = getattr(ctx.ui, "notice", None)
    if callable(notice):
        notice(text)
    else:
        ctx.ui.notify(text, "info")
