"""Reading a session file into lazily parsed records.

A record is one entry line. Lines pi writes for tree entries start with ``{"type":..,"id":..,
"parentId":..``: for those only that prefix is read at load (enough for the tree index), and the
line is read back (by offset) and parsed in full the first time the entry is needed. Every other
line, and any line that might be cut short (no LF after it, or not ending in ``}``), is parsed at
load. A line that looked like an entry but turns out not to be JSON is dropped when first parsed
(the manager re-indexes), so the store always sees what pi sees: every line that parses, in file
order. Nothing keeps the file's bytes in memory: an open 7 MB session costs its index, plus the
entries that were asked for.

A run's session (a writable open) is parsed whole at load instead (``load(parse_all=True)``): its
branch is built at once, which for a linear session is every entry, and one pass of the JSON parser
over each line costs about half the prefix match plus the later reading back. It reads the file a
megabyte at a time, so the file's bytes are never all held beside its parsed entries.
"""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tau.common.regular_files import open_regular
from tau.session import jsonl
from tau.session.errors import NotASessionError

__all__ = ["LineReader", "Loaded", "Record", "load", "no_gc"]

Problem = tuple[int, str]

# Lines of these types are parsed at load: labels feed the label index, headers are not entries.
_EAGER_KINDS = frozenset(("label", "session"))
_CHUNK = 1 << 19  # read back lines in pieces of about 512 KiB
_LF = 0x0A
_CLOSING_BRACE = 0x7D


