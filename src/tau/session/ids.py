"""Identifiers pi writes: 8-hex entry ids and UUIDv7 session ids (generated here, no dependency)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Container

from tau.common.lazy_regex import lazy_pattern

__all__ = ["SESSION_ID_PATTERN", "check_session_id", "new_entry_id", "uuidv7"]

SESSION_ID_PATTERN = lazy_pattern(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

_ATTEMPTS = 100


def new_entry_id(taken: Container[object]) -> str:
    """A random 8-hex id not in ``taken``; after 100 collisions a full random UUID (as pi does)."""
    for _ in range(_ATTEMPTS):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def check_session_id(session_id: str) -> None:
    """Refuse a custom session id that pi would refuse (it becomes part of a file name)."""
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.fullmatch(session_id):
        raise ValueError(
            f"invalid session id {session_id!r}: use letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )


class _V7Generator:
    """RFC 9562 UUIDv7 with a 42-bit counter (seeded at random) after the millisecond timestamp.

    The timestamp never goes backwards within the process and the counter grows by one per id, so ids
    made by one process sort in creation order even within one millisecond.
    """

    _COUNTER_BITS = 42

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = 0
        self._counter = int.from_bytes(os.urandom(6), "big") >> (48 - self._COUNTER_BITS + 1)

    def __call__(self) -> str:
        with self._lock:
            ms = max(time.time_ns() // 1_000_000, self._last_ms)
            self._last_ms = ms
            self._counter = (self._counter + 1) % (1 << self._COUNTER_BITS)
            counter = self._counter
        tail = int.from_bytes(os.urandom(4), "big")  # 32 random bits
        rand_a = counter >> 30  # 12 bits
        rand_b = ((counter & ((1 << 30) - 1)) << 32) | tail  # 62 bits
        value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
        return str(uuid.UUID(int=value))


uuidv7 = _V7Generator()
"""Generate a UUIDv7 string (``01a229b0-1098-7791-86e1-b2bdf8139d0e``)."""
