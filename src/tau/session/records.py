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

__all__ = ["Loaded", "Record", "load_file", "no_gc", "parse_records", "read_lines"]

Problem = tuple[int, str]

# Lines of these types are parsed at load: labels feed the label index, headers are not entries.
_EAGER_KINDS = frozenset(("label", "session"))


class Record:
    """One entry line: where it is in the file, the fields of the tree index, the parsed dict once needed.

    ``raw`` holds the line's bytes only until the line is parsed; after that the bytes stay in the
    file (``offset``) and are read back only to copy the line (fork, branched session, rewrite).
    """

    __slots__ = ("entry", "id", "kind", "line", "offset", "parent_id", "raw")

    def __init__(
        self,
        line: int,
        offset: int,
        raw: bytes | None,
        kind: Any,
        entry_id: Any,
        parent_id: Any,
        entry: dict | None,
    ) -> None:
        self.line = line  # 1-based line number in the file, 0 while not written
        self.offset = offset  # byte offset of the line in the current file, -1 when not there as is
        self.raw = raw  # the line's bytes (no LF) while unparsed, or when they must be kept
        self.kind = kind
        self.id = entry_id
        self.parent_id = parent_id
        self.entry = entry

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Record:
        """A record for an entry made or changed in memory: written as pi serializes it."""
        return cls(0, -1, None, entry.get("type"), entry.get("id"), entry.get("parentId"), entry)


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


def parse_records(
    lines: list[bytes], first_line: int, first_offset: int, last_unterminated: bool
) -> tuple[list[Record], list[Problem]]:
    """Records for ``lines`` (numbered from ``first_line``, starting at byte ``first_offset``)."""
    records: list[Record] = []
    problems: list[Problem] = []
    append = records.append
    match = jsonl.FAST_PREFIX.match
    offset = first_offset
    number = first_line - 1
    cut_at = first_line + len(lines) - 1 if last_unterminated else -1
    for raw in lines:
        number += 1
        start = offset
        offset += len(raw) + 1
        found = match(raw) if raw[-1:] == b"}" and number != cut_at else None
        if found is not None:
            kind, entry_id, parent = found.groups()
            try:
                kind = kind.decode()
                if kind not in _EAGER_KINDS:
                    append(
                        Record(number, start, raw, kind, entry_id.decode(), parent and parent.decode(), None)
                    )
                    continue
            except UnicodeDecodeError:
                pass
        if _is_blank(raw):
            continue
        entry, error = _parse_object(raw)
        if entry is None:
            why = "cut short (no newline at the end of the file)" if number == cut_at else error
            problems.append((number, f"line {number}: {why}; skipped"))
            continue
        append(Record(number, start, None, entry.get("type"), entry.get("id"), entry.get("parentId"), entry))
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
    offset = 0
    for index, raw in enumerate(lines):
        offset += len(raw) + 1
        if _is_blank(raw):
            continue
        header, error = _parse_object(raw)
        if header is None:
            problems.append((index + 1, f"line {index + 1}: {error}; skipped"))
            continue
        if header.get("type") != "session" or not isinstance(header.get("id"), str):
            break
        rest = lines[index + 1 :]
        del lines
        with no_gc():
            records, more = parse_records(rest, index + 2, offset, unterminated)
        return Loaded(header, raw, records, problems + more, unterminated, index + 1 + len(rest))
    raise NotASessionError(
        f"{str(path)!r} is not a session file: its first JSON line is not a session header "
        '({"type":"session","id":...}); pass the path of a .jsonl session file'
    )


def read_lines(path: Path, records: list[Record]) -> list[bytes | None]:
    """The bytes of each record's line, read back from ``path`` at its offset (``None`` if not there).

    A line is only trusted when it still ends with LF where it should and starts with ``{``: the file
    may have been replaced since it was read.
    """
    found: list[bytes | None] = [None] * len(records)
    try:
        with open(path, "rb") as file:
            for index, record in enumerate(records):
                if record.offset < 0:
                    continue
                file.seek(record.offset)
                data = file.readline()
                if not (data.endswith(b"\n") and data.startswith(b"{")):
                    continue
                if isinstance(record.id, str) and b'"id":' + jsonl.encode(record.id) not in data:
                    continue
                found[index] = data[:-1]
    except OSError:
        pass
    return found
