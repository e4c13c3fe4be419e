"""Tree views of a session's entries: ``get_tree`` nodes and the label-free path of a branched session."""

from __future__ import annotations

from typing import Any

from tau.common.jsstr import ms_from_iso

__all__ = ["build_tree", "path_without_labels"]

Entry = dict[str, Any]
Node = dict[str, Any]


def _time(entry: Entry) -> float:
    stamp = entry.get("timestamp")
    try:
        return ms_from_iso(stamp) if isinstance(stamp, str) else 0
    except ValueError:
        return 0  # pi compares NaN here, which leaves such entries where they are


def _node(entry: Entry, labels: dict[Any, Any], label_times: dict[Any, Any]) -> Node:
    node: Node = {"entry": entry, "children": []}
    key = entry.get("id")
    if isinstance(key, str | int | float | bool) and key in labels:
        node["label"] = labels[key]
        node["labelTimestamp"] = label_times.get(key)
    return node


def build_tree(entries: list[Entry], labels: dict[Any, Any], label_times: dict[Any, Any]) -> list[Node]:
    """Roots (parent ``null``, missing, or the entry itself) with children sorted by timestamp."""
    nodes = [_node(entry, labels, label_times) for entry in entries]
    by_id: dict[Any, Node] = {}
    for node in nodes:
        key = node["entry"].get("id")
        if isinstance(key, str | int | float | bool):
            by_id[key] = node
    roots: list[Node] = []
    for node in nodes:
        entry = node["entry"]
        parent_id = entry.get("parentId")
        parent = None
        if (
            parent_id is not None
            and parent_id != entry.get("id")
            and isinstance(parent_id, str | int | float)
        ):
            parent = by_id.get(parent_id)
        (parent["children"] if parent is not None else roots).append(node)
    stack = list(roots)
    seen: set[int] = set()
    while stack:  # iterative: a deep session must not hit the recursion limit
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        node["children"].sort(key=lambda child: _time(child["entry"]))
        stack.extend(node["children"])
    return roots


def path_without_labels(path: list[Entry]) -> list[Entry]:
    """``path`` without its label entries, re-chained so that no kept entry points at a removed label.

    A compaction whose ``firstKeptEntryId`` named a removed label points at the next kept entry.
    Entries that keep their parent are returned as they are (same dict); changed ones are copies with
    the keys in place.
    """
    kept: list[Entry] = []
    pending: list[Any] = []
    replacement: dict[Any, Any] = {}
    parent: Any = None
    for entry in path:
        if entry.get("type") == "label":
            pending.append(entry.get("id"))
            continue
        for label_id in pending:
            replacement[label_id] = entry.get("id")
        pending.clear()
        changes: dict[str, Any] = {}
        if entry.get("parentId") != parent or "parentId" not in entry:
            changes["parentId"] = parent
        if entry.get("type") == "compaction":
            first = entry.get("firstKeptEntryId")
            if first != entry.get("id") and isinstance(first, str) and first in replacement:
                changes["firstKeptEntryId"] = replacement[first]
        kept.append({**entry, **changes} if changes else entry)
        parent = entry.get("id")
    return kept
