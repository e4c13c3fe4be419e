"""Per-file serialization of mutations (pi's ``withFileMutationQueue``).

``edit`` and ``write`` calls that target the same file run one after the other, in the order they
asked; calls on different files (and every other tool) still run in parallel. The key is the
canonical path (symlinks resolved), so ``a.txt`` and a link to it share one queue. Extensions that
change files (Action Fusion wraps ``edit``/``write``) use the same primitive.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["FileMutationQueue", "mutation_key", "with_file_mutation_queue"]

T = TypeVar("T")


def mutation_key(path: str) -> str:
    """The canonical path used as the queue key: ``realpath`` when it resolves, else the absolute path."""
    absolute = os.path.abspath(path)
    try:
        return os.path.realpath(absolute, strict=True)
    except (FileNotFoundError, NotADirectoryError):
        return absolute


class FileMutationQueue:
    """FIFO locks keyed by canonical file path; a key's lock is dropped once nobody waits on it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    async def run(self, path: str, operation: Callable[[], Awaitable[T]]) -> T:
        """Run ``operation`` once every earlier mutation of the same file has finished."""
        key = mutation_key(path)
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:  # asyncio.Lock wakes waiters in FIFO order
                return await operation()
        finally:
            lock_now, users_now = self._locks[key]
            if users_now <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock_now, users_now - 1)

    def active_keys(self) -> list[str]:
        """Paths with a running or waiting mutation (for tests and diagnostics)."""
        return list(self._locks)


_default_queue = FileMutationQueue()


async def with_file_mutation_queue(path: str, operation: Callable[[], Awaitable[T]]) -> T:
    """Run ``operation`` serialized with every other mutation of ``path`` in this process."""
    return await _default_queue.run(path, operation)
