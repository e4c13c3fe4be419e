"""The copy of the request messages that ``context`` handlers may edit.

pi hands ``context`` handlers a ``structuredClone`` of every message. A deep copy of a long
session's messages costs far more than the rest of the request (hundreds of milliseconds for
10,000 messages), so tau copies only what handlers may change in place: each message dict, its
``content`` list and the content-block dicts. Deeper values (tool-call ``arguments``, ``details``)
are shared with the session and must be replaced, never mutated.

Copies are kept between requests: a message whose copy still equals its source is handed out
again instead of being copied anew; a copy a handler edited is made fresh from its source.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ContextCopies"]

Message = dict[str, Any]


def _copy(message: Message) -> Message:
    copied = dict(message)
    content = copied.get("content")
    if isinstance(content, list):
        copied["content"] = [dict(block) if isinstance(block, dict) else block for block in content]
    return copied


class ContextCopies:
    """Per-session cache of editable message copies, keyed by the source message object."""

    def __init__(self) -> None:
        self._copies: dict[int, tuple[Message, Message]] = {}

    def copy(self, messages: list[Message]) -> list[Message]:
        """Editable copies of ``messages``, in order; the sources are never handed out."""
        previous, fresh = self._copies, {}
        result = []
        for message in messages:
            cached = previous.get(id(message))
            if cached is not None and cached[0] is message and cached[1] == message:
                copied = cached[1]
            else:
                copied = _copy(message)
            fresh[id(message)] = (message, copied)
            result.append(copied)
        self._copies = fresh
        return result
