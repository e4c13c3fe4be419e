"""Consistency checks of a session file, for ``tau session check`` (read-only).

The store already reports what it meets while reading (:attr:`SessionManager.problems`: lines that
are not JSON, repeated ids, missing parents, parentId cycles). This module adds the checks that need
the meaning of entries: unknown types, broken ``context_edit`` / ``label`` targets, a compaction whose
``firstKeptEntryId`` keeps nothing by accident, messages that cannot reach the model.

Every finding carries the 1-based line of the file it is about (``0``: the file as a whole).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from tau.common.brief import brief, label
from tau.common.dataclass import dataclass
from tau.common.regular_files import open_regular
from tau.session import jsonl
from tau.session.entries import EDITABLE_ROLES
from tau.session.messages import js_date_ms

__all__ = ["KNOWN_TYPES", "Finding", "check_entries", "read_layout"]

Entry = dict[str, Any]

KNOWN_TYPES = frozenset(
    (
        "message",
        "model_change",
        "thinking_level_change",
        "usage",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "context_edit",
        "label",
        "session_info",
    )
)
_AGENT_ROLES = frozenset(
    (
        "system",
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    )
)


@dataclass(frozen=True, order=True)
class Finding:
    """One thing wrong (``error``) or worth knowing (``note``) about a line of a session file."""

    line: int
    severity: Literal["error", "note"]
    message: str


@dataclass
class Layout:
    """Where things are in the file: the header as written (before migration) and each entry's line."""

    header: Entry
    header_line: int
    entry_lines: list[int]


def read_layout(path: Path) -> Layout | None:
    """The header line and the line of every entry, in the order ``SessionManager.get_entries()`` lists them.

    Applies the store's reading rule (LF-separated lines; the first JSON object is the header; every
    later line that parses to an object, other than an extra header line, is an entry). ``None`` when
    no line parses to an object.
    """
    with open(open_regular(path), "rb") as stream:  # line by line: a huge file is never held twice
        return _layout(stream)


def _layout(stream: Any) -> Layout | None:
    header: Entry | None = None
    header_line = 0
    lines: list[int] = []
    for number, raw in enumerate(stream, start=1):  # binary lines split on LF only, as pi splits
        if not raw.strip():
            continue
        try:
            value = jsonl.parse(raw)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        if header is None:
            header, header_line = value, number
        elif value.get("type") != "session":
            lines.append(number)
    return None if header is None else Layout(header, header_line, lines)


def _entry_problems(entry: Entry) -> list[tuple[str, str]]:
    """Findings about one entry on its own: ``(severity, message)``."""
    kind = entry.get("type")
    found: list[tuple[str, str]] = []
    if "id" not in entry:
        found.append(("error", "entry has no id; nothing can point at it and it is never on a branch"))
    if not isinstance(kind, str):
        found.append(("error", f"entry type {brief(kind)} is not a string; the entry is ignored"))
        return found
    if kind not in KNOWN_TYPES:
        found.append(("note", f"unknown entry type {brief(kind)}: kept in the file, ignored in the context"))
        return found
    if kind == "message":
        found += _message_problems(entry.get("message"))
    elif kind in ("custom_message", "compaction", "branch_summary"):
        found += _timestamp_problems(entry, kind)
    if kind == "context_edit":
        found += _replacement_problems(entry)
    if kind == "compaction" and "firstKeptEntryId" not in entry:
        found.append(("error", "compaction has no firstKeptEntryId; nothing before it is kept"))
    return found


def _timestamp_problems(entry: Entry, kind: str) -> list[tuple[str, str]]:
    # These entries' messages take their timestamp from the entry: new Date(timestamp).getTime().
    if "timestamp" not in entry:
        return [("error", f"{kind} has no timestamp; its message gets timestamp null")]
    if js_date_ms(entry["timestamp"]) is None:
        return [
            (
                "error",
                f"timestamp {brief(entry['timestamp'])} is not an ISO date; its message gets timestamp null",
            )
        ]
    return []


def _message_problems(message: Any) -> list[tuple[str, str]]:
    if not isinstance(message, dict):
        return [("error", f"message entry holds {brief(message)} instead of a message object; it is ignored")]
    role = message.get("role")
    if not isinstance(role, str) or role not in _AGENT_ROLES:
        return [("error", f"message role {brief(role)} is unknown; the message is not sent to the model")]
    if role in EDITABLE_ROLES and message.get("content") is None:
        return [("note", f"{role} message has no content; projected with empty content, as pi does")]
    return []


def _replacement_problems(entry: Entry) -> list[tuple[str, str]]:
    if "replacement" not in entry:
        return [
            ("error", "context_edit has no replacement (null or {content}); tau ignores it, pi fails on it")
        ]
    replacement = entry["replacement"]
    if replacement is not None and not (isinstance(replacement, dict) and "content" in replacement):
        return [
            ("error", f"context_edit replacement {brief(replacement)} is neither null nor {{content: ...}}")
        ]
    return []


