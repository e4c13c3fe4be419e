"""What an extractor reads (a log split in lines) and what it finds (failures, summaries, warnings).

Lines are kept twice: ``raw`` as the log has it (a quote is always a piece of the raw text, so it
is verbatim) and ``plain`` without ANSI colour codes and trailing ``\\r`` (what the patterns read).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import field

from tau.common.dataclass import dataclass

__all__ = ["ANSI", "Failure", "Found", "Log", "Span", "signature"]

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|‘[^’]*’|`[^`]*`")


@dataclass(frozen=True)
class Span:
    """Lines ``first`` to ``last`` (0-based, inclusive) of the log: one quote."""

    first: int
    last: int

    @classmethod
    def at(cls, index: int) -> Span:
        return cls(index, index)


@dataclass
class Failure:
    """One failing test, type error, lint finding or compiler error.

    Attributes:
        ident: The test id or ``file:line`` as the tool names it (for grouping; never quoted itself).
        target: The lines naming it (a test id line, a diagnostic line).
        error: Its first assertion or error line (``None`` when ``target`` already is that line).
        locations: ``file:line`` lines, the most useful first (where it was raised, then the test).
        detail: Lines worth showing for the first failure of a kind (expected/received values).
        severity: ``error`` or ``warning`` (a warning is quoted only when there is room).
    """

    ident: str
    target: Span | None = None
    error: Span | None = None
    locations: list[Span] = field(default_factory=list)
    detail: Span | None = None
    severity: str = "error"


@dataclass
class Found:
    """What one extractor found in a log.

    Attributes:
        format: The tool (``pytest``, ``gcc``, ...).
        failures: In the order the log reports them.
        summary: The tool's summary lines (``== 3 failed, 9 passed in 0.2s ==``).
        fatal: Lines that ended the run (``make: *** [all] Error 2``, an interrupted collection).
        id_blocks: Blocks that list failing ids compactly (pytest's short summary, cargo's ``failures:``
            list): quoted instead of one target per failure when they hold them all.
        expected: How many failures the tool's own summary counts (``None``: it does not say).
    """

    format: str
    failures: list[Failure] = field(default_factory=list)
    summary: list[Span] = field(default_factory=list)
    fatal: list[Span] = field(default_factory=list)
    id_blocks: list[Span] = field(default_factory=list)
    expected: int | None = None

    def __bool__(self) -> bool:
        return bool(self.failures or self.summary or self.fatal)


class Log:
    """A log as lines: ``raw`` (verbatim) and ``plain`` (no colour codes, no trailing ``\\r``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = text.split("\n")
        self.plain = [ANSI.sub("", line).rstrip("\r") for line in self.raw]

    def __len__(self) -> int:
        return len(self.raw)

    def matches(
        self, pattern: re.Pattern[str], start: int = 0, stop: int | None = None
    ) -> Iterator[tuple[int, re.Match[str]]]:
        """``(index, match)`` of every line from ``start`` to ``stop`` that ``pattern`` matches."""
        for index in range(start, len(self.plain) if stop is None else min(stop, len(self.plain))):
            match = pattern.match(self.plain[index])
            if match is not None:
                yield index, match

    def first(self, pattern: re.Pattern[str], start: int = 0, stop: int | None = None) -> int | None:
        return next((index for index, _ in self.matches(pattern, start, stop)), None)

    def last(self, pattern: re.Pattern[str], start: int = 0, stop: int | None = None) -> int | None:
        found = None
        for index, _ in self.matches(pattern, start, stop):
            found = index
        return found

    def next_text(self, start: int, stop: int | None = None) -> int | None:
        """The first line at or after ``start`` (before ``stop``) that is not blank."""
        end = len(self.plain) if stop is None else min(stop, len(self.plain))
        return next((index for index in range(start, end) if self.plain[index].strip()), None)

    def quote(self, span: Span) -> str:
        """The raw text of ``span``: leading blanks of its first line and trailing blanks cut."""
        text = "\n".join(self.raw[span.first : span.last + 1])
        return text.strip(" \t\r\n")


def signature(text: str) -> str:
    """What failures of one kind share: the text with numbers and quoted values masked."""
    return _NUMBERS.sub("#", _QUOTED.sub("'…'", ANSI.sub("", text))).strip()
