"""Projection: session entries on a branch → agent messages → model messages (pi 1.6).

Three layers, as in pi's ``session-manager.ts``:

1. :func:`build_context_entries` keeps the entries that reach the model: with a compaction on the
   branch, the latest one, then its kept range (from ``firstKeptEntryId``, system messages left
   out), then everything after it.
2. :func:`build_session_projection` turns each kept entry into agent messages, applying the latest
   ``context_edit`` per target among the kept entries, and records which entry produced which
   messages. It also gives the branch's thinking level and model.
3. :func:`build_session_context` is the projection without the per-entry map.

:func:`convert_to_llm` (from :mod:`tau.session.messages`) then gives what a provider is sent.

``branch`` is always the root→leaf list of entry dicts (``SessionManager.get_branch()``). Stored
message dicts are reused, never copied: a message is copied only where pi builds a new object
(repaired null content, an edited content). Callers must not mutate what they get back.
"""

from __future__ import annotations

import operator
from itertools import compress, count
from typing import Any

from tau.session.messages import (
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    js_truthy,
)

__all__ = [
    "APPENDABLE",
    "append_to_projection",
    "build_context_entries",
    "build_session_context",
    "build_session_projection",
    "convert_to_llm",
    "entry_to_messages",
    "extend_projection",
    "project_entry",
    "unchanged_prefix",
]

Entry = dict[str, Any]
Message = dict[str, Any]

_EDITABLE_ROLES = frozenset(("user", "assistant", "toolResult", "custom"))
_BLOCK_ROLES = frozenset(("assistant", "toolResult"))
_NULL_CONTENT_REPAIR = {"system": "", "user": None, "assistant": None, "toolResult": None}


def _is_system_message(entry: Entry) -> bool:
    message = entry.get("message")
    return isinstance(message, dict) and message.get("role") == "system"


def build_context_entries(branch: list[Entry]) -> list[Entry]:
    """The entries of ``branch`` (root→leaf) that reach the model: latest compaction, its kept range, the rest.

    ``firstKeptEntryId`` that is not on the branch before the compaction, or that is the
    compaction's own id, keeps nothing before it. Without a compaction the whole branch is returned.
    """
    for index in range(len(branch) - 1, -1, -1):
        if branch[index].get("type") == "compaction":
            return _compacted(branch, index)
    return branch


def _compacted(branch: list[Entry], latest: int) -> list[Entry]:
    """The context entries of ``branch`` whose latest compaction is at ``latest``."""
    compaction = branch[latest]
    compaction_id = compaction.get("id")
    # pi locates the compaction by id (its first occurrence), not by position.
    position = next((i for i, entry in enumerate(branch) if entry.get("id") == compaction_id), latest)
    first_kept = compaction.get("firstKeptEntryId")
    context = [compaction]
    keeping = False
    for entry in branch[:position]:
        if not keeping and entry.get("id") == first_kept:
            keeping = True
        if keeping and not (entry.get("type") == "message" and _is_system_message(entry)):
            context.append(entry)
    context.extend(branch[position + 1 :])
    return context


def _role(message: dict[str, Any]) -> str | None:
    # A file may hold any JSON as a role; a list or an object is no role (and cannot be looked up).
    role = message.get("role")
    return role if isinstance(role, str) else None


