"""Receipts without a model call: deterministic extractors for the logs coding agents meet most.

Every extractor reads the log's lines and names spans of it (a failing test's id, its first error
line, its ``file:line``, the tool's summary); :func:`extract` turns them into quotes, which are
always pieces of the log itself, in order of use to the model and within a budget. A log no
extractor recognises gives ``None``: the reducer then leaves it alone (or asks the model tier).

Formats: pytest (every verbosity, long/short/line/native tracebacks, the short summary, collection
errors), unittest, mypy, ruff (full and concise), flake8 and other ``path:line:col: CODE``
linters, eslint (stylish), tsc (plain and ``--pretty``), jest, vitest, go test (with and without
``-v``, panics, build failures), cargo test, rustc diagnostics (cargo build/check/clippy),
gcc/clang (and the linker), make.
"""

from __future__ import annotations

from collections.abc import Callable

from tau.bundled.reducer.extract.js_logs import jest, vitest
from tau.bundled.reducer.extract.lint_logs import eslint, flake8_style, ruff, tsc
from tau.bundled.reducer.extract.model import Failure, Found, Log, Span, signature
from tau.bundled.reducer.extract.native_logs import cargo, gcc, go, make, rustc
from tau.bundled.reducer.extract.python_logs import mypy, pytest, unittest
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len

__all__ = ["EXTRACTORS", "MAX_ITEMS", "MAX_QUOTE_CHARS", "Extraction", "extract"]

EXTRACTORS: tuple[Callable[[Log], Found | None], ...] = (
    pytest,
    unittest,
    mypy,
    ruff,
    flake8_style,
    eslint,
    tsc,
    jest,
    vitest,
    go,
    cargo,
    rustc,
    gcc,
    make,
)
MAX_ITEMS = 24  # twice a model receipt's 12: an extracted item is cheap to check and cheap to send
MAX_QUOTE_CHARS = 600  # UTF-16 code units, as a model receipt's quotes
MAX_TOTAL_CHARS = 6000
# Compiler and linter diagnostics that differ only in numbers and quoted names (the same error in 130
# modules): this many of a kind are quoted, the rest counted as unquoted.
MAX_DIAGNOSTICS_OF_A_KIND = 5


@dataclass(frozen=True)
class Extraction:
    """The receipt's content as an extractor found it.

    Attributes:
        format: The tools recognised, ``+``-joined (``make+gcc``).
        items: ``(kind, quote)`` in the log's order: kinds ``summary``, ``fatal``, ``target`` (a failing id),
            ``failure`` (its first error line), ``location`` (``file:line``), ``warning``.
        failures: How many failures (errors, not warnings) were found.
        unquoted: How many of them no quote names (over the budget).
        uncertain: The tool's own count of failures differs from what was found.
    """

    format: str
    items: tuple[tuple[str, str], ...]
    failures: int
    unquoted: int
    uncertain: bool


