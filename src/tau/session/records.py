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
over each line costs about half the prefix match plus the later reading back. It reads the file
64 KiB at a time, so the file's bytes are never all held beside its parsed entries, and parses a
piece's lines in one go: a piece with a line that is no entry is read again a line at a time.
"""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from itertools import repeat
from pathlib import Path
from sys import intern
from typing import Any

import orjson

from tau.common.dataclass import dataclass
from tau.common.regular_files import open_regular
from tau.session import jsonl
from tau.session.errors import NotASessionError

__all__ = ["LineReader", "Loaded", "Record", "load", "no_gc"]

Problem = tuple[int, str]

# Lines of these types are parsed at load: labels feed the label index, headers are not entries.
_EAGER_KINDS = frozenset(("label", "session"))
_LF = 0x0A
_CLOSING_BRACE = 0x7D


class Record:
    """One entry line: where it is in the file, the fields of the tree index, the parsed dict once needed.

    ``offset``/``size`` locate the line in the current file (``offset`` -1: the entry is not there
    as it is, and is written as pi serializes it). ``raw`` holds line bytes that must be kept
    because no file has them (the kept lines of a branched session before it is written).
    """

    # (a parsed open, _parse_lines, sets these slots without calling __init__: keep the two in step)
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
# its parsed entries (an open session stays within 4x its file, bench/session_open.py). A chunk's
# lines are all held while they are parsed; with 64 KiB rather than a megabyte, the holes they leave
# among the entries once freed are small too (3.5x rather than 4.0x the file), at the same speed.
_CHUNK = 1 << 16
_READ_BACK = 1 << 20  # LineReader.chunks reads lines back in pieces of about a megabyte


def _file_chunks(fd: int, size: int) -> Iterator[tuple[int, list[bytes], bool]]:
    """The lines of the file open on ``fd``, read a chunk at a time: ``(offset, lines, cut)`` with
    the file offset of ``lines[0]``; ``cut``: ``lines`` is the last line alone, with no LF after it."""
    offset = read = 0  # the file offset of the first line not yielded yet, and how much was read
    parts: list[bytes] = []  # what was read of that line, while no LF came after it
    while read < size:
        more = os.pread(fd, min(_CHUNK, size - read), read)
        if not more:  # the file shrank under us: what was read is all there is
            break
        read += len(more)
        lines = more.split(b"\n")
        if len(lines) == 1:  # a line longer than a chunk: its pieces are joined once, at its end
            parts.append(more)
            continue
        if parts:
            parts.append(lines[0])
            lines[0] = b"".join(parts)
        last = lines.pop()
        parts = [last] if last else []
        yield offset, lines, False
        offset = read - len(last)
    if parts:
        yield offset, [b"".join(parts)], True


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
    problems: list[Problem] = []
    records: list[Record] = []
    header: dict[str, Any] | None = None
    header_raw = b""
    number = 0  # the number of the last line read
    cut = False
    with no_gc():
        for offset, lines, cut in _file_chunks(fd, size):
            if header is None:
                for index, raw in enumerate(lines):  # the lines before the header, and the header
                    number += 1
                    offset += len(raw) + 1
                    value = _header_candidate(raw, number, problems)
                    if value is not None:
                        if not _is_header(value):
                            raise _not_a_session(path)
                        header, header_raw = value, raw
                        lines = lines[index + 1 :]
                        break
                else:
                    continue
            number = _parse_lines(lines, offset, number, cut, records, problems)
    if header is None:
        raise _not_a_session(path)
    return Loaded(header, header_raw, records, problems, cut, number)


def _parse_lines(
    lines: list[bytes], offset: int, number: int, cut: bool, records: list[Record], problems: list[Problem]
) -> int:
    """Append the records of ``lines`` (from file ``offset``, after line ``number``) to ``records``;
    returns the number of the last line. ``cut``: the last line has no LF after it."""
    try:
        entries = list(map(orjson.loads, lines))
        kinds = list(map(dict.get, entries, repeat("type")))  # (TypeError: a value that is no object)
    except (orjson.JSONDecodeError, TypeError):  # a line that is blank, damaged or no object
        return _parse_each(lines, offset, number, cut, records, problems)
    append = records.append
    new = Record.__new__
    # Slots set here rather than through Record.__init__: a Python call per line costs more than
    # the stores themselves.
    for raw, entry, kind in zip(lines, entries, kinds, strict=True):
        number += 1
        if kind.__class__ is str:
            entry["type"] = kind = intern(kind)
            if kind == "message":
                _intern_message(entry.get("message"))
        record = new(Record)
        record.line = number
        record.offset = offset
        record.size = size = len(raw)
        record.raw = None
        record.kind = kind
        record.id = entry.get("id")
        record.parent_id = entry.get("parentId")
        record.entry = entry
        append(record)
        offset += size + 1
    return number


def _intern_message(message: Any) -> None:
    """The message's role as the interpreter's shared string (the entry's type is interned too).

    Each parsed string is an object of its own: every pass of a run that compares a message's role or
    an entry's type (a dozen at a resume) would read 50,000 scattered string objects again, each a
    cache miss. Interned, they are a handful of objects, read once here while the entry is still in
    the cache. (Interning the blocks' types as well cost more at the parse than it saved later.)
    """
    if message.__class__ is not dict:
        return
    role = message.get("role")
    if role.__class__ is str:
        message["role"] = intern(role)


def _parse_each(
    lines: list[bytes], offset: int, number: int, cut: bool, records: list[Record], problems: list[Problem]
) -> int:
    """:func:`_parse_lines` a line at a time, each line that is not an entry noted in ``problems``."""
    append = records.append
    loads = orjson.loads
    last = len(lines) - 1
    for index, raw in enumerate(lines):
        number += 1
        try:
            entry = loads(raw)
        except orjson.JSONDecodeError:
            entry = None
            if raw.strip():
                entry, error = _parse_object(raw)
                if entry is None:
                    why = "cut short (no newline at the end of the file)" if cut and index == last else error
                    problems.append((number, f"line {number}: {why}; skipped"))
        if entry.__class__ is dict:
            get = entry.get
            append(Record(number, offset, len(raw), get("type"), get("id"), get("parentId"), entry))
        elif entry is not None:
            problems.append((number, f"line {number}: not a JSON object; skipped"))
        offset += len(raw) + 1
    return number


def _data_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """``(offset, line, cut)`` for each line of bytes already read (``cut``: the last line, with no LF after it)."""
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
        header = _header_candidate(raw, number, problems)
        if header is None:
            continue
        if not _is_header(header):
            return None
        return header, raw, number, offset + len(raw) + 1, cut
    return None


def _header_candidate(raw: bytes, number: int, problems: list[Problem]) -> dict[str, Any] | None:
    """The object on line ``number`` before the header: ``None`` for a blank line, or a malformed
    one (noted in ``problems``); the first object is the header, or the file is no session."""
    if not raw.strip():
        return None
    value, error = _parse_object(raw)
    if value is None:
        problems.append((number, f"line {number}: {error}; skipped"))
    return value


def _is_header(value: dict[str, Any]) -> bool:
    return value.get("type") == "session" and isinstance(value.get("id"), str)


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
        """The records with an offset, grouped into pieces of the file of about a megabyte.

        Yields ``(start, piece, records)``: a record's line is ``piece[offset - start:][:size]`` when
        the byte after it is LF (else the file no longer holds that line).
        """
        located = sorted((record for record in records if record.offset >= 0), key=_offset)
        index = 0
        while index < len(located):
            start = located[index].offset
            stop = index + 1
            end = start + located[index].size + 1
            while stop < len(located) and located[stop].offset + located[stop].size < start + _READ_BACK:
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
