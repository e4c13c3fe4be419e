"""Leaving the process without waiting for a thread a tool left blocked.

A tool can leave a thread blocked for good (a device read, an extension's ``to_thread``): a normal
exit waits for such threads (``asyncio.run`` joins its executor, the interpreter joins the rest), which
is how a second Ctrl-C used to be ignored. After a signal (print, JSON and RPC mode), or when the
terminal mode ends while a call of its :class:`CountingExecutor` has not returned, tau settles the run,
closes the session, flushes its output and leaves without waiting for them. A print or JSON run in
tau's own process leaves the same way when it ends (nothing is left to wait for, and taking apart a
large session's heap object by object would cost more than its last request).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["SIGNAL_EXIT_CODES", "CountingExecutor", "exit_now"]

T = TypeVar("T")

# 128 + the signal number, as a shell reports a process ended by it.
SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


def exit_now(code: int) -> None:
    """End the process at once with ``code``, after flushing what was written (no thread is joined)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)


class CountingExecutor(ThreadPoolExecutor):
    """A loop's default executor (``asyncio.to_thread``) that knows whether a call has not returned yet."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self._lock = threading.Lock()
        self._running = 0

    @property
    def busy(self) -> bool:
        """Whether a submitted call is still queued or running (a tool may have left it blocked)."""
        with self._lock:
            return self._running > 0

    def _count(self, step: int) -> None:
        with self._lock:
            self._running += step

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        def counted() -> T:
            try:
                return fn(*args, **kwargs)
            finally:
                self._count(-1)

        self._count(1)
        try:
            return super().submit(counted)
        except BaseException:
            self._count(-1)
            raise