class _Picker:
    """Collects quotes in priority order until the budget is spent."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.items: list[tuple[int, str, str]] = []
        self.seen: set[tuple[str, str]] = set()
        self.lines: set[int] = set()  # every line some quote holds
        self.chars = 0

    def full(self) -> bool:
        return len(self.items) >= MAX_ITEMS or self.chars >= MAX_TOTAL_CHARS

    def add(self, kind: str, span: Span | None) -> bool:
        """Quote ``span``; ``True`` when it is quoted (now or before)."""
        if span is None:
            return False
        if self.covered(span):
            return True
        quote = _cut(self.log.quote(span))
        if not quote:
            return False
        if (kind, quote) in self.seen:
            self.lines.update(range(span.first, span.last + 1))
            return True
        if self.full():
            return False
        self.seen.add((kind, quote))
        self.lines.update(range(span.first, span.last + 1))
        self.items.append((span.first, kind, quote))
        self.chars += js_len(quote)
        return True

    def covered(self, span: Span | None) -> bool:
        return span is not None and all(index in self.lines for index in range(span.first, span.last + 1))


def _cut(quote: str) -> str:
    """At most :data:`MAX_QUOTE_CHARS` code units: a prefix is still a verbatim piece of the log."""
    if js_len(quote) <= MAX_QUOTE_CHARS:
        return quote
    cut = quote[:MAX_QUOTE_CHARS]
    while js_len(cut) > MAX_QUOTE_CHARS:
        cut = cut[:-1]
    return cut.rstrip()


def _chunks(log: Log, block: Span) -> list[Span]:
    """``block`` as runs of whole lines of at most :data:`MAX_QUOTE_CHARS` each."""
    chunks, first, size = [], block.first, 0
    for index in range(block.first, block.last + 1):
        length = js_len(log.raw[index]) + 1
        if index > first and size + length > MAX_QUOTE_CHARS:
            chunks.append(Span(first, index - 1))
            first, size = index, 0
        size += length
    chunks.append(Span(first, block.last))
    return chunks


_GROUP_SEPARATORS = ("::", " › ", " > ", ".", "/")


def _group(failure: Failure) -> str:
    """A failing test's group: its id without the last part (``tests.test_ops.TestScale`` of
    ``tests.test_ops.TestScale.test_scale_01``, ``tests/test_a.py`` of ``tests/test_a.py::test_b``);
    ``""`` for a diagnostic line (whose id is its ``file:line``: one kind across files)."""
    if failure.error is None:
        return ""
    ident = failure.ident
    cut = max(ident.rfind(separator) for separator in _GROUP_SEPARATORS)
    return ident[:cut] if cut > 0 else ""


def _error_text(log: Log, failure: Failure) -> str:
    span = failure.error or failure.target
    return signature(log.plain[span.first]) if span is not None else ""


def extract(text: str) -> Extraction | None:
    """The receipt's quotes for ``text``, or ``None`` when no extractor recognises it."""
    log = Log(text)
    found = [result for result in (extractor(log) for extractor in EXTRACTORS) if result]
    if not found:
        return None
    picker = _Picker(log)
    errors = [(f, failure) for f in found for failure in f.failures if failure.severity == "error"]
    warnings = [(f, failure) for f in found for failure in f.failures if failure.severity != "error"]
    in_blocks = {
        id(failure)
        for f in found
        for failure in f.failures
        for block in f.id_blocks
        if failure.target is not None and block.first <= failure.target.first <= block.last
    }
    # 1. how the run ended: the tools' summaries, what stopped it, the log's last line
    for f in found:
        for span in f.summary:
            picker.add("summary", span)
        for span in f.fatal:
            picker.add("fatal", span)
    # 2. the first failure of each kind, in full (of each kind in each test group: three test
    #    classes failing with the same ``AssertionError: # != #`` are three bugs to fix)
    kinds: dict[tuple[str, str], Failure] = {}
    for _, failure in errors:
        kinds.setdefault((_group(failure), _error_text(log, failure)), failure)
    for failure in kinds.values():
        if id(failure) not in in_blocks:
            picker.add("target", failure.target)
        detail = failure.detail
        if detail is not None and failure.error is not None and detail.first == failure.error.first:
            picker.add("failure", detail)  # the message and its expected/actual lines, one quote
        else:
            picker.add("failure", failure.error)
            picker.add("failure", detail)
        picker.add("location", failure.locations[0] if failure.locations else None)
    # 3. every failing id: the compact lists where the tool prints one, else each target
    for f in found:
        for block in f.id_blocks:
            for chunk in _chunks(log, block):
                picker.add("target", chunk)
    # A diagnostic line (compiler, linter): a few of each kind tell enough. Failing tests too, when
    # they cannot all be quoted: a few of each kind in each group, not the first 20 of the first group.
    crowded = len(errors) > MAX_ITEMS
    shown: dict[tuple[str, str], int] = {}
    left_out: set[int] = set()
    for _, failure in errors:
        if picker.covered(failure.target):
            continue
        if failure.error is None or crowded:
            kind = (_group(failure), _error_text(log, failure))
            shown[kind] = shown.get(kind, 0) + 1
            if shown[kind] > MAX_DIAGNOSTICS_OF_A_KIND:
                left_out.add(id(failure))
                continue
        picker.add("target", failure.target or failure.error)
    # 4. the other failures' first error lines and locations (when they cannot all be quoted, those
    #    of the first failure of each kind tell the rest), then warnings
    if crowded:
        left_out.update(id(failure) for _, failure in errors)
    for _, failure in errors:
        if id(failure) not in left_out:
            picker.add("failure", failure.error)
    for _, failure in errors:
        for span in failure.locations[:1] if id(failure) not in left_out else ():
            picker.add("location", span)
    for _, failure in warnings:
        picker.add("warning", failure.target)
    tail = next((index for index in range(len(log) - 1, -1, -1) if log.plain[index].strip()), None)
    if tail is not None and not picker.covered(Span.at(tail)):
        picker.add("summary", Span.at(tail))
    quoted = sum(1 for _, failure in errors if picker.covered(failure.target or failure.error))
    expected = [f.expected for f in found if f.expected is not None]
    return Extraction(
        format="+".join(f.format for f in found),
        items=tuple((kind, quote) for _, kind, quote in sorted(picker.items, key=lambda item: item[0])),
        failures=len(errors),
        unquoted=len(errors) - quoted,
        uncertain=bool(expected)
        and sum(expected)
        != sum(
            1
            for f in found
            if f.expected is not None
            for failure in f.failures
            if failure.severity == "error"
        ),
    )
