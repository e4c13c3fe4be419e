"""The copy of the request messages that ``context`` handlers may edit.

pi hands ``context`` handlers a ``structuredClone`` of every message. A deep copy of a long
session's messages costs far more than the rest of the request (hundreds of milliseconds for
10,000 messages), so tau copies only what handlers may change in place: each message dict, its
``content`` list and the content-block dicts. Deeper values (tool-call ``arguments``, ``details``)
are shared with the session and must be replaced, never mutated.

Copies are kept between requests, by position: while the request's leading messages are the same
source objects as last time (a run only appends), their copies are handed out again. A copy that
no longer equals its source (a handler edited it) is restored in place, so it keeps its identity:
the passes that remember how far they got (:func:`unchanged_prefix`) still find it where it was.
Checking every copy is one C-level comparison per message; only the new tail is copied.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from itertools import compress, count
from typing import Any

from tau.session.projection import unchanged_prefix

__all__ = ["ContextCopies", "unchanged_prefix"]

Message = dict[str, Any]


def _copy(message: Message) -> Message:
    copied = dict(message)
    content = copied.get("content")
    if isinstance(content, list):
        copied["content"] = [dict(block) if isinstance(block, dict) else block for block in content]
    return copied


def _restore(copied: Message, message: Message) -> None:
    copied.clear()
    copied.update(_copy(message))


def _split_system(messages: list[Any], start: int, system: list[int], visible: list[Any]) -> None:
    """Append the positions of ``messages[start:]``'s system messages to ``system``, the others to ``visible``."""
    for index in range(start, len(messages)):
        message = messages[index]
        if message.get("role") == "system":
            system.append(index)
        else:
            visible.append(message)


class _VisibleFilter:
    """The messages of a ``context`` chain step without the system messages, kept between requests.

    The leading messages that are the same objects as last time keep their place (the role of a
    message object is never changed in place); only the rest is looked at.
    """

    __slots__ = ("_given", "_system", "_visible")

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._system: list[int] = []  # indices in ``_given`` of its system messages
        self._visible: list[Any] = []

    def visible(self, messages: list[Any]) -> list[Any]:
        same = unchanged_prefix(messages, self._given)
        kept = bisect_left(self._system, same)
        system = self._system[:kept]
        visible = self._visible[: same - kept]
        _split_system(messages, same, system, visible)
        self._given, self._system, self._visible = list(messages), system, visible
        return list(visible)


class ContextCopies:
    """Per-session cache of editable message copies, by position, for the source message objects."""

    def __init__(self) -> None:
        self._sources: list[Any] = []
        self._copies: list[Any] = []
        self._filters: list[_VisibleFilter] = []
        self._returned: list[Any] | None = None  # the list the last copy() returned
        self._system: list[int] = []  # positions of the system messages among the copies
        self._view: list[Any] = []  # the copies without the system messages

    def copy(self, messages: list[Message]) -> list[Message]:
        """Editable copies of ``messages``, in order, each equal to its source; the sources are never handed out."""
        same = unchanged_prefix(messages, self._sources)
        copies = self._copies  # updated in place: no list copied per request
        del copies[same:]
        kept = same  # the leading copies that are the same objects as last time
        if same:
            for index in compress(count(), map(operator.ne, copies, messages)):
                source = messages[index]
                if source.__class__ is dict and copies[index].__class__ is dict:
                    _restore(copies[index], source)
                else:
                    copies[index] = _copy(source) if source.__class__ is dict else source
                    kept = min(kept, index)
        copies.extend(_copy(message) if isinstance(message, dict) else message for message in messages[same:])
        self._sources, self._copies = list(messages), copies
        try:
            self._view_from(copies, kept)
        except Exception:  # a message that is not a dict: the next request starts over
            self._sources, self._copies, self._system, self._view = [], [], [], []
            raise
        self._returned = list(copies)
        return self._returned

    def _view_from(self, copies: list[Any], kept: int) -> None:
        """The copies without system messages, read again from position ``kept`` on."""
        known = bisect_left(self._system, kept)
        system, view = self._system[:known], self._view[: kept - known]
        _split_system(copies, kept, system, view)
        self._system, self._view = system, view

    def visible(self, step: int, messages: list[Message]) -> list[Message]:
        """``messages`` without system messages, for the ``step``-th handler of the chain (a new list).

        The list :meth:`copy` returned is filtered with it (the copies kept their places).
        """
        if messages is self._returned and len(messages) == len(self._copies):
            return list(self._view)
        while len(self._filters) <= step:
            self._filters.append(_VisibleFilter())
        return self._filters[step].visible(messages)
