"""Replay the system messages of a transcript: the current prompt, sections and tools (pi-host §2.6).

Since pi 0.86 the system prompt and the tool declarations travel inside the transcript: the leading
system message carries the prompt and the first tools, later ones patch it (``content`` appended,
``sections`` patched by name with ``None`` deleting one, ``toolsRemoved`` then ``toolsAdded`` by
name). Providers that accept mid-conversation system messages get them in place; the others get
one collapsed leading system message (:func:`collapse_system_messages`).

Mirrors pi-ai ``utils/transcript.ts`` and ``utils/text.ts``; messages stay plain dicts.
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice, repeat
from typing import Any, Literal

from tau.common import jsjson
from tau.common.positions import positions
from tau.llm.messages import content_text
from tau.llm.types import Message, SystemMessage, Tool, TranscriptContext
from tau.session.projection import unchanged_prefix

__all__ = [
    "ToolSupport",
    "collapse_system_messages",
    "create_initial_system_message",
    "current_system_message",
    "current_system_prompt",
    "current_tools",
    "declarations_equal",
    "declared_tools",
    "has_non_additive_tool_changes",
    "initial_system_message",
    "normalize_context",
    "render_system_message_update",
    "resolve_transcript",
    "resolve_transcript_tools",
    "system_message_text",
    "to_tool_declaration",
    "tool_state_changes",
    "without_initial_system_message",
    "without_system_messages",
]

ToolSupport = Literal["none", "additions", "changes"]


def system_message_text(message: Mapping[str, Any]) -> str:
    """A system message as a whole prompt: its content, then each non-null section, joined by blank lines."""
    parts = [content_text(message["content"])]
    parts.extend(value for value in (message.get("sections") or {}).values() if value is not None)
    return "\n\n".join(part for part in parts if part)


def render_system_message_update(message: Mapping[str, Any]) -> str:
    """A later system message as text, for APIs that accept system messages mid-conversation."""
    parts = []
    text = content_text(message["content"])
    if text:
        parts.append(text)
    for name, value in (message.get("sections") or {}).items():
        if value is None:
            parts.append(f'Removed system prompt section "{name}".')
        else:
            parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)


def create_initial_system_message(
    system_prompt: str | None, tools: Sequence[Tool] | None
) -> SystemMessage | None:
    """The leading system message for a prompt and tool set; ``None`` when both are empty."""
    if not system_prompt and not tools:
        return None
    message: dict[str, Any] = {"role": "system", "content": system_prompt or ""}
    if tools:
        message["toolsAdded"] = list(tools)
    message["timestamp"] = 0
    return message  # type: ignore[return-value]


def normalize_context(context: Mapping[str, Any]) -> TranscriptContext:
    """Fold a ``{"systemPrompt", "messages", "tools"}`` context into a transcript (pi ``normalizeContext``).

    The prompt and tools become a leading system message; the messages follow unchanged.
    """
    head = create_initial_system_message(context.get("systemPrompt"), context.get("tools"))
    messages = list(context.get("messages") or [])
    return {"messages": [head, *messages] if head else messages}


class _SystemScans:
    """Where the system messages of the last few transcripts are, found again for a list that starts
    with the same objects.

    A session asks for the current system message of its transcript between turns, the request
    path and the provider of the converted copy of it: different lists that start with the same
    message objects and only grow. A list is scanned only past the longest leading run of objects
    it shares with one of the remembered lists (a message's role never changes in place).
    """

    SLOTS = 4

    def __init__(self) -> None:
        self._slots: list[tuple[list[Any], list[int]]] = []  # (items scanned, system indices), newest first

    def indices(self, messages: list[Any]) -> list[int]:
        """The positions of the system messages of ``messages`` (a new list)."""
        best, same = -1, 0
        for slot, (items, _) in enumerate(self._slots):
            shared = unchanged_prefix(messages, items)
            if shared > same:
                best, same = slot, shared
            if shared and shared == len(items):
                break
        found: list[int] = []
        if best >= 0:  # that list's scan is extended (another list's stays)
            items, known = self._slots.pop(best)
            found = known[: bisect_left(known, same)]
        found += _role_positions(messages, same, "system")
        self._slots.insert(0, (list(messages), found))
        del self._slots[self.SLOTS :]
        return list(found)


def _role_positions(messages: list[Any], start: int, role: str) -> list[int]:
    """The positions from ``start`` on of the messages with ``role`` (one C-level pass for dicts)."""
    tail = islice(messages, start, None)
    try:
        roles = list(map(dict.get, tail, repeat("role")))
    except TypeError:  # a Mapping that is not a dict: item by item
        roles = [message.get("role") for message in islice(messages, start, None)]
    return positions(roles, role, start)


_scans = _SystemScans()


def _system_messages(messages: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if messages.__class__ is not list:
        return [message for message in messages if message.get("role") == "system"]
    return [messages[index] for index in _scans.indices(messages)]


def initial_system_message(messages: Sequence[Mapping[str, Any]]) -> SystemMessage | None:
    """The leading system message, if the transcript starts with one."""
    if messages and messages[0].get("role") == "system":
        return messages[0]  # type: ignore[return-value]
    return None


def without_initial_system_message(messages: Sequence[Message]) -> list[Message]:
    """The messages without the leading system message (APIs that carry the prompt apart)."""
    return list(messages[1:]) if initial_system_message(messages) else list(messages)


def current_tools(messages: Iterable[Mapping[str, Any]]) -> list[Tool]:
    """The tools after every system message's ``toolsRemoved`` then ``toolsAdded``, by name."""
    return _tools_of(_system_messages(messages))


def _tools_of(system_messages: Iterable[Mapping[str, Any]]) -> list[Tool]:
    tools: dict[str, Tool] = {}
    for message in system_messages:
        for removed in message.get("toolsRemoved") or []:
            tools.pop(removed["name"], None)
        for added in message.get("toolsAdded") or []:
            tools[added["name"]] = added
    return list(tools.values())


def current_system_message(messages: Sequence[Mapping[str, Any]]) -> SystemMessage | None:
    """Every system message replayed into one: contents joined, sections patched, current tools.

    ``None`` when the transcript has no system message. The timestamp is the first one's.
    """
    contents: list[str] = []
    sections: dict[str, str] = {}
    timestamp: int | None = None
    system_messages = _system_messages(messages)
    for message in system_messages:
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = content_text(message["content"])
        if text:
            contents.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = _tools_of(system_messages)
    if timestamp is None and not tools:
        return None
    result: dict[str, Any] = {"role": "system", "content": "\n\n".join(contents)}
    if sections:
        result["sections"] = sections
    if tools:
        result["toolsAdded"] = tools
    result["timestamp"] = timestamp or 0
    return result  # type: ignore[return-value]


def current_system_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The rendered current system prompt (``""`` without system messages)."""
    message = current_system_message(messages)
    return system_message_text(message) if message else ""


def collapse_system_messages(context: Mapping[str, Any]) -> TranscriptContext:
    """One replayed system message first, every other system message dropped.

    For APIs without mid-conversation system messages.
    """
    messages = context["messages"]
    head = current_system_message(messages)
    return {
        "messages": [head, *without_system_messages(messages)] if head else without_system_messages(messages)
    }


def without_system_messages(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """``messages`` without their system messages (slices between the remembered positions)."""
    if messages.__class__ is not list:
        return [message for message in messages if message.get("role") != "system"]
    rest: list[Any] = []
    start = 0
    for index in _scans.indices(messages):
        rest += messages[start:index]
        start = index + 1
    rest += messages[start:]
    return rest


def resolve_transcript(
    context: TranscriptContext, supports_mid_conversation_system: bool | None
) -> TranscriptContext:
    """The transcript as given when the model accepts later system messages, else collapsed."""
    return context if supports_mid_conversation_system else collapse_system_messages(context)


def _declaration(tool: Mapping[str, Any], parameters: Any) -> dict[str, Any]:
    declaration: dict[str, Any] = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": parameters,
    }
    if tool.get("constrainedSampling") is not None:
        declaration["constrainedSampling"] = tool["constrainedSampling"]
    return declaration


def to_tool_declaration(tool: Mapping[str, Any]) -> Tool:
    """Only what the model sees of a tool: name, description, parameters (a copy), constrainedSampling."""
    return _declaration(tool, copy.deepcopy(tool["parameters"]))  # type: ignore[return-value]


def declarations_equal(left: Mapping[str, Any], right: Mapping[str, Any]) -> bool:
    """Whether two tools declare the same interface (compared as serialized declarations).

    Serialized as they stand: copying the parameters first (as :func:`to_tool_declaration` does)
    gives the same bytes and cost two deep copies per tool per request.
    """
    return jsjson.dumps(_declaration(left, left["parameters"])) == jsjson.dumps(
        _declaration(right, right["parameters"])
    )


def tool_state_changes(
    previous: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
) -> tuple[list[Tool], list[dict[str, str]]]:
    """``(toolsAdded, toolsRemoved)`` from one tool set to another; a changed tool is removed and added."""
    before = {tool["name"]: tool for tool in previous}
    after = {tool["name"]: tool for tool in current}
    added = [
        to_tool_declaration(tool)
        for tool in current
        if tool["name"] not in before or not declarations_equal(before[tool["name"]], tool)
    ]
    removed = [
        {"name": tool["name"]}
        for tool in previous
        if tool["name"] not in after or not declarations_equal(tool, after[tool["name"]])
    ]
    return added, removed


def declared_tools(messages: Iterable[Mapping[str, Any]]) -> list[Tool]:
    """Every tool definition the transcript declares (the latest per name), in first-declaration order."""
    definitions: dict[str, Tool] = {}
    for message in _system_messages(messages):
        for tool in message.get("toolsAdded") or []:
            definitions[tool["name"]] = tool
    return list(definitions.values())


def _last_non_additive_change(system_messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the last system message that removes a tool or declares a name again, or -1."""
    declared: set[str] = set()
    last = -1
    for index, message in enumerate(system_messages):
        if message.get("toolsRemoved"):
            last = index
        for tool in message.get("toolsAdded") or []:
            if tool["name"] in declared:
                last = index
            declared.add(tool["name"])
    return last


def has_non_additive_tool_changes(messages: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the tool history has a removal or a redeclaration (not expressible as additions only)."""
    return _last_non_additive_change(_system_messages(messages)) >= 0


def resolve_transcript_tools(
    messages: Sequence[Mapping[str, Any]], support: ToolSupport
) -> tuple[list[Tool], int]:
    """Split tools between the request's top-level list and in-place changes.

    Returns ``(request_tools, folded)``: the top-level tools and the number of leading system
    messages whose tool changes they already hold (later system messages carry theirs in place).
    ``none``: the top level holds the current tools. ``changes``: every declaration is in place.
    ``additions``: the top level holds the state after the last removal or redeclaration.
    """
    system_messages = _system_messages(messages)
    if support == "none":
        return current_tools(system_messages), len(system_messages)
    if support == "changes":
        return [], 0
    folded = max(1 if initial_system_message(messages) else 0, _last_non_additive_change(system_messages) + 1)
    return current_tools(system_messages[:folded]), folded
