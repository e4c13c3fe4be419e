"""Reading a session file into lazily parsed records (the raw line bytes are kept for rewrites).

A record is one entry line. Lines pi writes for tree entries start with ``{"type":..,"id":..,
"parentId":..``: for those only that prefix is read at load (enough for the tree index) and the line
is parsed in full the first time the entry is needed. Every other line, and any line that might be
cut short (no LF after it, or not ending in ``}``), is parsed at load. A line that looked like an
entry but turns out not to be JSON is dropped when first parsed (the manager re-indexes), so the
store always sees what pi sees: every line that parses, in file order.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.session import jsonl
from tau.session.errors import NotASessionError

__all__ = ["Loaded", "Record", "load_file", "no_gc", "parse_records"]

Problem = tuple[int, str]

# Lines of these types are parsed at load: labels feed the label index, headers are not entries.
_EAGER_KINDS = frozenset(("label", "session"))


class Record:
    """One entry line: where it came from, the fields of the tree index, the parsed dict once needed."""

    __slots__ = ("entry", "id", "kind", "line", "parent_id", "raw")

    def __init__(
        self, line: int, raw: bytes | None, kind: Any, entry_id: Any, parent_id: Any, entry: dict | None
    ) -> None:
        self.line = line  # 1-based line number in the file, 0 while not written
        self.raw = raw  # the line's bytes without LF; None when the entry must be serialized
        self.kind = kind
        self.id = entry_id
        self.parent_id = parent_id
        self.entry = entry

    @classmethod
    def from_entry(cls, entry: dict[str, Any], line: int = 0, raw: bytes | None = None) -> Record:
        return cls(line, raw, entry.get("type"), entry.get("id"), entry.get("parentId"), entry)

    def line_bytes(self) -> bytes:
        """The line to write: the original bytes when unchanged, else the entry as pi serializes it."""
        if self.raw is None:
            self.raw = jsonl.encode(self.entry)
        return self.raw


@dataclass
class Loaded:
    """A session file as read: header, entry records in file order, and what was wrong with it."""

    header: dict[str, Any]
    header_raw: bytes
    records: list[Record]
    problems: list[Problem] = field(default_factory=list)
    unterminated: bool = False  # the file does not end with LF
    line_count: int = 0


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic GC while parsing: parsed JSON has no cycles, and the collector's passes over
    thousands of fresh dicts cost about a third of a large load."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _is_blank(raw: bytes) -> bool:
    return not raw.strip()


def _parse_object(raw: bytes) -> tuple[dict | None, str | None]:
    try:
        value = jsonl.parse(raw)
    except ValueError:
        return None, "not valid JSON"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _fast_record(number: int, raw: bytes) -> Record | None:
    if not raw.endswith(b"}"):
        return None
    match = jsonl.FAST_PREFIX.match(raw)
    if match is None:
        return None
    kind, entry_id, parent = match.groups()
    try:
        return Record(
            number, raw, kind.decode(), entry_id.decode(), None if parent is None else parent.decode(), None
        )
    except UnicodeDecodeError:
        return None


def parse_records(
    lines: list[bytes], first_line: int, last_unterminated: bool
) -> tuple[list[Record], list[Problem]]:
    """Records for ``lines`` (numbered from ``first_line``); bad lines become problems."""
    records: list[Record] = []
    problems: list[Problem] = []
    last = len(lines) - 1
    for offset, raw in enumerate(lines):
        number = first_line + offset
        cut = last_unterminated and offset == last
        record = None if cut else _fast_record(number, raw)
        if record is not None and record.kind not in _EAGER_KINDS:
            records.append(record)
            continue
        if _is_blank(raw):
            continue
        entry, error = _parse_object(raw)
        if entry is None:
            why = "cut short (no newline at the end of the file)" if cut else error
            problems.append((number, f"line {number}: {why}; skipped"))
            continue
        records.append(Record.from_entry(entry, number, raw))
    return records, problems


def _split(data: bytes) -> tuple[list[bytes], bool]:
    # LF only: bytes.splitlines() would also split on CR, VT, FF and others inside JSON strings.
    lines = data.split(b"\n")
    unterminated = lines[-1] != b""
    if not unterminated:
        lines.pop()
    return lines, unterminated


def load_file(path: Path) -> Loaded | None:
    """Read ``path``; ``None`` for an empty file, ``NotASessionError`` when it holds no session header.

    The header is the first line that parses; blank and malformed lines before it are skipped.
    """
    data = path.read_bytes()
    if not data:
        return None
    lines, unterminated = _split(data)
    del data
    problems: list[Problem] = []
    for index, raw in enumerate(lines):
        if _is_blank(raw):
            continue
        header, error = _parse_object(raw)
        if header is None:
            problems.append((index + 1, f"line {index + 1}: {error}; skipped"))
            continue
        if header.get("type") != "session" or not isinstance(header.get("id"), str):
            break
        with no_gc():
            records, more = parse_records(lines[index + 1 :], index + 2, unterminated)
        return Loaded(header, raw, records, problems + more, unterminated, len(lines))
    raise NotASessionError(
        f"{str(path)!r} is not a session file: its first JSON line is not a session header "
        '({"type":"session","id":...}); pass the path of a .jsonl session file'
    )
