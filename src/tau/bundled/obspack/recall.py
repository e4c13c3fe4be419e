"""``obs_recall``'s two reads of a stored object: a page from a byte offset, or a literal search.

Both work on an open file descriptor and read only what they need (``pread``), so a recall of a
multi-megabyte observation stays small in memory. Offsets and limits are UTF-8 bytes.

Both are bounded by what a recall costs (issue 25): what it returns stays in the context of every
later request, so a page is at most 8 KiB (a packed small result comes back whole, a large log in
pages), and a search hit is its lines with the whole lines around it that fit 200 bytes on each
side, not a page.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.extension import ToolAborted, ToolError

__all__ = [
    "MAX_RECALL_BYTES",
    "MAX_RECALL_LINES",
    "Page",
    "SearchResult",
    "check_query",
    "read_page",
    "render_page",
    "search",
]

MAX_RECALL_BYTES = 8 * 1024
MAX_RECALL_LINES = 200
HEADER_RESERVE_BYTES = 512
HEADER_LINES = 2
PAGE_BYTES = MAX_RECALL_BYTES - HEADER_RESERVE_BYTES
PAGE_LINES = MAX_RECALL_LINES - HEADER_LINES
CONTEXT_BYTES = 200  # whole lines of context on each side of a match's lines, as many as fit
MAX_MATCHES = 20
MAX_QUERY_BYTES = 256
_SCAN_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Page:
    """One page of an object: its text and where the next one starts."""

    data: bytes
    offset: int
    next_offset: int
    eof: bool

    @property
    def lines(self) -> int:
        if not self.data:
            return 0
        return self.data.count(b"\n") + (0 if self.data.endswith(b"\n") else 1)

    def details(self, obs_id: str) -> dict[str, Any]:
        return {
            "id": obs_id,
            "offset": self.offset,
            "bytes": len(self.data),
            "lines": self.lines,
            "nextOffset": self.next_offset,
            "eof": self.eof,
        }


def _back_to_code_point(data: bytes, end: int) -> int:
    while 0 < end < len(data) and data[end] & 0xC0 == 0x80:
        end -= 1
    return end


def read_page(fd: int, size: int, offset: int) -> Page:
    """Up to 198 lines or 7,680 bytes from ``offset``, never splitting a UTF-8 sequence."""
    if offset > size:
        raise ToolError(f"Offset {offset} exceeds observation size {size}")
    buffer = os.pread(fd, min(size - offset, PAGE_BYTES + 4), offset)
    end = min(len(buffer), PAGE_BYTES)
    newline = -1
    for _ in range(PAGE_LINES):
        newline = buffer.find(b"\n", newline + 1, end)
        if newline < 0:
            break
    if newline >= 0:
        end = newline + 1
    end = _back_to_code_point(buffer, end)
    chunk = buffer[:end]
    next_offset = offset + len(chunk)
    return Page(chunk, offset, next_offset, next_offset >= size)


def render_page(obs_id: str, page: Page) -> str:
    """The recall text: two header lines, then the page's bytes as they are."""
    header = (
        f"[obs_recall id={obs_id} offset={page.offset} next_offset={page.next_offset} "
        f"eof={'true' if page.eof else 'false'}]\n"
        f"[chunk_bytes={len(page.data)} chunk_lines={page.lines}; use next_offset to continue]"
    )
    text = f"{header}\n{page.data.decode('utf-8', 'replace')}"
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECALL_BYTES or lines > MAX_RECALL_LINES:
        raise ToolError("Recall output exceeded its hard limit")
    return text


# -- search -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchResult:
    matches: list[dict[str, Any]]
    offset: int
    next_offset: int
    eof: bool

    def details(self, obs_id: str, query: str) -> dict[str, Any]:
        return {
            "id": obs_id,
            "query": query,
            "offset": self.offset,
            "matches": self.matches,
            "nextOffset": self.next_offset,
            "eof": self.eof,
        }


def check_query(query: Any) -> bytes:
    """The query's UTF-8 bytes; raises a :class:`ToolError` naming the rule it breaks."""
    if not isinstance(query, str) or query == "":
        raise ToolError("obs_recall query must not be empty")
    try:
        data = query.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("obs_recall query must be well-formed Unicode (no lone surrogates)") from None
    if len(data) > MAX_QUERY_BYTES:
        raise ToolError(f"obs_recall query must be at most {MAX_QUERY_BYTES} UTF-8 bytes, got {len(data)}")
    return data


