"""One session line: parse as ``JSON.parse`` would, serialize as ``JSON.stringify`` does.

pi splits a session file on LF only and skips lines that do not parse. Lines hold UTF-8; pi decodes
invalid bytes as U+FFFD and ``JSON.parse`` accepts lone surrogate escapes (``"\\ud800"``), which
orjson refuses, so those lines take a slower, tolerant path.
"""

from __future__ import annotations

from typing import Any

import orjson

from tau.common import jsjson
from tau.common.lazy_regex import lazy_pattern

__all__ = ["FAST_PREFIX", "MAX_DEPTH", "encode", "parse"]

# orjson's own limit; lines it refuses as too deep are refused by the slower parser too.
MAX_DEPTH = jsjson.MAX_DEPTH

# The start of every v3 line pi writes for a tree entry, except custom and custom_message ones (their
# payload comes first). Values with escapes never match: those lines are parsed in full.
FAST_PREFIX = lazy_pattern(rb'\{"type":"([^"\\]*)","id":"([^"\\]*)","parentId":(?:null|"([^"\\]*)")')


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(raw: bytes) -> Any:
    """The JSON value of one line; raises ``ValueError`` when the line is not JSON.

    A value is nested at most :data:`MAX_DEPTH` levels, whichever parser reads it, so every
    consumer of session values knows how deep it may have to go.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    return jsjson.loads_text(raw.decode("utf-8", "replace"), parse_constant=_reject_constant)


def encode(entry: Any) -> bytes:
    """The line pi would write for ``entry`` (``JSON.stringify``), without the trailing LF."""
    return jsjson.dumps(entry)
