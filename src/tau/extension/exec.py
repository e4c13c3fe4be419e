"""``tau.exec``: run a program without a shell and collect its output (pi's ``execCommand``).

A timeout, an abort or output beyond ``max_buffer`` stops the program (SIGTERM, then SIGKILL five
seconds later) and sets ``killed``; a program ended by a signal reports ``128 + signal number``; one
that cannot start reports code 1 with the error in ``stderr``.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal as signals
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["DEFAULT_MAX_BUFFER", "ExecResult", "exec_command"]

DEFAULT_MAX_BUFFER = 256 * 1024 * 1024
FORCE_KILL_DELAY = 5.0
_CHUNK = 64 * 1024


@dataclass
class ExecResult:
    """What a program did.

    Attributes:
        stdout, stderr: Decoded as UTF-8 (invalid bytes replaced).
        code: The exit code, or 128 + the signal number when a signal ended it.
        killed: tau stopped it (timeout, abort, or output over ``max_buffer``).
        truncated: Output went over ``max_buffer``; ``stdout``/``stderr`` are incomplete and ``code`` is not 0.
    """

    stdout: str
    stderr: str
    code: int
    killed: bool
    truncated: bool


class _Run:
    def __init__(self, proc: asyncio.subprocess.Process, max_buffer: int) -> None:
        self.proc = proc
        self.max_buffer = max_buffer
        self.taken = 0
        self.killed = False
        self.truncated = False
        self._force: asyncio.TimerHandle | None = None

    def kill(self) -> None:
        if self.killed:
            return
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signals.SIGTERM)
        self._force = asyncio.get_running_loop().call_later(FORCE_KILL_DELAY, self._force_kill)

    def _force_kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def cancel_force_kill(self) -> None:
        if self._force is not None:
            self._force.cancel()

    def take(self, data: bytes) -> bytes:
        """The part of ``data`` inside the combined cap; going over it stops the program."""
        if self.truncated:
            return b""
        remaining = self.max_buffer - self.taken
        if len(data) <= remaining:
            self.taken += len(data)
            return data
        self.truncated = True
        self.kill()
        return data[: max(remaining, 0)]

    async def pump(self, stream: asyncio.StreamReader | None) -> str:
        if stream is None:
            return ""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        parts = []
        while chunk := await stream.read(_CHUNK):
            kept = self.take(chunk)
            if kept:
                parts.append(decoder.decode(kept))
            if self.truncated:
                break
        if not self.truncated:
            parts.append(decoder.decode(b"", final=True))
        return "".join(parts)


def _exit_code(returncode: int | None) -> int:
    if returncode is None:
        return 1
    return 128 - returncode if returncode < 0 else returncode


async def exec_command(
    command: str,
    args: list[str] | tuple[str, ...] = (),
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    signal: Any = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
) -> ExecResult:
    """Run ``command`` with ``args`` (no shell) in ``cwd``; ``timeout`` in seconds; ``signal`` an AbortSignal."""
    if not isinstance(max_buffer, int) or max_buffer < 0:
        raise ValueError(f"max_buffer must be a non-negative integer number of bytes, got {max_buffer!r}")
    try:
        proc = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=None if cwd is None else os.fspath(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:  # a failed start is a failed execution, not a host error (pi)
        return ExecResult("", str(exc), 1, False, False)
    run = _Run(proc, max_buffer)
    remove = signal.add_callback(run.kill) if signal is not None else None
    timer = asyncio.get_running_loop().call_later(timeout, run.kill) if timeout and timeout > 0 else None
    try:
        stdout, stderr = await asyncio.gather(run.pump(proc.stdout), run.pump(proc.stderr))
        if run.truncated and proc.returncode is None:
            run.kill()
        returncode = await proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        if remove is not None:
            remove()
        run.cancel_force_kill()
    code = _exit_code(returncode)
    if run.truncated and code == 0:
        code = 1
    return ExecResult(stdout, stderr, code, run.killed, run.truncated)
