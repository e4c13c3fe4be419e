"""Running one shell command locally: spawn, stream, time out, abort (pi 1.6 ``createLocalShellOperations``).

The shell runs in its own session (``start_new_session``), stdout and stderr share one pipe, and
stdin is closed. After the shell exits, output is read until the pipe falls idle for 100 ms, so a
background process that keeps the pipe open cannot hang the call but still gets its late output in.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal as signals
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

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
READ_CHUNK = 64 * 1024


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
        process = await asyncio.create_subprocess_exec(
            config.shell,
            *config.args,
            command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        return await _Run(process, on_data, signal, timeout).wait()


class _Run:
    """One spawned shell: its output pump, its deadline and its abort hook."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> None:
        self.process = process
        self.on_data = on_data
        self.signal = signal
        self.timeout = timeout
        self.started = time.monotonic()
        self.exited_after: float | None = None
        self.timed_out = False
        self.exited_before_deadline_after: float | None = None

    def _kill(self) -> None:
        kill_process_group(self.process.pid)

    def _on_deadline(self) -> None:
        self.timed_out = True
        self.exited_before_deadline_after = self.exited_after
        # Also when the shell already exited: the group kill still reaches background processes.
        self._kill()

    async def wait(self) -> int | None:
        loop = asyncio.get_running_loop()
        track_group(self.process.pid)
        deadline = loop.call_later(self.timeout, self._on_deadline) if self.timeout is not None else None
        remove_abort = self.signal.add_callback(self._kill) if self.signal is not None else None
        try:
            await self._pump()
            returncode = self.process.returncode
        finally:
            untrack_group(self.process.pid)
            if deadline is not None:
                deadline.cancel()
            if remove_abort is not None:
                remove_abort()
        if self.signal is not None and self.signal.aborted:
            raise CommandAborted()
        exit_code = _exit_code(returncode)
        if self.timed_out:
            shell_exit = None
            if self.exited_before_deadline_after is not None and exit_code is not None:
                shell_exit = ShellExit(
                    exit_code, math.floor(self.exited_before_deadline_after * 10 + 0.5) / 10
                )
            raise CommandTimedOut(self.timeout or 0, shell_exit)
        return exit_code

    async def _pump(self) -> None:
        """Forward output until EOF, or until the pipe idles for the grace period after the shell exits."""
        stream = self.process.stdout
        assert stream is not None
        exit_task = asyncio.ensure_future(self.process.wait())
        read_task: asyncio.Future[bytes] = asyncio.ensure_future(stream.read(READ_CHUNK))
        try:
            while True:
                wait_for = {read_task} if exit_task.done() else {read_task, exit_task}
                grace = EXIT_STDIO_GRACE_SECONDS if exit_task.done() else None
                done, _ = await asyncio.wait(wait_for, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    return  # shell gone, pipe idle: a detached descendant holds it open
                if exit_task in done and self.exited_after is None:
                    self.exited_after = time.monotonic() - self.started
                if read_task in done:
                    data = read_task.result()
                    if not data:
                        await exit_task
                        if self.exited_after is None:
                            self.exited_after = time.monotonic() - self.started
                        return
                    self.on_data(data)
                    read_task = asyncio.ensure_future(stream.read(READ_CHUNK))
        finally:
            if not read_task.done():
                read_task.cancel()
            if not exit_task.done():
                self._kill()
                await exit_task


def _exit_code(returncode: int | None) -> int | None:
    """A signal death (negative return code) as the shell convention 128 + n."""
    if returncode is None:
        return None
    if returncode < 0:
        return 128 + (-returncode if -returncode in {s.value for s in signals.Signals} else 0)
    return returncode
