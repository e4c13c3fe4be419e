"""What a fork writes: a copy of a whole session file under a new header (``SessionManager.fork_from``),
and the entries of a branched session, the root→leaf path with its labels re-created at its end
(``SessionManager.create_branched_session``). Stored entries keep their line bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau.session import entries as make
from tau.session.ids import new_entry_id
from tau.session.index import EntryIndex
from tau.session.lock import SessionWriter
from tau.session.records import Record
from tau.session.storage import make_line

__all__ = ["branch_records", "write_copy"]

Entry = dict[str, Any]


def write_copy(index: EntryIndex, header: Entry, file: Path) -> None:
    """Create ``file``: ``header``, then every entry line of ``index`` byte for byte (the caller parsed
    them first, so lines that do not parse are dropped as a reader drops them)."""
    lines = [make_line(header), *index.line_bytes(index.entry_records())]
    SessionWriter.create(file, b"\n".join(lines) + b"\n").close()


def branch_records(index: EntryIndex, path: list[Entry]) -> list[Record]:
    """The records of a branched session holding ``path`` (a root→leaf branch of ``index``): its
    entries without label changes, then a label entry for each label on a kept entry, chained at
    the end as pi re-creates them."""
    from tau.session.tree import path_without_labels

    kept = path_without_labels(path)
    kept_ids = {entry.get("id") for entry in kept}
    taken = set(kept_ids)
    parent = kept[-1].get("id") if kept else None
    labels: list[Entry] = []
    for target, label in index.labels.items():
        if target in kept_ids:
            entry = make.label_entry(new_entry_id(taken), parent, index.label_times[target], target, label)
            taken.add(entry["id"])
            labels.append(entry)
            parent = entry["id"]
    return _kept_records(index, kept) + [Record.from_entry(entry) for entry in labels]


def _kept_records(index: EntryIndex, kept: list[Entry]) -> list[Record]:
    """Records for the kept entries: stored entries keep their line bytes."""
    originals = [index.lookup(entry.get("id")) for entry in kept]
    same = [
        original if original is not None and original.entry is entry else None
        for original, entry in zip(originals, kept, strict=True)
    ]
    known = [original for original in same if original is not None]
    raw_of = dict(zip(map(id, known), index.line_bytes(known), strict=True))
    records = []
    for original, entry in zip(same, kept, strict=True):
        record = Record.from_entry(entry)
        if original is not None:
            record.raw = raw_of.get(id(original))
        records.append(record)
    return records
