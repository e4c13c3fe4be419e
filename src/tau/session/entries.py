"""Entry dicts in the field order pi 1.6 writes them (pi-host §2.2.1; the golden files decide).

``None`` for an optional field means "absent", as ``undefined`` is in pi (``JSON.stringify`` drops it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.session.messages import content_text

__all__ = [
    "EDITABLE_ROLES",
    "branch_summary_entry",
    "compaction_entry",
    "context_edit_entry",
    "current_system_message",
    "custom_entry",
    "custom_message_entry",
    "header",
    "label_entry",
    "message_entry",
    "model_change_entry",
    "session_info_entry",
    "thinking_level_change_entry",
    "usage_entry",
]

Entry = dict[str, Any]

EDITABLE_ROLES = frozenset(("user", "assistant", "toolResult"))


def _set(entry: Entry, key: str, value: Any) -> None:
    if value is not None:
        entry[key] = value


def _base(kind: str, entry_id: str, parent_id: str | None, timestamp: str) -> Entry:
    return {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": timestamp}


def header(session_id: str, timestamp: str, cwd: str, parent_session: str | None = None) -> Entry:
    """``{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}``."""
    entry: Entry = {"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    _set(entry, "parentSession", parent_session)
    return entry


def message_entry(entry_id: str, parent_id: str | None, timestamp: str, message: dict[str, Any]) -> Entry:
    entry = _base("message", entry_id, parent_id, timestamp)
    entry["message"] = message
    return entry


def thinking_level_change_entry(entry_id: str, parent_id: str | None, timestamp: str, level: str) -> Entry:
    entry = _base("thinking_level_change", entry_id, parent_id, timestamp)
    entry["thinkingLevel"] = level
    return entry


def model_change_entry(
    entry_id: str, parent_id: str | None, timestamp: str, provider: str, model_id: str
) -> Entry:
    entry = _base("model_change", entry_id, parent_id, timestamp)
    entry["provider"] = provider
    entry["modelId"] = model_id
    return entry


def usage_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    kind: str,
    provider: str,
    model: str,
    usage: dict[str, Any],
    note: str | None = None,
) -> Entry:
    entry = _base("usage", entry_id, parent_id, timestamp)
    entry.update(kind=kind, provider=provider, model=model, usage=usage)
    if note:  # pi spreads the note in only when it is non-empty
        entry["note"] = note
    return entry


def compaction_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int | float,
    details: Any = None,
    usage: Mapping[str, Any] | None = None,
    from_hook: bool | None = None,
    system_message: dict[str, Any] | None = None,
) -> Entry:
    entry = _base("compaction", entry_id, parent_id, timestamp)
    entry.update(summary=summary, firstKeptEntryId=first_kept_entry_id, tokensBefore=tokens_before)
    _set(entry, "details", details)
    _set(entry, "usage", usage)
    _set(entry, "fromHook", from_hook)
    _set(entry, "systemMessage", system_message)
    return entry


def branch_summary_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    from_id: str,
    summary: str,
    details: Any = None,
    usage: Mapping[str, Any] | None = None,
    from_hook: bool | None = None,
) -> Entry:
    entry = _base("branch_summary", entry_id, parent_id, timestamp)
    entry.update(fromId=from_id, summary=summary)
    _set(entry, "details", details)
    _set(entry, "usage", usage)
    _set(entry, "fromHook", from_hook)
    return entry


def custom_entry(
    entry_id: str, parent_id: str | None, timestamp: str, custom_type: str, data: Any = None
) -> Entry:
    """Extension state: ``{"type":"custom","customType","data"?,"id","parentId","timestamp"}``."""
    entry: Entry = {"type": "custom", "customType": custom_type}
    _set(entry, "data", data)
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def custom_message_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    custom_type: str,
    content: str | list[dict[str, Any]],
    display: bool,
    details: Any = None,
) -> Entry:
    """Payload first, then the base fields, as pi writes it."""
    entry: Entry = {
        "type": "custom_message",
        "customType": custom_type,
        "content": content,
        "display": display,
    }
    _set(entry, "details", details)
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def context_edit_entry(
    entry_id: str, parent_id: str | None, timestamp: str, target_id: str, replacement: dict[str, Any] | None
) -> Entry:
    entry = _base("context_edit", entry_id, parent_id, timestamp)
    entry["targetId"] = target_id
    entry["replacement"] = replacement
    return entry


def label_entry(
    entry_id: str, parent_id: str | None, timestamp: str, target_id: str, label: str | None
) -> Entry:
    entry = _base("label", entry_id, parent_id, timestamp)
    entry["targetId"] = target_id
    _set(entry, "label", label)
    return entry


def session_info_entry(entry_id: str, parent_id: str | None, timestamp: str, name: str) -> Entry:
    entry = _base("session_info", entry_id, parent_id, timestamp)
    entry["name"] = name
    return entry


def current_system_message(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """pi-ai ``getCurrentSystemMessage``: every system message replayed into one.

    Contents are joined by blank lines, sections patched by name (``None`` deletes), tools removed
    then added by name. ``None`` when the messages hold no system message and no tool. (The session
    layer cannot import ``tau.llm.transcript``, which has the same replay for the providers.)
    """
    content: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    timestamp = None
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = content_text(message.get("content"))
        if text:
            content.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for removed in message.get("toolsRemoved") or []:
            tools.pop(removed.get("name"), None)
        for added in message.get("toolsAdded") or []:
            tools[added.get("name")] = added
    if timestamp is None and not tools:
        return None
    replayed: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        replayed["sections"] = sections
    if tools:
        replayed["toolsAdded"] = list(tools.values())
    replayed["timestamp"] = timestamp if timestamp is not None else 0
    return replayed