class _Index:
    """Ids, lines and ancestry of the entries, for the checks that follow links.

    "Is A above B on its branch" is answered in constant time from one depth-first numbering of the
    parentId tree (each entry's interval contains its descendants'), so a file of 100,000 edits is
    checked in linear time instead of walking every branch once per edit.
    """

    def __init__(self, entries: list[Entry], lines: list[int]) -> None:
        self.by_id: dict[str, Entry] = {}
        self.line_of: dict[int, int] = {}
        for entry, line in zip(entries, lines, strict=True):
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                self.by_id[entry_id] = entry  # a repeated id: the later line wins, as in the store
            self.line_of[id(entry)] = line
        self.parent = {key: self._parent_of(entry) for key, entry in self.by_id.items()}
        self.enter: dict[str, int] = {}
        self.leave: dict[str, int] = {}
        self.ring: dict[str, int] = {}  # an entry on a parentId cycle -> the cycle's number
        self.reaches: dict[str, int] = {}  # an entry whose walk up ends in a cycle -> that cycle
        self._number()

    def _parent_of(self, entry: Entry) -> str | None:
        parent = entry.get("parentId")
        return parent if isinstance(parent, str) and parent in self.by_id else None

    def _number(self) -> None:
        """Number the entries depth first from the roots, then from one entry of each cycle."""
        children: dict[str, list[str]] = {}
        for key, parent in self.parent.items():
            if parent is not None and parent != key:
                children.setdefault(parent, []).append(key)
        starts = [key for key, parent in self.parent.items() if parent is None or parent == key]
        clock = 0
        for start in [*starts, *self._find_cycles()]:
            if start in self.enter:
                continue
            self.enter[start] = clock = clock + 1
            stack = [(start, iter(children.get(start, ())))]
            while stack:
                key, pending = stack[-1]
                child = next(pending, None)
                if child is None:
                    stack.pop()
                    self.leave[key] = clock = clock + 1
                elif child not in self.enter:
                    self.enter[child] = clock = clock + 1
                    stack.append((child, iter(children.get(child, ()))))

    def _find_cycles(self) -> list[str]:
        """One entry of each parentId cycle; fills :attr:`ring` and :attr:`reaches`."""
        heads: list[str] = []
        done: set[str] = set()
        for start in self.parent:
            walk: list[str] = []
            on_walk: set[str] = set()
            key: str | None = start
            while key is not None and key not in done and key not in on_walk and self.parent[key] != key:
                walk.append(key)
                on_walk.add(key)
                key = self.parent[key]
            if key is not None and key in on_walk:  # the walk closed a new cycle at key
                heads.append(key)
                member = key
                while member not in self.ring:
                    self.ring[member] = len(heads)
                    member = self.parent[member]  # type: ignore[assignment]
            ends_in = self.reaches.get(key) if key is not None else None
            if key is not None and key in self.ring:
                ends_in = self.ring[key]
            for visited in walk:
                done.add(visited)
                if ends_in is not None:
                    self.reaches[visited] = ends_in
        return heads

    def is_above(self, key: Any, entry: Entry) -> bool:
        """Whether ``key`` is the id of an entry above ``entry`` on its branch (walking parentIds).

        A walk that enters a cycle goes round all of it, so every entry of that cycle is above.
        """
        parent = self._parent_of(entry)
        if parent is None or not isinstance(key, str) or key not in self.by_id:
            return False
        if key == parent or (parent in self.reaches and self.ring.get(key) == self.reaches[parent]):
            return True
        return self.enter[key] < self.enter[parent] and self.leave[parent] <= self.leave[key]


def _link_problems(entry: Entry, index: _Index) -> list[tuple[str, str]]:
    kind = entry.get("type")
    if kind in ("context_edit", "label"):
        target = entry.get("targetId")
        if not isinstance(target, str) or target not in index.by_id:
            return [("error", f"{kind} targets {brief(target)}, which is not an entry of this file")]
        if kind == "context_edit":
            return _edit_target_problems(entry, index.by_id[target], index)
    if kind == "compaction" and "firstKeptEntryId" in entry:
        first_kept = entry["firstKeptEntryId"]
        if first_kept == entry.get("id"):
            return []  # retain-none: the compaction keeps nothing before it, on purpose
        if not isinstance(first_kept, str) or first_kept not in index.by_id:
            return [
                ("error", f"compaction firstKeptEntryId {brief(first_kept)} is not an entry of this file")
            ]
        if not index.is_above(first_kept, entry):
            return [
                (
                    "error",
                    f"compaction firstKeptEntryId {brief(first_kept)} is not above it on its branch; nothing is kept",
                )
            ]
    return []


def _edit_target_problems(edit: Entry, target: Entry, index: _Index) -> list[tuple[str, str]]:
    target_id = target.get("id")
    message = target.get("message")
    editable = target.get("type") == "custom_message" or (
        target.get("type") == "message"
        and isinstance(message, dict)
        and isinstance(message.get("role"), str)
        and message["role"] in EDITABLE_ROLES
    )
    if not editable:
        return [
            (
                "error",
                f"context_edit targets {brief(target_id)}, a {label(target.get('type'))} entry pi never edits",
            )
        ]
    if not index.is_above(target_id, edit):
        return [
            (
                "note",
                f"context_edit targets {brief(target_id)}, which is not above it on its branch: no effect",
            )
        ]
    return []


def check_entries(entries: list[Entry], lines: list[int]) -> list[Finding]:
    """Findings for ``entries`` (file order, migrated) whose lines are ``lines``, sorted by line."""
    index = _Index(entries, lines)
    findings = []
    for entry, line in zip(entries, lines, strict=True):
        for severity, message in _entry_problems(entry) + _link_problems(entry, index):
            findings.append(Finding(line, severity, message))  # type: ignore[arg-type]
    return sorted(findings)
