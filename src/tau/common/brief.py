"""A bounded ``repr`` for messages that quote a value read from a file.

A session line may hold anything: a "role" that is a list of a million items, a name nested a thousand
levels deep. ``repr`` of such a value is megabytes long, or raises ``RecursionError``; :func:`brief`
keeps a few items and levels and about 80 characters of each string, so a reported problem stays one
readable line.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["brief", "clip", "label"]

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 5


def brief(value: Any) -> str:
    """``repr(value)``, shortened with ``...`` past a few items, levels and about 80 characters."""
    return _REPR.repr(value)


def clip(text: str, limit: int = 200) -> str:
    """``text``, or its first ``limit`` characters and how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def label(value: Any) -> str:
    """A value read from a file shown as a name: a string as it is (clipped), anything else :func:`brief`."""
    return clip(value) if isinstance(value, str) else brief(value)