def _check_abort(signal: Any) -> None:
    if signal is not None and getattr(signal, "aborted", False):
        raise ToolAborted("Observation search aborted")


async def _newlines_before(fd: int, end: int, signal: Any) -> int:
    """Newlines in ``[0, end)``, read in pieces with an abort check (and a yield) between them."""
    count, position = 0, 0
    while position < end:
        _check_abort(signal)
        piece = os.pread(fd, min(_SCAN_CHUNK, end - position), position)
        if not piece:
            break
        count += piece.count(b"\n")
        position += len(piece)
        await asyncio.sleep(0)
    _check_abort(signal)
    return count


def _context(fd: int, size: int, start: int, end: int) -> dict[str, Any]:
    """The match's lines and the whole lines around them that fit :data:`CONTEXT_BYTES` bytes on
    each side; a line longer than that is cut there, on a code point boundary."""
    low, high = max(0, start - CONTEXT_BYTES), min(size, end + CONTEXT_BYTES)
    window = os.pread(fd, high - low + 4, low)
    span, match_start, match_end = high - low, start - low, end - low
    newline = window.rfind(b"\n", 0, match_start)  # the match's line start, if within reach
    if newline >= 0:
        first = newline + 1
        while first > 0 and (earlier := window.rfind(b"\n", 0, first - 1)) >= 0:  # earlier whole lines
            first = earlier + 1
        if low == 0:
            first = 0  # the window starts at the file's start: its first line is whole too
    else:
        first = 0 if low == 0 else _code_point_after(window, 0, match_start)
    newline = window.find(b"\n", match_end, span)  # the match's line end, if within reach
    if newline >= 0:
        last = newline
        while (later := window.find(b"\n", last + 1, span)) >= 0:  # later whole lines that fit
            last = later
        if high == size:
            last = span  # the window ends at the file's end: its last line is whole too
    else:
        last = span if high == size else _code_point_before(window, span, match_end)
    if high == size and last > match_end and window[last - 1 : last] == b"\n":
        last -= 1  # the file's final line break ends the last line
    return {
        "context": window[first:last].decode("utf-8", "replace"),
        "contextStart": low + first,
        "contextEnd": low + last,
    }


def _code_point_after(window: bytes, position: int, limit: int) -> int:
    """``position``, moved forward (not past ``limit``) to the start of a code point."""
    while position < limit and window[position] & 0xC0 == 0x80:
        position += 1
    return position


def _code_point_before(window: bytes, position: int, floor: int) -> int:
    """``position``, moved back (not before ``floor``) to the start of a code point."""
    while position > floor and position < len(window) and window[position] & 0xC0 == 0x80:
        position -= 1
    return position


def _serialized_size(obs_id: str, query: str, offset: int, matches: list[dict[str, Any]]) -> int:
    probe = {
        "id": obs_id,
        "query": query,
        "offset": offset,
        "matches": matches,
        "nextOffset": 0,
        "eof": False,
    }
    return len(jsjson.dumps(probe)) + 32  # room for the real nextOffset digits


async def search(
    fd: int, size: int, obs_id: str, query: str, offset: int, signal: Any = None
) -> SearchResult:
    """Case-sensitive literal byte search from ``offset`` (an inclusive match start); matches overlap.

    At most 20 matches, and the JSON result fits 8 KiB; ``next_offset`` continues without
    skipping or repeating a match start.
    """
    needle = check_query(query)
    if offset > size:
        raise ToolError(f"Offset {offset} exceeds observation size {size}")
    line = await _newlines_before(fd, offset, signal) + 1
    counted = offset
    matches: list[dict[str, Any]] = []
    position = offset
    while position < size:
        _check_abort(signal)
        span = min(_SCAN_CHUNK, size - position)
        buffer = os.pread(fd, span + len(needle) - 1, position)
        found = buffer.find(needle)
        while 0 <= found < span:
            start = position + found
            if len(matches) == MAX_MATCHES:
                return SearchResult(matches, offset, start, False)
            line += buffer.count(b"\n", counted - position, found)
            counted = start
            match = {"byteOffset": start, "byteEnd": start + len(needle), "line": line}
            match.update(_context(fd, size, start, start + len(needle)))
            if _serialized_size(obs_id, query, offset, [*matches, match]) > MAX_RECALL_BYTES:
                return SearchResult(matches, offset, start, False)
            matches.append(match)
            found = buffer.find(needle, found + 1)
        line += buffer.count(b"\n", counted - position, span)
        counted = position + span
        position += span
        await asyncio.sleep(0)
    return SearchResult(matches, offset, size, True)
