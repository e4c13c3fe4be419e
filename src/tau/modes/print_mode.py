"""Print mode (``tau -p``): run the prompts, print the final assistant text, exit.

pi 1.6 ``print-mode.ts``: the text blocks of the last assistant message go to stdout, one per line.
Exit code 1 when that message failed (``error``/``aborted``: its error text on stderr) or stopped at
the output token limit (``length``). Extension notifications go to stderr; dialogs answer at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from tau.modes.signal_exit import SIGNAL_EXIT_CODES, guard
from tau.modes.std_streams import READER_GONE, silence_std_streams

__all__ = ["install_abort_signals", "release_abort_signals", "run_prompts", "run_text"]

TRUNCATED = "Response was truncated: the model reached its output token limit."


async def run_prompts(
    session: Any,
    initial: str | None,
    messages: Sequence[str],
    images: Any = None,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Send the initial message (with images) and then each further message, one run each.

    Before each prompt the session learns how many more follow (``announce_prompts``), so an
    extension does not continue a run on its own while the human's next prompt waits. ``stop()``
    true (a signal arrived, the reader went away) sends no further message.
    """
    announce = getattr(session, "announce_prompts", None)
    if initial is not None:
        if announce is not None:
            announce(len(messages))
        await session.prompt(initial, images=images)
    for index, message in enumerate(messages):
        if stop is not None and stop():
            return
        if announce is not None:
            announce(len(messages) - index - 1)
        await session.prompt(message)


def install_abort_signals(session: Any) -> dict[str, Any]:
    """SIGINT/SIGTERM/SIGHUP abort the running session and end tau with the signal's code; a second
    one exits at once (killing the shell commands still running), and so does the first one's
    watchdog when the run has not settled :data:`~tau.modes.signal_exit.SIGNAL_GRACE_SECONDS` later
    (a tool that ignores the abort, a main thread blocked in a system call). Returns the tally;
    :func:`release_abort_signals` ends it."""
    state: dict[str, Any] = {"count": 0, "code": 0, "tasks": set(), "installed": False}
    loop = asyncio.get_running_loop()

    def on_signal(name: str) -> None:
        state["count"] += 1
        state["code"] = SIGNAL_EXIT_CODES[name]
        task = loop.create_task(session.abort())
        state["tasks"].add(task)

    if not guard.installed:  # tau's own process installed it at start; an embedding caller did not
        state["installed"] = guard.install()
    guard.attach(loop, on_signal)
    return state


def release_abort_signals(state: dict[str, Any]) -> None:
    """The run is over: a signal now ends tau at once (and the handlers go back where tau installed them)."""
    guard.detach()
    if state.get("installed"):  # an embedding caller: its process outlives the run
        guard.disarm()
        guard.restore()


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
        await run_prompts(session, initial, messages, images, stop=lambda: bool(state["code"]))
        code = final_output(session, out, err)
        out.flush()
    except BrokenPipeError:  # the reader of the answer went away (`| head -0`): end quietly
        silence_std_streams()
        code = READER_GONE
    except Exception as exc:  # boundary: a refused prompt (no model, no key) is the user's message
        print(str(exc), file=err)
        code = 1
    finally:
        release_abort_signals(state)
    return state["code"] or code
