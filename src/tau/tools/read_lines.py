"""Selecting the lines ``read`` shows, with the file's line count (pi 1.6 ``read.ts``).

Line counts follow ``text.split("\\n")``. A whole-file path keeps pi's array-slice semantics for
unusual ranges (fractional or negative); integral ranges stream the file in chunks and keep only the
lines ``truncate_head`` can show, so memory does not grow with the file.
"""

from __future__ import annotations

import codecs
import math
import os
import stat
from collections.abc import Callable, Iterator

from tau.common.dataclass import dataclass
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_head, utf8_len

__all__ = [
    "Selection",
    "is_streamable_range",
    "read_chunks",
    "select_from_chunks",
    "select_from_text",
    "shown_lines",
]

CHUNK_SIZE = 64 * 1024


@dataclass
class Selection:
    total_file_lines: int
    truncation: TruncationResult
    first_line_bytes: int  # of the first selected line, for the notice when it alone is over the limit


def is_streamable_range(offset: float | None, limit: float | None) -> bool:
    return (offset is None or float(offset).is_integer()) and (
        limit is None or (float(limit).is_integer() and limit >= 0)
    )


def _slice_bounds(length: int, start: float, end: float | None) -> tuple[int, int]:
    """The indices ``Array.prototype.slice(start, end)`` takes, as JavaScript converts fractional and
    negative bounds; ``end >= start`` (an empty slice ends where it starts)."""

    def bound(value: float) -> int:
        index = math.trunc(value)
        return max(length + index, 0) if index < 0 else min(index, length)

    begin = bound(start)
    stop = length if end is None else bound(end)
    return begin, max(begin, stop)


def _js_slice(items: list[str], start: float, end: float | None) -> list[str]:
    """``Array.prototype.slice`` with JavaScript's integer conversion of fractional and negative bounds."""
    begin, stop = _slice_bounds(len(items), start, end)
    return items[begin:stop]


def shown_lines(start: float, limit: float | None, total: int) -> tuple[int, int]:
    """``(first, end)``: the 0-based index of the first line ``read`` selects and the index after its
    last, for any ``start``/``limit`` the model sends (fractional or negative ones included)."""
    end = None if limit is None else min(start + limit, total)
    return _slice_bounds(total, start, end)


def select_from_text(text: str, start: float, limit: float | None) -> Selection:
    """The selection from a whole decoded file."""
    lines = text.split("\n")
    end = None if limit is None else min(start + limit, len(lines))
    truncation = truncate_head("\n".join(_js_slice(lines, start, end)))
    first = utf8_len(_js_slice(lines, start, None)[0]) if truncation["firstLineExceedsLimit"] else 0
    return Selection(len(lines), truncation, first)


def read_chunks(path: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """A regular file up to its size when opened (a growing file still ends); others until EOF."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        remaining = info.st_size if stat.S_ISREG(info.st_mode) and info.st_size > 0 else None
        while remaining is None or remaining > 0:
            chunk = handle.read(chunk_size if remaining is None else min(chunk_size, remaining))
            if not chunk:
                return
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk


class _Selector:
    """Feeds decoded text line by line; stores selected lines only while ``truncate_head`` could show them."""

    def __init__(self, start: int, limit: int | None) -> None:
        self.start = start
        self.end = math.inf if limit is None else start + limit
        self.stored: list[str] = []
        self.stored_bytes = 0
        self.past_caps = False
        self.line = 0
        self.selected_lines = 0
        self.selected_bytes = 0
        self.first_line_bytes = 0
        self.last_line_empty = True
        self.pieces: list[str] | None = []
        self.line_bytes = 0
        self.line_has_text = False

    def _append(self, piece: str) -> None:
        self.line_has_text = True
        if self.pieces is None:
            return
        # A line over the byte cap is never shown: never keep all of a huge line.
        if self.line_bytes <= DEFAULT_MAX_BYTES:
            self.pieces.append(piece)
        self.line_bytes += utf8_len(piece)

    def _finish_line(self) -> None:
        if self.pieces is not None:
            if self.selected_lines == 0:
                self.first_line_bytes = self.line_bytes
            # Store one line past the caps: truncate_head ignores a trailing empty line.
            if len(self.stored) > DEFAULT_MAX_LINES or self.stored_bytes > DEFAULT_MAX_BYTES:
                self.past_caps = True
            text = "".join(self.pieces)
            self.stored_bytes += utf8_len(text) + (1 if self.stored else 0)
            self.stored.append(text)
        self.selected_lines += 1
        self.last_line_empty = not self.line_has_text
        self.pieces = None if self.past_caps else []
        self.line_bytes = 0
        self.line_has_text = False

    def feed(self, text: str) -> None:
        position = 0
        selection_start = -1
        while True:
            selected = self.start <= self.line < self.end
            if selected and selection_start == -1:
                selection_start = position
            newline = text.find("\n", position)
            stop = len(text) if newline == -1 else newline
            if selected and stop > position:
                self._append(text[position:stop])
            if newline == -1:
                break
            if selected:
                self._finish_line()
                if self.line + 1 == self.end:
                    self.selected_bytes += utf8_len(text[selection_start:newline])
                    selection_start = -1
            self.line += 1
            position = newline + 1
        if selection_start != -1:
            self.selected_bytes += utf8_len(text[selection_start:])

    def close(self) -> Selection:
        if self.start <= self.line < self.end:
            self._finish_line()
        truncation = truncate_head("\n".join(self.stored))
        truncation["totalLines"] = (
            0 if self.selected_bytes == 0 else self.selected_lines - int(self.last_line_empty)
        )
        truncation["totalBytes"] = self.selected_bytes
        first = self.first_line_bytes if truncation["firstLineExceedsLimit"] else 0
        return Selection(self.line + 1, truncation, first)


def select_from_chunks(
    chunks: Iterator[bytes], start: int, limit: int | None, check_abort: Callable[[], None] | None = None
) -> Selection:
    """The selection from a file read in chunks (equal to :func:`select_from_text` on the whole text)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    selector = _Selector(start, limit)
    for chunk in chunks:
        if check_abort is not None:
            check_abort()
        selector.feed(decoder.decode(chunk))
    selector.feed(decoder.decode(b"", final=True))
    return selector.close()
