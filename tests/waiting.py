"""Waiting in tests without depending on how fast the machine is (imported by tests as ``waiting``).

A test that acts "while a tool runs" (steer, queue, abort) must not race a ``sleep 0.3``: on a loaded
machine the sleep can end before the test gets to act. :class:`Gate` gives a bash command that waits
for a file the test creates once it has acted; :func:`until` polls for a condition instead of
sleeping a fixed time. Both give up only after a bound far above what a loaded machine needs.
"""

from __future__ import annotations

import asyncio
import shlex
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The wait is capped (1200 polls of 50 ms, about a minute) so that a test which fails before opening
# the gate cannot leave its shell behind for long.
_POLLS = 1200


class Gate:
    """One gate: ``command`` blocks until :meth:`open` is called."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / f"gate-{uuid.uuid4().hex[:8]}"

    def command(self, then: str = "") -> str:
        """The bash command that waits for the gate, then runs ``then``."""
        wait = f"for _ in $(seq {_POLLS}); do [ -e {shlex.quote(str(self.path))} ] && break; sleep 0.05; done"
        return f"{wait}; {then}" if then else wait

    def open(self) -> None:
        self.path.touch()


async def until(condition: Callable[[], Any], timeout: float = 60.0, what: str = "the condition") -> None:
    """Return once ``condition()`` is true; fail the test after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"{what} never became true in {timeout} s"
        await asyncio.sleep(0.005)
