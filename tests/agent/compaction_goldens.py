"""Reading pi's golden session files for the compaction tests (entries, branches, goldens)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from tau.common.jsjson import loads

Entry = dict[str, Any]


@cache
def read_entries(path: Path) -> tuple[Entry, ...]:
    """The entries of a session file, header excluded (LF-split: U+2028 may sit inside JSON strings)."""
    lines = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    return tuple(entry for entry in map(loads, lines) if entry.get("type") != "session")


def branch_of(entries: tuple[Entry, ...], leaf_id: str | None = None) -> list[Entry]:
    """Root→leaf entries of the branch ending at ``leaf_id`` (default: the last entry in file order)."""
    by_id = {entry["id"]: entry for entry in entries}
    current = by_id[leaf_id] if leaf_id else entries[-1]
    branch = []
    while current is not None:
        branch.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if parent else None
    branch.reverse()
    return branch


@cache
def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
