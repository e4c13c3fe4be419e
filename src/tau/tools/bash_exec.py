"""Running one shell command locally: spawn, stream, time out, abort (pi 1.6 ``createLocalShellOperations``).

The shell runs in its own session (``start_new_session``) with stdin closed. stdout and stderr are
two pipes, each chunk passed on as it arrives (pi streams them the same way: a write to stderr is
never merged into a stdout chunk). After the shell exits, output is read until the pipes fall idle
for 100 ms, so a background process that keeps a pipe open cannot hang the call but still gets its
late output in.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal as signals
import subprocess
import time
from collections.abc import Callable
from typing import Protocol

from tau.common.dataclass import dataclass
from tau.common.jsjson import js_number
from tau.llm.stream import AbortSignal
from tau.tools.shell import kill_process_group, resolve_shell, track_group, untrack_group

__all__ = [
    "BashOperations",
    "CommandAborted",
    "CommandTimedOut",
    "LocalBashOperations",
    "resolve_timeout",
]

MAX_TIMEOUT_MS = 2_147_483_647
EXIT_STDIO_GRACE_SECONDS = 0.1


class CommandAborted(Exception):
    """The call's signal aborted the command."""


@dataclass
class ShellExit:
    exit_code: int
    after_seconds: float


class CommandTimedOut(Exception):
    """The command ran past its timeout. ``shell_exit`` is set when the shell itself had exited and
    only its background processes kept the output open."""

    def __init__(self, timeout: float, shell_exit: ShellExit | None = None) -> None:
        super().__init__(f"timeout:{js_number(timeout)}")
        self.timeout = timeout
        self.shell_exit = shell_exit


def resolve_timeout(timeout: float | None) -> float | None:
    """``timeout`` in seconds, checked as pi checks it."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError("Invalid timeout: must be a finite number of seconds")
    if timeout * 1000 > MAX_TIMEOUT_MS:
        raise ValueError(f"Invalid timeout: maximum is {js_number(MAX_TIMEOUT_MS / 1000)} seconds")
    return timeout


class BashOperations(Protocol):
    """Pluggable command execution (a remote shell, a sandbox). Returns the exit code (a signal
    death as 128 + n; ``None`` when there is none); raises :class:`CommandAborted` or
    :class:`CommandTimedOut`."""

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: dict[str, str],
    ) -> int | None: ...


class LocalBashOperations:
    """Runs commands with the configured shell on this machine."""

    def __init__(self, shell_path: str | None = None, shell_name: str = "bash") -> None:
        self.shell_path = shell_path
        self.shell_name = shell_name

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: dict[str, str],
    ) -> int | None:
        timeout = resolve_timeout(timeout)
        if signal is not None and signal.aborted:
            raise CommandAborted()
        config = resolve_shell(self.shell_path)
        if not os.path.exists(cwd):
            raise FileNotFoundError(
                f"Working directory does not exist: {cwd}\nCannot execute {self.shell_name} commands."
            )
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _ShellProtocol(on_data),
            config.shell,
            *config.args,
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            return await _Run(transport, protocol, signal, timeout).wait()
        finally:
            transport.close()


class _ShellProtocol(asyncio.SubprocessProtocol):
    """Output and exit of the shell, observed separately.

    ``Process.wait()`` of asyncio (3.11) also waits for the pipes to close, which a detached
    background process can hold open forever; the protocol's ``process_exited`` does not.
    """

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        self.on_data = on_data
        self.started = time.monotonic()
        self.exited_after: float | None = None
        self.exited = asyncio.Event()
        self.output_closed = asyncio.Event()
        self.data_arrived = asyncio.Event()
        self.accepting = True
        self._open_pipes = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if self.accepting:
            self.on_data(data)
            self.data_arrived.set()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open_pipes.discard(fd)
        if not self._open_pipes:
            self.output_closed.set()

    def process_exited(self) -> None:
        self.exited_after = time.monotonic() - self.started
        self.exited.set()


async def _first(*events: asyncio.Event, timeout: float | None = None) -> bool:
    """Wait until one of ``events`` is set; ``False`` on timeout."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    return bool(done)


class _Run:
    """One spawned shell: its output, its deadline and its abort hook."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        protocol: _ShellProtocol,
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> None:
        self.transport = transport
        self.protocol = protocol
        self.pid = transport.get_pid()
        self.signal = signal
        self.timeout = timeout
        self.timed_out = False
        self.exited_before_deadline_after: float | None = None

    def _kill(self) -> None:
        kill_process_group(self.pid)

    def _on_deadline(self) -> None:
        self.timed_out = True
        self.exited_before_deadline_after = self.protocol.exited_after
        # Also when the shell already exited: the group kill still reaches background processes.
        self._kill()

    async def wait(self) -> int | None:
        loop = asyncio.get_running_loop()
        track_group(self.pid)
        deadline = loop.call_later(self.timeout, self._on_deadline) if self.timeout is not None else None
        remove_abort = self.signal.add_callback(self._kill) if self.signal is not None else None
        try:
            await self._drain()
        except BaseException:
            self._kill()
            raise
        finally:
            self.protocol.accepting = False
            untrack_group(self.pid)
            if deadline is not None:
                deadline.cancel()
            if remove_abort is not None:
                remove_abort()
        if self.signal is not None and self.signal.aborted:
            raise CommandAborted()
        exit_code = _exit_code(self.transport.get_returncode())
        if self.timed_out:
            shell_exit = None
            if self.exited_before_deadline_after is not None and exit_code is not None:
                after = math.floor(self.exited_before_deadline_after * 10 + 0.5) / 10
                shell_exit = ShellExit(exit_code, after)
            raise CommandTimedOut(self.timeout or 0, shell_exit)
        return exit_code

    async def _drain(self) -> None:
        """Until the shell exited and its output closed, or fell idle for the grace period after the exit."""
        protocol = self.protocol
        await _first(protocol.exited, protocol.output_closed)
        if protocol.output_closed.is_set():
            await protocol.exited.wait()
            return
        while not protocol.output_closed.is_set():
            protocol.data_arrived.clear()
            if not await _first(
                protocol.output_closed, protocol.data_arrived, timeout=EXIT_STDIO_GRACE_SECONDS
            ):
                return  # shell gone, pipe idle: a detached descendant holds it open


def _exit_code(returncode: int | None) -> int | None:
    """A signal death (negative return code) as the shell convention 128 + n."""
    if returncode is None:
        return None
    if returncode < 0:
        return 128 + (-returncode if -returncode in {s.value for s in signals.Signals} else 0)
    return returncode
