"""What tau's modes do with an exception nobody awaited (asyncio's "Exception in callback", "Task
exception was never retrieved").

asyncio prints such an exception with its traceback on stderr, in the middle of a print run's
answer or an RPC conversation's diagnostics, and the run goes on as if nothing happened. Every
failure tau expects is handled where it happens (a spill file that cannot be written, a reader that
went away); one that still reaches the loop is a bug: it is reported in one line that says so and
names it, never as a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

__all__ = ["install", "one_line"]


def one_line(context: dict[str, Any]) -> str:
    """The loop's error ``context`` as one line."""
    message = str(context.get("message") or "unhandled error in the event loop")
    exception = context.get("exception")
    if exception is not None:
        detail = str(exception).splitlines()[0] if str(exception) else ""
        message += f": {type(exception).__name__}" + (f": {detail}" if detail else "")
    return f"tau: internal error ({message}); please report it"


def _report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    with contextlib.suppress(Exception):
        print(one_line(context).replace("\n", " "), file=sys.stderr)


def install(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Report the loop's unhandled errors in one line (see the module docstring)."""
    (loop or asyncio.get_running_loop()).set_exception_handler(_report)
