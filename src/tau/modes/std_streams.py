"""Standard streams that are closed at start or whose reader goes away.

``tau … <&-`` (or ``>&-``, ``2>&-``) starts tau with a standard descriptor closed: Python then sets
``sys.stdin`` (``stdout``, ``stderr``) to ``None``, and the first file tau opens would take the free
number, so a later write meant for stdout could land in a session file. :func:`prepare` puts
``/dev/null`` on every closed one first: a closed stdin reads as empty, a closed stderr swallows what
is written to it, and a closed stdout is reported (:func:`stdout_closed_message`): every command of
tau exists to print something, so it refuses to run blind.

A reader that goes away (``tau --mode json … | head -1``) makes a write fail with ``EPIPE``:
:func:`silence` points the stream at ``/dev/null`` (so no later flush fails again, the interpreter's
last one included) and the caller ends quietly with :data:`READER_GONE`, what a shell reports for a
program ended by ``SIGPIPE``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any

__all__ = ["READER_GONE", "closed_at_start", "prepare", "silence", "stdout_closed_message"]

# 128 + SIGPIPE: how a shell reports a program whose reader went away.
READER_GONE = 141

# The standard descriptors (0, 1, 2) that were closed when tau started.
closed_at_start: set[int] = set()


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def prepare() -> None:
    """Put ``/dev/null`` on each closed standard descriptor and give Python stream objects for them."""
    for fd in (0, 1, 2):
        if _is_open(fd):
            continue
        closed_at_start.add(fd)
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace")
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    if sys.stderr is None:
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )


def stdout_closed_message() -> str | None:
    """What to say when tau was started with stdout closed (``>&-``); ``None`` when it was not."""
    if 1 not in closed_at_start:
        return None
    return (
        "tau: standard output is closed (>&-): nothing tau prints could be read; "
        "send it to /dev/null to discard it (tau … >/dev/null)"
    )


def silence(stream: Any) -> None:
    """Point ``stream`` (a text or binary stream on a descriptor) at ``/dev/null``; what it still holds
    is dropped there. Does nothing for a stream without a descriptor (an ``io.BytesIO``)."""
    with contextlib.suppress(Exception):
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def silence_std_streams() -> None:
    """The reader of stdout (or stderr) is gone: nothing more reaches either, and no flush fails."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            silence(stream)