class Record:
    """One entry line: where it is in the file, the fields of the tree index, the parsed dict once needed.

    ``offset``/``size`` locate the line in the current file (``offset`` -1: the entry is not there
    as it is, and is written as pi serializes it). ``raw`` holds line bytes that must be kept
    because no file has them (the kept lines of a branched session before it is written).
    """

    __slots__ = ("entry", "id", "kind", "line", "offset", "parent_id", "raw", "size")

    def __init__(
        self,
        line: int,
        offset: int,
        size: int,
        kind: Any,
        entry_id: Any,
        parent_id: Any,
        entry: dict | None,
    ) -> None:
        self.line = line  # 1-based line number in the file, 0 while not written
        self.offset = offset
        self.size = size
        self.raw: bytes | None = None
        self.kind = kind
        self.id = entry_id
        self.parent_id = parent_id
        self.entry = entry

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Record:
        """A record for an entry made or changed in memory."""
        return cls(0, -1, -1, entry.get("type"), entry.get("id"), entry.get("parentId"), entry)


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
    """Pause the cyclic GC while parsing: parsed JSON has no cycles, and collector passes over
    thousands of fresh dicts would run many times during a large load."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_object(raw: bytes) -> tuple[dict | None, str | None]:
    try:
        value = jsonl.parse(raw)
    except ValueError:
        return None, "not valid JSON"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _records(data: bytes, start: int, number: int, problems: list[Problem]) -> list[Record]:
    """Records for the lines of ``data`` from byte ``start`` (the line before it has ``number``)."""
    records: list[Record] = []
    append = records.append
    find = data.find
    match = jsonl.FAST_PREFIX.match
    # One str per distinct type and id: a parent's id and its children's parentId share one object.
    names: dict[bytes, str] = {}
    name = names.get
    size = len(data)
    position = start
    while position < size:
        newline = find(b"\n", position)
        cut = newline < 0
        end = size if cut else newline
        number += 1
        if not cut and end > position and data[end - 1] == _CLOSING_BRACE:
            found = match(data, position, end)
            if found is not None:
                kind, entry_id, parent = found.groups()
                try:
                    kind = name(kind) or names.setdefault(kind, kind.decode())
                    if kind not in _EAGER_KINDS:
                        entry_id = name(entry_id) or names.setdefault(entry_id, entry_id.decode())
                        if parent is not None:
                            parent = name(parent) or names.setdefault(parent, parent.decode())
                        append(Record(number, position, end - position, kind, entry_id, parent, None))
                        position = end + 1
                        continue
                except UnicodeDecodeError:
                    pass
        raw = data[position:end]
        if raw.strip():
            entry, error = _parse_object(raw)
            if entry is None:
                why = "cut short (no newline at the end of the file)" if cut else error
                problems.append((number, f"line {number}: {why}; skipped"))
            else:
                kind, entry_id, parent_id = entry.get("type"), entry.get("id"), entry.get("parentId")
                append(Record(number, position, end - position, kind, entry_id, parent_id, entry))
        position = end + 1
    return records


# How much of a file a parsed load reads at a time: the file's bytes are never all in memory beside
# its parsed entries (an open session stays within 4x its file, bench/session_open.py).
_CHUNK = 1 << 20


def _file_lines(fd: int, size: int) -> Iterator[tuple[int, bytes, bool]]:
    """``(offset, line, cut)`` for each line of the file open on ``fd``, read a chunk at a time
    (``cut``: the last line, with no LF after it)."""
    offset = read = 0  # the file offset of ``pending[0]``, and how much was read
    pending = b""
    while read < size:
        more = os.pread(fd, min(_CHUNK, size - read), read)
        if not more:  # the file shrank under us: what was read is all there is
            break
        read += len(more)
        chunk = pending + more if pending else more
        find = chunk.find
        start = 0
        while (newline := find(b"\n", start)) >= 0:
            yield offset + start, chunk[start:newline], False
            start = newline + 1
        offset += start
        pending = chunk[start:]
    if pending:
        yield offset, pending, True


def _parsed_records(
    lines: Iterator[tuple[int, bytes, bool]], number: int, problems: list[Problem]
) -> tuple[list[Record], int, bool]:
    """:func:`_records` with every line parsed now (what a run needs: its whole branch, at once);
    also the number of the last line and whether it was cut short."""
    records: list[Record] = []
    append = records.append
    loads = orjson.loads
    cut = False
    for position, raw, cut in lines:
        end = position + len(raw)
        number += 1
        try:
            entry = loads(raw)
        except orjson.JSONDecodeError:
            entry = None
            if raw.strip():
                entry, error = _parse_object(raw)
                if entry is None:
                    why = "cut short (no newline at the end of the file)" if cut else error
                    problems.append((number, f"line {number}: {why}; skipped"))
        if entry.__class__ is dict:
            get = entry.get
            append(Record(number, position, end - position, get("type"), get("id"), get("parentId"), entry))
        elif entry is not None:
            problems.append((number, f"line {number}: not a JSON object; skipped"))
    return records, number, cut


def load(fd: int, path: Path, *, parse_all: bool = False) -> Loaded | None:
    """Read the session file open on ``fd``; ``None`` when it is empty.

    The header is the first line that parses; blank and malformed lines before it are skipped.
    Raises :class:`NotASessionError` (naming ``path``) when that line is no session header.
    ``parse_all``: parse every entry now rather than when first needed (about half the work when
    they are all needed, as a run's branch of a linear session is: one pass over the bytes, no
    prefix match, no reading back).
    """
    size = os.fstat(fd).st_size
    if not size:
        return None
    if parse_all:
        return _load_parsed(fd, path, size)
    data = os.pread(fd, size, 0)
    while len(data) < size:  # pread may return less than asked on some filesystems
        more = os.pread(fd, size - len(data), len(data))
        if not more:
            break
        data += more
    problems: list[Problem] = []
    found = _session_header(_data_lines(data), problems)
    if found is None:
        raise _not_a_session(path)
    header, raw, number, after, _ = found
    with no_gc():
        records = _records(data, after, number, problems)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return Loaded(header, raw, records, problems, not data.endswith(b"\n"), lines)


def _load_parsed(fd: int, path: Path, size: int) -> Loaded:
    """:func:`load` with every line parsed now, the file read a chunk at a time."""
    lines = _file_lines(fd, size)
    problems: list[Problem] = []
    found = _session_header(lines, problems)
    if found is None:
        raise _not_a_session(path)
    header, raw, number, _, cut = found
    with no_gc():
        records, last, last_cut = _parsed_records(lines, number, problems)
    return Loaded(header, raw, records, problems, last_cut if last > number else cut, last)


def _data_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """:func:`_file_lines` of bytes already read."""
    position, size = 0, len(data)
    while position < size:
        newline = data.find(b"\n", position)
        end = size if newline < 0 else newline
        yield position, data[position:end], newline < 0
        position = end + 1


def _session_header(
    lines: Iterator[tuple[int, bytes, bool]], problems: list[Problem]
) -> tuple[dict[str, Any], bytes, int, int, bool] | None:
    """The header (its value and line, the line's number, the offset after it and whether it was
    cut), from the first line that parses; ``None`` when that line is no session header. Blank and
    malformed lines before it are skipped (the malformed ones noted in ``problems``)."""
    number = 0
    for offset, raw, cut in lines:
        number += 1
        if not raw.strip():
            continue
        header, error = _parse_object(raw)
        if header is None:
            problems.append((number, f"line {number}: {error}; skipped"))
            continue
        if header.get("type") != "session" or not isinstance(header.get("id"), str):
            return None
        return header, raw, number, offset + len(raw) + 1, cut
    return None


def _not_a_session(path: Path) -> NotASessionError:
    return NotASessionError(
        f"{str(path)!r} is not a session file: its first JSON line is not a session header "
        '({"type":"session","id":...}); pass the path of a .jsonl session file'
    )


class LineReader:
    """Reads lines back from a session file by offset, through a descriptor kept open.

    Holding the descriptor means a file replaced on disk (renamed over) is still read as it was.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = open_regular(path)  # never blocks on a pipe, never follows a link
        self._finalizer = weakref.finalize(self, os.close, self._fd)

    @property
    def fd(self) -> int:
        return self._fd

    def close(self) -> None:
        self._finalizer()

    def chunks(self, records: list[Record]) -> Iterator[tuple[int, memoryview, list[Record]]]:
        """The records with an offset, grouped into pieces of the file of about 512 KiB.

        Yields ``(start, piece, records)``: a record's line is ``piece[offset - start:][:size]`` when
        the byte after it is LF (else the file no longer holds that line).
        """
        located = sorted((record for record in records if record.offset >= 0), key=_offset)
        index = 0
        while index < len(located):
            start = located[index].offset
            stop = index + 1
            end = start + located[index].size + 1
            while stop < len(located) and located[stop].offset + located[stop].size < start + _CHUNK:
                end = max(end, located[stop].offset + located[stop].size + 1)
                stop += 1
            yield start, memoryview(os.pread(self._fd, end - start, start)), located[index:stop]
            index = stop

    def lines(self, records: list[Record]) -> Iterator[tuple[Record, bytes | None]]:
        """``(record, line bytes without LF or None)`` for each record with an offset, in file order."""
        for start, piece, group in self.chunks(records):
            for record in group:
                low = record.offset - start
                high = low + record.size
                yield record, bytes(piece[low:high]) if high < len(piece) and piece[high] == _LF else None


def _offset(record: Record) -> int:
    return record.offset
