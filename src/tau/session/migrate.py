"""Migration of session versions 1 and 2 to version 3, in memory, the way pi 1.6 does it.

- v1 → v2: every entry gets ``id`` (random 8 hex) and ``parentId`` (a linear chain in file order,
  the first ``null``), appended after its own keys; a compaction's ``firstKeptEntryIndex`` (an index
  into the file's parsed lines, the header being 0) is replaced by ``firstKeptEntryId`` at the end.
- v2 → v3: message role ``hookMessage`` becomes ``custom``.
- The header's ``version`` is set (appended as the last key when absent).

Python dicts keep key order like JS objects (assigning an existing key keeps its place), so the
rewritten lines have pi's key order.
"""

from __future__ import annotations

from typing import Any

from tau.session.ids import new_entry_id

__all__ = ["CURRENT_VERSION", "file_version", "migrate"]

CURRENT_VERSION = 3

Entry = dict[str, Any]


def file_version(header: Entry) -> Any:
    """The header's version (absent means 1)."""
    version = header.get("version")
    return 1 if version is None else version


def needs_migration(header: Entry) -> bool:
    """True when pi would migrate (and rewrite) a file with this header."""
    version = file_version(header)
    return isinstance(version, int | float) and not isinstance(version, bool) and version < CURRENT_VERSION


def migrate(header: Entry, entries: list[Entry]) -> set[int]:
    """Bring ``header`` and ``entries`` (file order, header excluded) to version 3 in place.

    Returns the positions in ``entries`` that changed. Does nothing for a current or newer file.
    """
    if not needs_migration(header):
        return set()
    changed: set[int] = set()
    version = file_version(header)
    if version < 2:
        header["version"] = 2
        _add_tree_fields(header, entries)
        changed.update(range(len(entries)))
    header["version"] = CURRENT_VERSION
    for position, entry in enumerate(entries):
        message = entry.get("message")
        if entry.get("type") == "session":
            entry["version"] = CURRENT_VERSION  # pi stamps every header-typed line
            changed.add(position)
        elif (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
            changed.add(position)
    return changed


def _add_tree_fields(header: Entry, entries: list[Entry]) -> None:
    taken: set[str] = set()
    previous: str | None = None
    # pi indexes its parsed list, header included; a second header line stays in place untouched.
    parsed = [header, *entries]
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        entry["id"] = new_entry_id(taken)
        taken.add(entry["id"])
        entry["parentId"] = previous
        previous = entry["id"]
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            _convert_first_kept(entry, parsed)


def _convert_first_kept(entry: Entry, parsed: list[Entry]) -> None:
    index = entry["firstKeptEntryIndex"]
    if not isinstance(index, int | float) or isinstance(index, bool):
        return  # pi converts only numbers and leaves anything else as it is
    whole = isinstance(index, int) or index.is_integer()
    target = parsed[int(index)] if whole and 0 <= index < len(parsed) else None
    if target is not None and target.get("type") != "session" and "id" in target:
        entry["firstKeptEntryId"] = target["id"]
    del entry["firstKeptEntryIndex"]
