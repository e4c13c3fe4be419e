"""Output truncation shared by the tools: a line limit and a byte limit, whichever is hit first.

Counts follow pi 1.6 (``core/tools/truncate.ts``): lines are ``text.split("\\n")`` with a trailing
empty piece dropped, sizes are UTF-8 bytes, and head truncation never returns a partial line.
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypedDict

from tau.tools.base import ToolResult

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "MAX_SAFE_INTEGER",
    "CappedLines",
    "Notice",
    "TruncationResult",
    "finish_output",
    "format_size",
    "positive_floor",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
    "utf8_len",
]

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500  # characters (UTF-16 code units) of one grep line
MAX_SAFE_INTEGER = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER: "no line limit"


class TruncationResult(TypedDict):
    """pi's ``TruncationResult``, as it appears in a tool's ``details.truncation``."""

    content: str
    truncated: bool
    truncatedBy: Literal["lines", "bytes"] | None
    totalLines: int
    totalBytes: int
    outputLines: int
    outputBytes: int
    lastLinePartial: bool
    firstLineExceedsLimit: bool
    maxLines: int
    maxBytes: int


def utf8_len(text: str) -> int:
    """UTF-8 size of ``text`` as ``Buffer.byteLength`` counts it (a lone surrogate is 3 bytes)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB`` (pi's ``formatSize``)."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{_to_fixed1(size / 1024)}KB"
    return f"{_to_fixed1(size / (1024 * 1024))}MB"


def _to_fixed1(value: float) -> str:
    from decimal import ROUND_HALF_UP, Decimal  # imported on first use: most runs format no size

    # Number.prototype.toFixed(1) rounds the exact binary value half up, as Decimal does here.
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _split_lines(content: str) -> list[str]:
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


def _result(
    content: str, *, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int, **extra
) -> TruncationResult:
    result: TruncationResult = {
        "content": content,
        "truncated": False,
        "truncatedBy": None,
        "totalLines": total_lines,
        "totalBytes": total_bytes,
        "outputLines": total_lines,
        "outputBytes": total_bytes,
        "lastLinePartial": False,
        "firstLineExceedsLimit": False,
        "maxLines": max_lines,
        "maxBytes": max_bytes,
    }
    result.update(extra)  # type: ignore[typeddict-item]
    return result


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first lines that fit both limits (for file reads); never a partial line."""
    total_bytes = utf8_len(content)
    lines = _split_lines(content)
    limits = {
        "total_lines": len(lines),
        "total_bytes": total_bytes,
        "max_lines": max_lines,
        "max_bytes": max_bytes,
    }
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _result(content, **limits)
    if utf8_len(lines[0]) > max_bytes:
        return _result(
            "",
            **limits,
            truncated=True,
            truncatedBy="bytes",
            outputLines=0,
            outputBytes=0,
            firstLineExceedsLimit=True,
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = utf8_len(line) + (1 if index > 0 else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    output = "\n".join(kept)
    return _result(
        output,
        **limits,
        truncated=True,
        truncatedBy=truncated_by,
        outputLines=len(kept),
        outputBytes=utf8_len(output),
    )


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the last lines that fit both limits (for command output).

    When the very last line alone is over the byte limit, its end is kept (``lastLinePartial``).
    """
    total_bytes = utf8_len(content)
    lines = _split_lines(content)
    limits = {
        "total_lines": len(lines),
        "total_bytes": total_bytes,
        "max_lines": max_lines,
        "max_bytes": max_bytes,
    }
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _result(content, **limits)
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                tail = _utf8_tail(line, max_bytes)
                kept.append(tail)
                used = utf8_len(tail)
                partial = True
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    kept.reverse()
    output = "\n".join(kept)
    return _result(
        output,
        **limits,
        truncated=True,
        truncatedBy=truncated_by,
        outputLines=len(kept),
        outputBytes=utf8_len(output),
        lastLinePartial=partial,
    )


def _utf8_tail(text: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``text``, starting on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """``line`` cut to ``max_chars`` UTF-16 code units plus ``... [truncated]``, and whether it was cut.

    A surrogate pair is never split: when the cut would fall inside one, the whole character goes.
    """
    if len(line) <= max_chars and line.isascii():
        return line, False
    units = line.encode("utf-16-le", "surrogatepass")
    if len(units) // 2 <= max_chars:
        return line, False
    end = max(0, max_chars)
    head = units[: 2 * end]
    after = units[2 * end : 2 * end + 2]
    if (
        end
        and 0xD800 <= int.from_bytes(head[-2:], "little") <= 0xDBFF
        and 0xDC00 <= int.from_bytes(after, "little") <= 0xDFFF
    ):
        head = head[:-2]  # a high surrogate whose low half lies past the cut
    return head.decode("utf-16-le", "surrogatepass") + "... [truncated]", True


def positive_floor(value: Any, default: int) -> int:
    """pi's ``Math.max(1, Math.floor(value ?? default))`` for a count limit."""
    if value is None:
        return default
    if isinstance(value, float) and not math.isfinite(value):
        return MAX_SAFE_INTEGER if value > 0 else 1
    return max(1, math.floor(value))


# -- the result lines of the search tools (find, grep, ls) -------------------------------------------


class CappedLines:
    """A search tool's result lines: kept until they pass the byte cap, counted after it.

    Lines past :data:`DEFAULT_MAX_BYTES` would be cut anyway, so a search over a huge tree holds
    only what it can show; :meth:`truncation` still reports the totals of every line added.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.output_bytes = 0  # of every line, kept or not, each with a newline

    def add(self, line: str) -> None:
        if self.output_bytes - 1 <= DEFAULT_MAX_BYTES:
            self.lines.append(line)
        self.output_bytes += utf8_len(line) + 1
        self.count += 1

    def truncation(self) -> TruncationResult:
        """pi's head truncation of all the lines (no line limit, the byte cap)."""
        truncation = truncate_head("\n".join(self.lines), max_lines=MAX_SAFE_INTEGER)
        truncation["totalLines"] = self.count
        truncation["totalBytes"] = self.output_bytes - 1
        return truncation


# A notice at the end of a search tool's output: its text, and the ``details`` key and value it sets.
Notice = tuple[str, str, Any]


def finish_output(truncation: TruncationResult, limit: Notice | None, *after: Notice | None) -> ToolResult:
    """The output of a search tool: the kept lines, then pi's notices in brackets.

    ``limit`` (the tool's result limit was reached) comes first, then the byte cap's, then ``after``.
    """
    cap: Notice | None = None
    if truncation["truncated"]:
        cap = (f"{format_size(DEFAULT_MAX_BYTES)} limit reached", "truncation", truncation)
    notices: list[str] = []
    details: dict[str, Any] = {}
    for notice in (limit, cap, *after):
        if notice is not None:
            text, key, value = notice
            notices.append(text)
            details[key] = value
    output = truncation["content"]
    if notices:
        output += f"\n\n[{'. '.join(notices)}]"
    return ToolResult.text(output, details or None)
