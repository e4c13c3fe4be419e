"""Where each complete line of a session file is, by entry id, found by reading it in bounded chunks.

Only LF-terminated lines count (a last line without LF is not committed yet). A CR before the LF is
not part of the line. Lines longer than ``max_parsed`` are never held whole: they stream through a
SHA-256, and their id is taken from the canonical layout (first field after ``type``, or the end of a
``custom``/``custom_message`` line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from tau.common import jsjson
from tau.common.lazy_regex import lazy_pattern

__all__ = ["Line", "LineIndex"]

OnLine = Callable[[str, "bytes | bytearray"], None]

_CR = 0x0D
# Where an entry line names its id: right after its type (most entries), or at the end (custom and
# custom_message entries write their payload first). Values with escapes fall back to parsing.
_ID_FIRST = lazy_pattern(rb'\{"type":"[^"\\]*","id":"([^"\\]*)"')
_ID_LAST = lazy_pattern(rb',"id":"([^"\\]*)","parentId":(?:null|"[^"\\]*"),"timestamp":"[^"\\]*"\}\Z')
_EDGE = 512  # bytes kept from each end of an oversized line, to find its id


class Line:
    """Where one complete line is: offset and length without its line end; a digest when oversized."""

    __slots__ = ("digest", "offset", "size")

    def __init__(self, offset: int, size: int, digest: bytes | None) -> None:
        self.offset = offset
        self.size = size
        self.digest = digest


class _Oversized:
    """A line longer than MAX_PARSED, hashed as it streams past."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.size = 0
        self.hash = hashlib.sha256()
        self.head = b""
        self.tail = b""
        self.pending_cr = False  # the last byte seen is CR (held back: it may be a CRLF line end)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        data = bytes(data)
        if self.pending_cr:
            self.hash.update(b"\r")
            self.size += 1
        self.pending_cr = data.endswith(b"\r")
        body = data[:-1] if self.pending_cr else data
        self.hash.update(body)
        self.size += len(body)
        if len(self.head) < _EDGE:
            self.head = (self.head + body)[:_EDGE]
        self.tail = (self.tail + body)[-_EDGE:]


class LineIndex:
    """The complete lines of one file seen so far: the header line and entry lines by id."""

    def __init__(self, chunk: int, max_parsed: int) -> None:
        self.chunk = chunk
        self.max_parsed = max_parsed
        self.header: Line | None = None
        self.header_seen = False
        self.lines: dict[str, list[Line]] = {}

    def get(self, entry_id: str) -> list[Line]:
        return self.lines.get(entry_id, [])

    def scan(
        self, read: Callable[[int, int], bytes], start: int, end: int, on_line: OnLine | None = None
    ) -> int:
        """Index the complete lines in ``[start, end)``, read through ``read(size, offset)`` in chunks.

        ``on_line(entry_id, raw)`` sees each new line up to ``max_parsed`` bytes while it is in hand.
        Returns where the last complete line ends.
        """
        position = start
        line_start = start
        partial = bytearray()  # the start of a line that continues in the next chunk
        oversized: _Oversized | None = None
        committed = start
        while position < end:
            data = read(min(self.chunk, end - position), position)
            if not data:
                break
            cursor = 0
            find = data.find
            while (newline := find(b"\n", cursor)) >= 0:
                if oversized is not None:
                    oversized.feed(memoryview(data)[cursor:newline])
                    self._index_oversized(oversized)
                    oversized = None
                elif partial:
                    partial += memoryview(data)[cursor:newline]
                    self._index(line_start, partial, 0, len(partial), on_line)
                    partial = bytearray()
                else:
                    self._index(line_start, data, cursor, newline, on_line)
                cursor = newline + 1
                line_start = committed = position + cursor
            if oversized is not None:
                oversized.feed(memoryview(data)[cursor:])
            else:
                partial += memoryview(data)[cursor:]
                if len(partial) > self.max_parsed:
                    oversized = _Oversized(line_start)
                    oversized.feed(partial)
                    partial = bytearray()
            position += len(data)
        return committed  # a last line without LF is not committed: it is read again next time

    def _index(
        self, offset: int, data: bytes | bytearray, start: int, end: int, on_line: OnLine | None
    ) -> None:
        """Index the line ``data[start:end]`` (without its LF), which sits at ``offset`` in the file."""
        if end > start and data[end - 1] == _CR:
            end -= 1
        if end - start > self.max_parsed:
            oversized = _Oversized(offset)
            oversized.feed(memoryview(data)[start:end])
            self._index_oversized(oversized)
            return
        line = Line(offset, end - start, None)
        if not self.header_seen:
            if data[start:end].strip():  # the header is the first line that is not blank
                self.header_seen = True
                self.header = line
            return
        entry_id = _line_id(data, start, end)
        if entry_id is None:
            return
        self.lines.setdefault(entry_id, []).append(line)
        if on_line is not None:
            on_line(entry_id, data[start:end])

    def _index_oversized(self, line: _Oversized) -> None:
        if not self.header_seen:
            self.header_seen = True  # an oversized first line: no header this check can read
            return
        found = _ID_FIRST.match(line.head) or _ID_LAST.search(line.tail)
        if found is None:
            return  # not in the canonical format: no entry can be verified against it
        record = Line(line.offset, line.size, line.hash.digest())
        self.lines.setdefault(found.group(1).decode("utf-8", "replace"), []).append(record)


def _line_id(data: bytes | bytearray, start: int, end: int) -> str | None:
    found = _ID_FIRST.match(data, start, end) or _ID_LAST.search(data, start, end)
    if found is not None:
        try:
            return found.group(1).decode()
        except UnicodeDecodeError:
            pass
    raw = bytes(data[start:end])
    if not raw.strip():
        return None
    try:
        value = jsjson.loads(raw)
    except ValueError:
        return None
    entry_id = value.get("id") if isinstance(value, dict) else None
    return entry_id if isinstance(entry_id, str) else None
