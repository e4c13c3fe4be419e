"""Consistency checks of a session file, for ``tau session check`` (read-only).

The store already reports what it meets while reading (:attr:`SessionManager.problems`: lines that
are not JSON, repeated ids, missing parents, parentId cycles). This module adds the checks that need
the meaning of entries: unknown types, broken ``context_edit`` / ``label`` targets, a compaction whose
``firstKeptEntryId`` keeps nothing by accident, messages that cannot reach the model.

Every finding carries the 1-based line of the file it is about (``0``: the file as a whole).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tau.session import jsonl
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
_EDITABLE_ROLES = frozenset(("user", "assistant", "toolResult"))


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
    header: Entry | None = None
    header_line = 0
    lines: list[int] = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
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
        found.append(("error", f"entry type {kind!r} is not a string; the entry is ignored"))
        return found
    if kind not in KNOWN_TYPES:
        found.append(("note", f"unknown entry type {kind!r}: kept in the file, ignored in the context"))
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
            ("error", f"timestamp {entry['timestamp']!r} is not an ISO date; its message gets timestamp null")
        ]
    return []


def _message_problems(message: Any) -> list[tuple[str, str]]:
    if not isinstance(message, dict):
        return [("error", f"message entry holds {message!r} instead of a message object; it is ignored")]
    role = message.get("role")
    if role not in _AGENT_ROLES:
        return [("error", f"message role {role!r} is unknown; the message is not sent to the model")]
    if role in _EDITABLE_ROLES and message.get("content") is None:
        return [("note", f"{role} message has no content; projected with empty content, as pi does")]
    return []


def _replacement_problems(entry: Entry) -> list[tuple[str, str]]:
    if "replacement" not in entry:
        return [
            ("error", "context_edit has no replacement (null or {content}); tau ignores it, pi fails on it")
        ]
    replacement = entry["replacement"]
    if replacement is not None and not (isinstance(replacement, dict) and "content" in replacement):
        return [("error", f"context_edit replacement {replacement!r} is neither null nor {{content: ...}}")]
    return []


class _Index:
    """Ids, lines and ancestry of the entries, for the checks that follow links."""

    def __init__(self, entries: list[Entry], lines: list[int]) -> None:
        self.by_id: dict[Any, Entry] = {}
        self.line_of: dict[int, int] = {}
        for entry, line in zip(entries, lines, strict=True):
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                self.by_id[entry_id] = entry  # a repeated id: the later line wins, as in the store
            self.line_of[id(entry)] = line

    def ancestors(self, entry: Entry) -> set[Any]:
        """Ids of the entries above ``entry`` on its branch (a cycle or a missing parent ends the walk)."""
        found: set[Any] = set()
        parent = entry.get("parentId")
        while isinstance(parent, str) and parent not in found and parent in self.by_id:
            found.add(parent)
            parent = self.by_id[parent].get("parentId")
        return found


def _link_problems(entry: Entry, index: _Index) -> list[tuple[str, str]]:
    kind = entry.get("type")
    if kind in ("context_edit", "label"):
        target = entry.get("targetId")
        if not isinstance(target, str) or target not in index.by_id:
            return [("error", f"{kind} targets {target!r}, which is not an entry of this file")]
        if kind == "context_edit":
            return _edit_target_problems(entry, index.by_id[target], index)
    if kind == "compaction" and "firstKeptEntryId" in entry:
        first_kept = entry["firstKeptEntryId"]
        if first_kept == entry.get("id"):
            return []  # retain-none: the compaction keeps nothing before it, on purpose
        if not isinstance(first_kept, str) or first_kept not in index.by_id:
            return [("error", f"compaction firstKeptEntryId {first_kept!r} is not an entry of this file")]
        if first_kept not in index.ancestors(entry):
            return [
                (
                    "error",
                    f"compaction firstKeptEntryId {first_kept!r} is not above it on its branch; nothing is kept",
                )
            ]
    return []


def _edit_target_problems(edit: Entry, target: Entry, index: _Index) -> list[tuple[str, str]]:
    target_id = target.get("id")
    message = target.get("message")
    editable = target.get("type") == "custom_message" or (
        target.get("type") == "message"
        and isinstance(message, dict)
        and message.get("role") in _EDITABLE_ROLES
    )
    if not editable:
        return [("error", f"context_edit targets {target_id!r}, a {target.get('type')} entry pi never edits")]
    if target_id not in index.ancestors(edit):
        return [
            ("note", f"context_edit targets {target_id!r}, which is not above it on its branch: no effect")
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
