"""Leaving the process after a signal (SIGINT, SIGTERM, SIGHUP), in every non-interactive mode.

A tool can leave a thread blocked for good (a device read, an extension's ``to_thread``): a normal
exit waits for such threads (``asyncio.run`` joins its executor, the interpreter joins the rest), which
is how a second Ctrl-C used to be ignored. After a signal, tau settles the run, closes the session,
flushes its output and leaves without waiting for them.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["SIGNAL_EXIT_CODES", "exit_now"]

# 128 + the signal number, as a shell reports a process ended by it.
SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


def exit_now(code: int) -> None:
    """End the process at once with ``code``, after flushing what was written (no thread is joined)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)