def entry_to_messages(entry: Entry) -> list[Message]:
    """pi's ``sessionEntryToContextMessages``: the agent messages one entry contributes (no edits)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return []
        role = _role(message)
        if role in _NULL_CONTENT_REPAIR and message.get("content") is None:
            # Files are read unvalidated: old versions or hand edits can hold null content.
            repaired = _NULL_CONTENT_REPAIR[role]
            return [{**message, "content": [] if repaired is None else repaired}]
        return [message]
    if kind == "custom_message":
        return [create_custom_message(entry)]
    if kind == "branch_summary":
        return [create_branch_summary_message(entry)] if js_truthy(entry.get("summary")) else []
    if kind == "compaction":
        summary = create_compaction_summary_message(entry)
        system: Any = entry.get("systemMessage")  # passed on as the file holds it, as pi does
        return [system, summary] if js_truthy(system) else [summary]
    return []


def project_entry(entry: Entry, edit: Entry | None) -> list[Message]:
    """pi's ``projectContextEntry``: ``entry``'s messages with its latest ``context_edit`` applied."""
    messages = entry_to_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return []
    return [_replace_content(message, replacement) for message in messages]


def _replace_content(message: Any, replacement: Any) -> Any:
    if not isinstance(message, dict) or _role(message) not in _EDITABLE_ROLES:
        return message
    edited = dict(message)
    if not isinstance(replacement, dict) or "content" not in replacement:
        # ``{...message, content: undefined}``: JSON.stringify leaves the key out.
        edited.pop("content", None)
        return edited
    content = replacement["content"]
    if isinstance(content, str) and _role(message) in _BLOCK_ROLES:
        content = [{"type": "text", "text": content}]
    edited["content"] = content
    return edited


def _scan(branch: list[Entry]) -> tuple[Any, dict[str, Any] | None, int, bool]:
    """One walk over the branch: the last thinking level, the last model (``model_change`` or
    assistant message), the position of the latest compaction (-1: none), whether it has edits."""
    thinking_level: Any = "off"
    last_model: Entry | None = None
    latest = -1
    has_edits = False
    for index, entry in enumerate(branch):
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                last_model = entry
        elif kind == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel")
        elif kind == "model_change":
            last_model = entry
        elif kind == "compaction":
            latest = index
        elif kind == "context_edit":
            has_edits = True
    model = _entry_model(last_model)
    return thinking_level, model, latest, has_edits


def _entry_model(last_model: Entry | None) -> dict[str, Any] | None:
    """The branch's model from its last ``model_change`` or assistant message entry (``None``: neither)."""
    if last_model is None:
        return None
    if last_model.get("type") == "model_change":
        return _model(last_model, "provider", "modelId")
    return _model(last_model["message"], "provider", "model")


def _model(source: dict[str, Any], provider_key: str, model_key: str) -> dict[str, Any]:
    # A missing field is undefined in pi: JSON.stringify leaves it out, and so do we.
    model = {}
    if provider_key in source:
        model["provider"] = source[provider_key]
    if model_key in source:
        model["modelId"] = source[model_key]
    return model


def _edit_key(value: Any) -> Any:
    # Entry ids are strings; anything else (malformed) must not match by Python equality.
    return value if value is None or isinstance(value, str) else ("not-an-id", id(value))


def build_session_projection(branch: list[Entry]) -> dict[str, Any]:
    """``{"entries": [{"sourceEntry", "messages"}], "messages", "thinkingLevel", "model"}`` for ``branch``.

    ``thinkingLevel`` and ``model`` come from the whole branch, the messages from the context
    entries only. An older compaction inside the kept range contributes nothing; only the one at
    the head gives its system message and summary.
    """
    plain = _plain_projection(branch)
    return plain if plain is not None else _projection(branch)


def _projection(branch: list[Entry]) -> dict[str, Any]:
    """:func:`build_session_projection` of any branch (compactions and context edits applied)."""
    thinking_level, model, latest, has_edits = _scan(branch)
    context = _compacted(branch, latest) if latest >= 0 else branch
    edits: dict[Any, Entry] = {}
    for entry in context if has_edits else ():
        # An edit without ``replacement`` would crash pi; tau ignores it (``tau session check`` reports it).
        if entry.get("type") == "context_edit" and "replacement" in entry:
            edits[_edit_key(entry.get("targetId"))] = entry
    projected: list[dict[str, Any]] = []
    messages: list[Message] = []
    append_entry = projected.append
    for index, entry in enumerate(context):
        # Fast path for the common case (a stored message, no edits): reuse the stored dict.
        message = entry.get("message") if not edits and entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("content") is not None:
            contributed = [message]
        elif index > 0 and entry.get("type") == "compaction":
            contributed = []
        elif edits:
            contributed = project_entry(entry, edits.get(_edit_key(entry.get("id"))))
        else:
            contributed = entry_to_messages(entry)
        append_entry({"sourceEntry": entry, "messages": contributed})
        messages += contributed
    return {"entries": projected, "messages": messages, "thinkingLevel": thinking_level, "model": model}


