"""The entries of one session: records in file order, the id index, labels, problems, lazy parsing.

:class:`EntryIndex` knows nothing of the leaf or of writing; :class:`~tau.session.manager.SessionManager`
builds on it. Records come from :mod:`tau.session.records`; an unparsed record is parsed the first
time its entry is needed, from its line read back through the index's :class:`LineReader`. A line
that turns out not to be an entry is dropped (with a problem naming it) and the index is rebuilt,
so the index always holds what pi would have loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import orjson

from tau.common.brief import brief
from tau.session import jsonl
from tau.session.errors import SessionError
from tau.session.records import LineReader, Record, no_gc

__all__ = ["EntryIndex", "hashable", "js_truthy"]

Entry = dict[str, Any]
Problem = tuple[int, str]
_LF = 0x0A


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness for the JSON values an id or a label can hold."""
    return value is not None and value is not False and value != "" and value != 0


def hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _tolerant_parse(raw: bytes) -> Any:
    """A line orjson refused: lone surrogates and invalid UTF-8 still parse, as in JavaScript."""
    try:
        return jsonl.parse(raw)
    except ValueError:
        return None


class EntryIndex:
    """Records in file order, indexed by id (a later line with the same id wins, as in pi).

    Call :meth:`reindex` once the records are final (after a migration gave v1 entries their ids).
    """

    def __init__(
        self,
        records: list[Record] | None = None,
        reader: LineReader | None = None,
        problems: Iterable[Problem] = (),
    ) -> None:
        self.records: list[Record] = records or []
        self.reader = reader  # the file the records' offsets point into
        self.by_id: dict[Any, Record] = {}
        self.labels: dict[Any, Any] = {}
        self.label_times: dict[Any, Any] = {}
        self.last_id: Any = None  # the last entry in file order: the leaf after a load
        self._problems: list[Problem] = []
        self._problem_set: set[Problem] = set()
        self._validated = False
        # Bumped by anything but an append that can change a walk (re-index, dropped or removed records).
        self._generation = 0
        self._last_branch: _Branch | None = None
        for line, message in problems:
            self.problem(line, message.partition(": ")[2])

    # ------------------------------------------------------------------ the index

    def reindex(self) -> Any:
        """Rebuild the id and label indexes from the records; returns the last entry's id."""
        by_id: dict[Any, Record] = {}
        labels: list[Record] = []
        last = None
        for record in self.records:
            kind = record.kind
            if kind == "session":
                self.problem(record.line, "a second session header; ignored (not an entry)")
                continue
            key = record.id
            if key.__class__ is not str and not hashable(key):
                self.problem(record.line, f"entry id {brief(key)} is not a string; entry unreachable")
                continue
            previous = by_id.get(key)
            if previous is not None and previous.line and record.line:
                self.problem(
                    record.line,
                    f"duplicate entry id {brief(key)} (also line {previous.line}); this line wins",
                )
            by_id[key] = record
            last = key
            if kind == "label":
                labels.append(record)
        self.by_id = by_id
        self._generation += 1
        self.labels = {}
        self.label_times = {}
        for record in labels:
            self.index_label(record.entry or {})
        self.last_id = last
        return last

    def index_label(self, entry: Entry) -> None:
        """Apply one label entry: a truthy label sets it, anything else clears it."""
        target = entry.get("targetId")
        if not hashable(target):
            return
        if js_truthy(entry.get("label")):
            self.labels[target] = entry["label"]
            self.label_times[target] = entry.get("timestamp")
        else:
            self.labels.pop(target, None)
            self.label_times.pop(target, None)

    def lookup(self, entry_id: Any) -> Record | None:
        if not js_truthy(entry_id) or not hashable(entry_id):
            return None
        return self.by_id.get(entry_id)

    def add(self, record: Record) -> None:
        """Index a record appended in memory (its id is new)."""
        self.records.append(record)
        self.by_id[record.id] = record
        self.last_id = record.id

    def remove_last(self, record: Record) -> None:
        """Undo :meth:`add` (the append could not be written)."""
        self.records.pop()
        del self.by_id[record.id]
        self._generation += 1
        self.last_id = self.records[-1].id if self.records else None

    def entry_records(self) -> list[Record]:
        return [record for record in self.records if record.kind != "session"]

    # ------------------------------------------------------------------ problems

    def problem(self, line: int, message: str) -> None:
        """Record ``message`` about ``line`` (0: no line), once."""
        problem = (line, f"line {line}: {message}" if line else message)
        if problem not in self._problem_set:
            self._problem_set.add(problem)
            self._problems.append(problem)

    def all_problems(self) -> list[Problem]:
        """Every problem of the file, sorted by line: parses and checks the whole file the first time."""
        if not self._validated:
            self.parse_all()
            self.check_links()
            self._validated = True
        return sorted(self._problems)

    def check_links(self) -> None:
        """Report missing parents and parentId cycles, visiting every record once."""
        state: dict[int, int] = {}  # id(record): 1 while on the current walk, 2 once known to end
        for start in list(self.by_id.values()):
            walk: list[Record] = []
            record: Record | None = start
            while record is not None and id(record) not in state:
                state[id(record)] = 1
                walk.append(record)
                parent = record.parent_id
                if parent is None or parent == record.id:
                    record = None
                    continue
                following = self.lookup(parent)
                if following is None:
                    self.problem(record.line, f"parent {brief(parent)} not found; treated as a root")
                record = following
            if record is not None and state.get(id(record)) == 1:
                self.problem(record.line, f"entry {brief(record.id)} is its own ancestor (parentId cycle)")
            for visited in walk:
                state[id(visited)] = 2

    # ------------------------------------------------------------------ lazy parsing

    def parse(self, record: Record) -> Entry | None:
        """The record's entry, parsing it on first use; ``None`` (and the record dropped) if it is no JSON."""
        if record.entry is None:
            self.parse_pending([record])
        return record.entry

    def parse_all(self, records: Iterable[Record] | None = None) -> list[Entry]:
        """Entries of ``records`` (default: all), parsed once; records that fail are dropped."""
        chosen = list(self.records if records is None else records)
        self.parse_pending(chosen)
        return [record.entry for record in chosen if record.entry is not None]

    def parse_pending(self, records: list[Record]) -> bool:
        """Parse the records not parsed yet; False when one was not JSON (it is dropped then)."""
        pending = [record for record in records if record.entry is None]
        if not pending:
            return True
        if self.reader is None:  # cannot happen: unparsed records always come from a file
            raise SessionError("session entries cannot be read: the session file is gone")
        failed: list[tuple[Record, str]] = []
        changed: list[Record] = []
        loads = orjson.loads
        with no_gc():
            for start, piece, group in self.reader.chunks(pending):
                size = len(piece)
                for record in group:
                    low = record.offset - start
                    high = low + record.size
                    if high >= size or piece[high] != _LF:
                        failed.append((record, "no longer in the file"))
                        continue
                    try:
                        value = loads(piece[low:high])
                    except orjson.JSONDecodeError:
                        value = _tolerant_parse(bytes(piece[low:high]))
                    if value.__class__ is not dict:
                        failed.append((record, "not valid JSON" if value is None else "not a JSON object"))
                        continue
                    record.entry = value
                    if (
                        value.get("id") != record.id
                        or value.get("parentId") != record.parent_id
                        or value.get("type") != record.kind
                    ):
                        changed.append(record)
        for record in changed:
            self._refresh_fields(record)
        if failed:
            self._drop(failed)
        return not failed

    def _refresh_fields(self, record: Record) -> None:
        # Only a line with repeated keys gets here: JSON.parse keeps the last one, and so do we.
        entry = record.entry or {}
        record.kind, record.id, record.parent_id = entry.get("type"), entry.get("id"), entry.get("parentId")
        self.problem(record.line, "repeated type/id/parentId keys; the last ones count")
        self.reindex()

    def _drop(self, failed: list[tuple[Record, str]]) -> None:
        """Forget lines that turned out not to be entries (as pi never loads them) and re-index."""
        gone = set()
        for record, why in failed:
            self.problem(record.line, f"{why}; skipped")
            gone.add(id(record))
        self.records = [record for record in self.records if id(record) not in gone]
        self.reindex()

    def line_bytes(self, records: list[Record]) -> list[bytes]:
        """Each record's line as it is to be written: its original bytes when it is unchanged."""
        self.parse_pending(records)
        records = [record for record in records if record.entry is not None]
        found: dict[int, bytes] = {}
        wanted = [record for record in records if record.raw is None and record.offset >= 0]
        if wanted and self.reader is not None:
            for record, data in self.reader.lines(wanted):
                if data is not None:
                    found[id(record)] = bytes(data)
        lines = []
        for record in records:
            line = record.raw if record.raw is not None else found.get(id(record))
            lines.append(line if line is not None else jsonl.encode(record.entry))
        return lines

    # ------------------------------------------------------------------ walks

    def walk(self, leaf_id: Any) -> list[Record]:
        """Records from the root to ``leaf_id``; stops at a missing parent, and at a parentId cycle."""
        path: list[Record] = []
        append = path.append
        get = self.by_id.get
        lookup = self.lookup
        limit = len(self.by_id)
        record = lookup(leaf_id)
        while record is not None:
            append(record)
            if len(path) > limit:  # longer than the session: there is a cycle; find where it closes
                return self._walk_checked(leaf_id)
            parent = record.parent_id
            record = (get(parent) if parent else None) if parent.__class__ is str else lookup(parent)
        path.reverse()
        return path

    def _walk_checked(self, leaf_id: Any) -> list[Record]:
        path: list[Record] = []
        seen: set[int] = set()
        record = self.lookup(leaf_id)
        while record is not None:
            if id(record) in seen:
                self.problem(record.line, f"entry {brief(record.id)} is its own ancestor (parentId cycle)")
                break
            seen.add(id(record))
            path.append(record)
            record = self.lookup(record.parent_id)
        path.reverse()
        return path

    def branch(self, leaf_id: Any) -> list[Entry]:
        """The entries from the root to ``leaf_id``, parsed; lines that are no entries are walked around.

        The last branch is kept: asking again for it, or for a leaf appended below it, costs only
        the new entries (a run asks for the branch several times per turn).
        """
        last = self._last_branch
        if last is not None and last.generation == self._generation:
            if last.leaf_id == leaf_id and last.count == len(self.records):
                return list(last.entries)
            added = self._walk_appended(last, leaf_id)
            if added is not None and self.parse_pending(added) and last.generation == self._generation:
                entries = last.entries + _parsed(added)
                self._last_branch = _Branch(self._generation, leaf_id, len(self.records), entries)
                return list(entries)
        while True:
            records = self.walk(leaf_id)
            if self.parse_pending(records):
                entries = _parsed(records)
                self._last_branch = _Branch(self._generation, leaf_id, len(self.records), entries)
                return list(entries)
            # a line on the path was not JSON and is gone now: walk again without it

    def _walk_appended(self, last: _Branch, leaf_id: Any) -> list[Record] | None:
        """The records from just below ``last``'s leaf down to ``leaf_id``, when all were appended since."""
        budget = len(self.records) - last.count
        if budget <= 0 or not last.entries:
            return None
        walked: list[Record] = []
        record = self.lookup(leaf_id)
        while record is not None and len(walked) < budget:
            if record.id == last.leaf_id:
                walked.reverse()
                return walked
            walked.append(record)
            record = self.lookup(record.parent_id)
        if record is not None and record.id == last.leaf_id:
            walked.reverse()
            return walked
        return None


class _Branch:
    """The last branch :meth:`EntryIndex.branch` returned, and the index state it was read in."""

    __slots__ = ("count", "entries", "generation", "leaf_id")

    def __init__(self, generation: int, leaf_id: Any, count: int, entries: list[Entry]) -> None:
        self.generation, self.leaf_id, self.count, self.entries = generation, leaf_id, count, entries


def _parsed(records: list[Record]) -> list[Entry]:
    """The entries of records :meth:`EntryIndex.parse_pending` has parsed (none is ``None`` then)."""
    return cast("list[Entry]", [record.entry for record in records])
