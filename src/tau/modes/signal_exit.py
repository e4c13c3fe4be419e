"""Leaving the process without waiting for a thread a tool left blocked, and signals that always end tau.

A tool can leave a thread blocked for good (a device read, an extension's ``to_thread``): a normal
exit waits for such threads (``asyncio.run`` joins its executor, the interpreter joins the rest), which
is how a second Ctrl-C used to be ignored. After a signal (print, JSON and RPC mode), or when the
terminal mode ends while a call of its :class:`CountingExecutor` has not returned, tau settles the run,
closes the session, flushes its output and leaves without waiting for them. A print or JSON run in
tau's own process leaves the same way when it ends (nothing is left to wait for, and taking apart a
large session's heap object by object would cost more than its last request).

:class:`SignalGuard` makes SIGINT, SIGTERM and SIGHUP end tau within a bounded time in every state.
It does not depend on the main thread: an event-loop handler waits for the loop, and even a
Python-level handler waits for the main thread to run Python code, which a main thread blocked in a
system call (an ``open()`` of a named pipe, a lock, an extension's blocking call) may never do. The
guard's own thread reads the signal numbers from the interpreter's wakeup descriptor
(``signal.set_wakeup_fd``), which the C-level handler writes at once; the Python-level handlers only
keep the default action away (they act themselves only when that thread is not there). Before a run is attached (settings, the session file,
extensions loading) and after it is detached (the final shutdown), a signal exits at once with the
signal's code. While a run is attached, the first signal is handed to the mode in the loop (abort
the run, save, shut down in order) and arms a watchdog: if tau has not ended
:data:`SIGNAL_GRACE_SECONDS` later, it leaves as it is (what was saved stays saved; shell commands
still running are killed). A second signal exits at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from tau.tools.shell import kill_tracked_groups

if TYPE_CHECKING:  # pragma: no cover
    import asyncio

__all__ = [
    "SIGNAL_EXIT_CODES",
    "SIGNAL_GRACE_SECONDS",
    "CountingExecutor",
    "SignalGuard",
    "exit_now",
    "guard",
]

T = TypeVar("T")

# 128 + the signal number, as a shell reports a process ended by it.
SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}
# How long an orderly stop after a signal may take before tau leaves as it is.
SIGNAL_GRACE_SECONDS = 5.0
# How long the last flush of the output may wait for a reader that does not read.
_FLUSH_SECONDS = 2.0


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def exit_now(code: int) -> None:
    """End the process at once with ``code``, after flushing what was written (no thread is joined).

    The flush runs in a helper thread and gets :data:`_FLUSH_SECONDS`: a reader that stopped reading
    a full pipe cannot hold the exit.
    """
    try:
        flusher = threading.Thread(target=_flush_streams, name="tau-exit-flush", daemon=True)
        flusher.start()
        flusher.join(_FLUSH_SECONDS)
    finally:
        os._exit(code)


class SignalGuard:
    """SIGINT, SIGTERM and SIGHUP end the process within a bounded time (see the module docstring)."""

    def __init__(self, grace: float = SIGNAL_GRACE_SECONDS) -> None:
        self.grace = grace
        self.count = 0
        self.code = 0
        self._previous: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_signal: Callable[[str], None] | None = None
        self._watchdog: threading.Timer | None = None
        self._listener: threading.Thread | None = None
        self._wakeup: tuple[int, int] | None = None  # (write end, the previous wakeup fd)
        self._python_handler = self._on_python_signal  # one object: ``getsignal`` is compared with it

    @property
    def installed(self) -> bool:
        return bool(self._previous)

    def install(self) -> bool:
        """Take over the three signals (main thread only); ``False`` where that is not possible."""
        if self._previous:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False
        for name in SIGNAL_EXIT_CODES:
            number = getattr(signal, name, None)
            if number is None:
                continue
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                self._previous[number] = signal.signal(number, self._python_handler)
        if self._previous:
            self._start_listener()
        return bool(self._previous)

    def restore(self) -> None:
        """Give the signals back to the handlers they had before :meth:`install`."""
        previous, self._previous = self._previous, {}
        for number, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, RuntimeError, TypeError):
                signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        if self._wakeup is not None:
            write, before = self._wakeup
            self._wakeup = None
            with contextlib.suppress(ValueError, OSError):
                signal.set_wakeup_fd(before)
            os.close(write)  # the listener reads the end of the pipe and stops
        self._listener = None

    def _start_listener(self) -> None:
        read, write = os.pipe()
        os.set_blocking(write, False)
        try:
            before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except (ValueError, OSError):  # the Python-level handlers do the work then
            os.close(read)
            os.close(write)
            return
        self._wakeup = (write, before)
        self._listener = threading.Thread(target=self._listen, args=(read,), name="tau-signals", daemon=True)
        self._listener.start()

    def _listen(self, read: int) -> None:
        try:
            while data := os.read(read, 64):
                for number in data:
                    # Ours while our handler is the signal's (a command such as tau batch may take
                    # a signal over for a while: its handler then decides).
                    if number in self._previous and signal.getsignal(number) is self._python_handler:
                        self._handle(number)
        except OSError:
            pass
        finally:
            os.close(read)

    def _on_python_signal(self, number: int, frame: Any) -> None:
        listener = self._listener
        if listener is None or not listener.is_alive():
            self._handle(number)  # no listener (the wakeup descriptor was taken): act here

    def attach(self, loop: asyncio.AbstractEventLoop, on_signal: Callable[[str], None]) -> None:
        """While a run is on: the first signal calls ``on_signal(name)`` in ``loop``."""
        self._loop, self._on_signal = loop, on_signal

    def detach(self) -> None:
        """The run is over: a signal now exits at once."""
        self._loop, self._on_signal = None, None

    def disarm(self) -> None:
        """Forget the signals so far and stop the watchdog (an embedding caller's run is over: its
        process goes on, and its next run starts afresh)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self.count = 0
        self.code = 0

    def _handle(self, number: int) -> None:
        name = signal.Signals(number).name
        code = SIGNAL_EXIT_CODES.get(name, 128 + number)
        self.count += 1
        self.code = self.code or code
        loop, on_signal = self._loop, self._on_signal
        if loop is None or on_signal is None or self.count > 1:
            _leave(code)
            return
        self._arm(code)
        try:
            loop.call_soon_threadsafe(on_signal, name)
        except RuntimeError:  # the loop is closed
            _leave(code)

    def _arm(self, code: int) -> None:
        if self._watchdog is None and self.grace >= 0:
            self._watchdog = threading.Timer(self.grace, _leave, (code,))
            self._watchdog.daemon = True
            self._watchdog.start()


def _leave(code: int) -> None:
    try:
        with contextlib.suppress(Exception):
            kill_tracked_groups()  # no shell command outlives tau
        exit_now(code)
    finally:
        os._exit(code)  # whatever failed on the way (a thread that could not start), tau ends


# The process's guard (the ``tau`` program installs it at start; a mode attaches its run to it).
guard = SignalGuard()


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
