"""Strict JSONL framing for the RPC streams (pi 1.6 ``modes/rpc/jsonl.ts``).

One record per line, lines end with LF. A trailing CR is stripped (clients on Windows), but no
other character ends a line: U+2028 and U+2029 are legal inside JSON strings, and Python's
``str.splitlines()`` (like Node's ``readline``) would split on them, so neither is used here.
"""

from __future__ import annotations

import codecs
import dataclasses
from typing import Any

from tau.common import jsjson

__all__ = ["LineSplitter", "serialize_line"]


def serialize_line(value: Any) -> bytes:
    """``value`` as one record: the bytes ``JSON.stringify`` gives, then LF.

    Objects that are not JSON data (a ``Model``, a dataclass an extension put into an event) are
    written as their ``to_json()`` or their fields, rather than failing the whole stream.
    """
    try:
        return jsjson.dumps(value) + b"\n"
    except TypeError:
        return jsjson.dumps(_plain(value)) + b"\n"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if callable(getattr(value, "to_json", None)):
        return _plain(value.to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    return str(value)


class LineSplitter:
    """Turns a byte stream into lines: feed chunks as they arrive, then :meth:`end` at end of input.

    UTF-8 sequences split across chunks are decoded whole; invalid bytes become U+FFFD, as Node's
    ``StringDecoder`` does. Every LF ends a line, empty lines included (the RPC mode answers an
    empty line with a parse error, as pi does).
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[str]:
        """The lines completed by ``chunk``."""
        self._buffer += self._decoder.decode(chunk)
        if "\n" not in self._buffer:
            return []
        *lines, self._buffer = self._buffer.split("\n")
        return [_strip_cr(line) for line in lines]

    def end(self) -> list[str]:
        """The unterminated last line, if any (input that ends without LF still counts)."""
        rest = self._buffer + self._decoder.decode(b"", final=True)
        self._buffer = ""
        return [_strip_cr(rest)] if rest else []


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line
