"""The transcript as requests see it when ``prepare_loadout`` hides tool declarations (pi).

Every system message loses the hidden tools from ``toolsAdded``/``toolsRemoved``; the stored
transcript keeps them. The stripped copy of a system message is kept between requests and handed
out again while its source is the same object with the same values: the passes after this one
(the conversion, the provider's per-message memo) find the messages they saw last time by
identity, and a new copy per request would make them start over from the first system message.
Only the messages appended since the last request are looked at (the leading ones that are the
same objects keep their places); the system messages among the kept ones are checked again (a
``context`` handler may have edited one in place).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from tau.session.projection import unchanged_prefix

__all__ = ["HiddenDeclarations", "without_declarations"]

Message = dict[str, Any]
_KEYS = ("toolsAdded", "toolsRemoved")


def _declares(message: Any) -> bool:
    return message.get("role") == "system" and bool(message.get("toolsAdded") or message.get("toolsRemoved"))


def _stripped(message: Message, hidden: frozenset[str]) -> Message:
    copy = {key: value for key, value in message.items() if key not in _KEYS}
    added = [tool for tool in message.get("toolsAdded") or [] if tool.get("name") not in hidden]
    removed = [tool for tool in message.get("toolsRemoved") or [] if tool.get("name") not in hidden]
    if added:
        copy["toolsAdded"] = added
    if removed:
        copy["toolsRemoved"] = removed
    return copy


def _snapshot(message: Message) -> Message:
    # As deep as an in-place edit may go: the message and its declaration lists.
    return {
        key: list(value) if key in _KEYS and isinstance(value, list) else value
        for key, value in message.items()
    }


def without_declarations(messages: list[Message], hidden: set[str] | frozenset[str]) -> list[Message]:
    """``messages`` with ``hidden`` left out of every system message's declarations (new copies)."""
    names = frozenset(hidden)
    return [_stripped(message, names) if _declares(message) else message for message in messages]


class HiddenDeclarations:
    """:func:`without_declarations`, request after request, with the stripped copies kept."""

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._out: list[Any] = []
        self._system: list[int] = []  # positions in ``_given`` of its system messages
        self._made: dict[int, tuple[Message, Message, Message]] = {}  # id → (source, snapshot, copy)
        self._hidden: frozenset[str] = frozenset()

    def apply(self, messages: list[Message], hidden: set[str] | frozenset[str]) -> list[Message]:
        names = frozenset(hidden)
        if names != self._hidden:
            self._given, self._out, self._system, self._made = [], [], [], {}
            self._hidden = names
        same = unchanged_prefix(messages, self._given)
        system = self._system[: bisect_left(self._system, same)]
        out = self._out[:same]
        for index in system:  # a kept system message may have been edited in place
            out[index] = self._copy(messages[index])
        for index in range(same, len(messages)):
            message = messages[index]
            if message.get("role") == "system":  # (the role of a message object never changes)
                system.append(index)
                out.append(self._copy(message))
            else:
                out.append(message)
        made = self._made
        if len(made) > 2 * len(system) + 8:  # copies of messages no longer given
            live = {id(messages[index]) for index in system}
            self._made = {key: value for key, value in made.items() if key in live}
        self._given, self._out, self._system = list(messages), out, system
        return list(out)

    def _copy(self, message: Message) -> Message:
        if not _declares(message):
            return message
        cached = self._made.get(id(message))
        if cached is not None and cached[0] is message and cached[1] == message:
            return cached[2]
        copy = _stripped(message, self._hidden)
        self._made[id(message)] = (message, _snapshot(message), copy)
        return copy
