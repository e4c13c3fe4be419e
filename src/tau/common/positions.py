"""Where a value sits in a list, found at C level.

A run scans lists as long as a resumed session (tens of thousands of messages) for the few items of
one kind (its system messages, its custom entries). ``list.index`` finds each of them in one C-level
scan, about half of what an ``operator.eq`` per item through ``compress`` costs when they are rare.
"""

from __future__ import annotations

import operator
from itertools import compress, count, repeat
from typing import Any

__all__ = ["positions"]


def positions(items: list[Any], value: Any, start: int = 0) -> list[int]:
    """``[start + i for i, item in enumerate(items) if item == value]``."""
    found = items.count(value)
    if not found:
        return []
    if found * 8 > len(items):  # many: one pass of comparisons beats a Python step per item found
        return list(compress(count(start), map(operator.eq, items, repeat(value))))
    out: list[int] = []
    at = -1
    index = items.index
    for _ in range(found):
        at = index(value, at + 1)
        out.append(start + at)
    return out