def _plain_projection(branch: list[Entry]) -> dict[str, Any] | None:
    """:func:`build_session_projection` in one pass over ``branch``, or ``None`` when it holds a
    compaction or a context edit (then every entry is its own context entry, with no edits)."""
    projected: list[dict[str, Any]] = []
    messages: list[Message] = []
    append_entry, append = projected.append, messages.append
    thinking_level: Any = "off"
    last_model: Entry | None = None
    for entry in branch:
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                if message.get("role") == "assistant":
                    last_model = entry
                if message.get("content") is not None:  # the stored dict, reused
                    append_entry({"sourceEntry": entry, "messages": [message]})
                    append(message)
                    continue
        elif kind == "compaction" or kind == "context_edit":
            return None
        elif kind == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel")
        elif kind == "model_change":
            last_model = entry
        contributed = entry_to_messages(entry)
        append_entry({"sourceEntry": entry, "messages": contributed})
        messages += contributed
    model = _entry_model(last_model)
    return {"entries": projected, "messages": messages, "thinkingLevel": thinking_level, "model": model}


def _plain_context(branch: list[Entry]) -> dict[str, Any] | None:
    """The context in one pass over ``branch``, or ``None`` when it holds a compaction or a context edit.

    The common case (no compaction, no edit): every entry is its own context entry, so the settings
    and the messages come from the same walk, with no per-entry bookkeeping.
    """
    messages: list[Message] = []
    append = messages.append
    thinking_level: Any = "off"
    model_source: Entry | None = None
    model_keys = ("provider", "modelId")
    for entry in branch:
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if not isinstance(message, dict):
                continue
            if message.get("content") is not None:
                append(message)
            else:
                messages += entry_to_messages(entry)
            if message.get("role") == "assistant":
                model_source, model_keys = message, ("provider", "model")
        elif kind == "compaction" or kind == "context_edit":
            return None
        elif kind == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel")
        elif kind == "model_change":
            model_source, model_keys = entry, ("provider", "modelId")
        elif kind == "custom_message" or kind == "branch_summary":
            messages += entry_to_messages(entry)
    model = None if model_source is None else _model(model_source, *model_keys)
    return {"messages": messages, "thinkingLevel": thinking_level, "model": model}


def build_session_context(branch: list[Entry]) -> dict[str, Any]:
    """``{"messages", "thinkingLevel", "model"}`` for ``branch``: the projection without its entry map."""
    plain = _plain_context(branch)
    if plain is not None:
        return plain
    projection = build_session_projection(branch)
    return {
        "messages": projection["messages"],
        "thinkingLevel": projection["thinkingLevel"],
        "model": projection["model"],
    }


def unchanged_prefix(messages: list[Any], previous: list[Any]) -> int:
    """How many leading items of ``messages`` are the very objects ``previous`` starts with.

    A C-level pass (no Python code per item): what an incremental pass over the request messages
    uses to find the messages it has already looked at.
    """
    shortest = min(len(messages), len(previous))
    # The common case (``previous`` is a prefix of ``messages``) needs no index per item: about
    # half the cost of the pass that finds where they part.
    if all(map(operator.is_, messages, previous)):
        return shortest
    return next(compress(count(), map(operator.is_not, messages, previous)), shortest)


# Entries that add to the end of a projection without changing what came before: a projection
# cache extends over them; any other entry (a compaction, a context edit, a branch summary)
# makes it build the projection again.
APPENDABLE = frozenset(
    {
        "message",
        "custom_message",
        "model_change",
        "thinking_level_change",
        "label",
        "session_info",
        "custom",
        "usage",
    }
)


def append_to_projection(projection: dict[str, Any], entry: Entry) -> None:
    """Extend ``projection`` (in place) with one entry of a type in :data:`APPENDABLE` added at its leaf."""
    kind = entry.get("type")
    messages = entry_to_messages(entry)
    projection["entries"].append({"sourceEntry": entry, "messages": messages})
    projection["messages"].extend(messages)
    if kind == "thinking_level_change":
        projection["thinkingLevel"] = entry.get("thinkingLevel")
    elif kind == "model_change":
        projection["model"] = {
            key: entry[field]
            for key, field in (("provider", "provider"), ("modelId", "modelId"))
            if field in entry
        }
    elif kind == "message" and (entry.get("message") or {}).get("role") == "assistant":
        message = entry["message"]
        projection["model"] = {
            key: message[field]
            for key, field in (("provider", "provider"), ("modelId", "model"))
            if field in message
        }


def extend_projection(projection: dict[str, Any], added: list[Entry]) -> bool:
    """Extend ``projection`` with the entries ``added`` at its leaf (oldest first) when every one
    only appends (:data:`APPENDABLE`); False, and ``projection`` untouched, when one does not."""
    if not all(entry.get("type") in APPENDABLE for entry in added):
        return False
    for entry in added:
        append_to_projection(projection, entry)
    return True
