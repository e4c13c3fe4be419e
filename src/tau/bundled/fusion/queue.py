"""Action Fusion's per-file queue: one fused mutation and its command at a time per file.

The key is the real path of the deepest existing ancestor joined with the segments that do not
exist yet, so a file about to be created and a link to its directory share one slot. The queue is
this extension's own; the built-in tools keep their mutation queue inside the slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

__all__ = ["FusedFileQueue", "queue_key"]


def queue_key(absolute: str) -> str:
    """``realpath(deepest existing ancestor)`` + the missing segments."""
    missing: list[str] = []
    current = os.path.normpath(absolute)
    while not os.path.lexists(current):
        parent, name = os.path.split(current)
        if parent == current:
            break
        missing.append(name)
        current = parent
    return os.path.join(os.path.realpath(current), *reversed(missing))


class FusedFileQueue:
    """FIFO slots keyed by :func:`queue_key`; a key's lock is dropped once nobody holds or waits."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def slot(self, absolute: str) -> AsyncIterator[None]:
        key = queue_key(absolute)
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:  # asyncio.Lock wakes waiters in FIFO order
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def active_keys(self) -> list[str]:
        return list(self._locks)
