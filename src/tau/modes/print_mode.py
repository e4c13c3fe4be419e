"""Print mode (``tau -p``): run the prompts, print the final assistant text, exit.

pi 1.6 ``print-mode.ts``: the text blocks of the last assistant message go to stdout, one per line.
Exit code 1 when that message failed (``error``/``aborted``: its error text on stderr) or stopped at
the output token limit (``length``). Extension notifications go to stderr; dialogs answer at once.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from tau.modes.signal_exit import SIGNAL_EXIT_CODES, exit_now

__all__ = ["install_abort_signals", "run_prompts", "run_text"]

TRUNCATED = "Response was truncated: the model reached its output token limit."


async def run_prompts(session: Any, initial: str | None, messages: Sequence[str], images: Any = None) -> None:
    """Send the initial message (with images) and then each further message, one run each.

    Before each prompt the session learns how many more follow (``announce_prompts``), so an
    extension does not continue a run on its own while the human's next prompt waits.
    """
    announce = getattr(session, "announce_prompts", None)
    if initial is not None:
        if announce is not None:
            announce(len(messages))
        await session.prompt(initial, images=images)
    for index, message in enumerate(messages):
        if announce is not None:
            announce(len(messages) - index - 1)
        await session.prompt(message)


def install_abort_signals(session: Any) -> dict[str, Any]:
    """SIGINT/SIGTERM/SIGHUP abort the running session; a second one exits at once (killing the shell
    commands still running), even while a tool's thread is blocked. Returns the tally."""
    state: dict[str, Any] = {"count": 0, "code": 0, "tasks": set()}
    loop = asyncio.get_running_loop()
    codes = {getattr(signal, name): code for name, code in SIGNAL_EXIT_CODES.items() if hasattr(signal, name)}

    def handle(signum: int) -> None:
        from tau.tools.shell import kill_tracked_groups

        state["count"] += 1
        state["code"] = codes[signum]
        if state["count"] > 1:
            kill_tracked_groups()  # no shell command outlives tau
            exit_now(codes[signum])
        task = loop.create_task(session.abort())
        state["tasks"].add(task)

    for signum in codes:
        try:
            loop.add_signal_handler(signum, handle, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass
    return state


def final_output(session: Any, out: TextIO, err: TextIO) -> int:
    """Write the last assistant message's text (or its error) and return the exit code."""
    messages = session.messages
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "assistant":
        return 0
    reason = last.get("stopReason")
    if reason in ("error", "aborted"):
        print(last.get("errorMessage") or f"Request {reason}", file=err)
        return 1
    for block in last.get("content") or []:
        if block.get("type") == "text":
            out.write(block["text"] + "\n")
    if reason == "length":
        print(TRUNCATED, file=err)
        return 1
    return 0


async def run_text(
    session: Any,
    initial: str | None,
    messages: Sequence[str],
    *,
    images: Any = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The whole print mode; returns the process exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    state = install_abort_signals(session)
    try:
        await run_prompts(session, initial, messages, images)
        code = final_output(session, out, err)
    except Exception as exc:  # boundary: a refused prompt (no model, no key) is the user's message
        print(str(exc), file=err)
        code = 1
    out.flush()
    return state["code"] or code
