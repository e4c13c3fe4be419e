"""The copy of the request messages that ``context`` handlers may edit.

pi hands ``context`` handlers a ``structuredClone`` of every message. A deep copy of a long
session's messages costs far more than the rest of the request (hundreds of milliseconds for
10,000 messages), so tau copies only what handlers may change in place: each message dict, its
``content`` list and the content-block dicts. Deeper values (tool-call ``arguments``, ``details``)
are shared with the session and must be replaced, never mutated.

Copies are kept between requests, by position: while the request's leading messages are the same
source objects as last time (a run only appends), their copies are handed out again. The copies are
:mod:`tracked <tau.extension.tracked>`: an edited copy reports itself, so the host restores exactly
the copies handlers edited (in place, so each keeps its identity and the passes that remember how far
they got, :func:`unchanged_prefix`, still find it where it was), without comparing the others with
their sources; only the new tail is copied. Observers of the copies (Online Context Compact) read
the same :class:`~tau.extension.tracked.ChangeLog` to learn which messages may differ from what they
saw (:attr:`ContextCopies.changes`).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
from typing import Any

from tau.common.positions import positions
from tau.extension.tracked import NOT_A_DICT, ChangeLog, TrackedMessage, detach, restore_all, tracked_copies
from tau.session.projection import unchanged_prefix

__all__ = ["ContextCopies", "unchanged_prefix"]

Message = dict[str, Any]


# The change feed is trimmed when it holds more than this many changes per copy (and a floor): an
# observer that looks once a request is never that far behind.
_FEED_PER_COPY = 8
_FEED_FLOOR = 8192


def _split_roles(tail: list[Any], roles: list[Any], start: int, system: list[int], visible: list[Any]) -> None:
    """:func:`_split_system` of ``tail`` (at ``start``) whose ``roles`` are known."""
    found = positions(roles, "system")
    system.extend(start + index for index in found)
    at = 0
    for index in found:  # the others, as slices between the (few) system messages
        visible += tail[at:index]
        at = index + 1
    visible += tail[at:]


def _split_system(messages: list[Any], start: int, system: list[int], visible: list[Any]) -> None:
    """Append the positions of ``messages[start:]``'s system messages to ``system``, the others to ``visible``."""
    tail = messages[start:]
    try:
        roles = list(map(dict.get, tail, repeat("role")))  # one C-level pass for dicts
    except TypeError:  # a message that is not a dict: item by item, as below
        pass
    else:
        _split_roles(tail, roles, start, system, visible)
        return
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
        return visible  # (the caller hands out a copy: this one is kept)


class ContextCopies:
    """Per-session cache of editable message copies, by position, for the source message objects."""

    def __init__(self) -> None:
        self._sources: list[Any] = []
        self._copies: list[Any] = []
        self._filters: list[_VisibleFilter] = []
        self._returned: list[Any] | None = None  # the list the last copy() returned
        self._system: list[int] = []  # positions of the system messages among the copies
        self._view: list[Any] = []  # the copies without the system messages
        self.changes = ChangeLog()
        self.restored = 0  # copies restored so far (what tracking saves is every other comparison)

    def copy(self, messages: list[Message]) -> list[Message]:
        """Editable copies of ``messages``, in order, each equal to its source; the sources are never handed out.

        Only the copies that reported an edit are restored (:class:`~tau.extension.tracked.ChangeLog`);
        the others are handed out again unlooked at.
        """
        same = unchanged_prefix(messages, self._sources)
        copies = self._copies  # updated in place: no list copied per request
        for copied in copies[same:]:
            if copied.__class__ is TrackedMessage:
                detach(copied)
        del copies[same:]
        changes = self.changes
        dirty, changes.dirty = changes.dirty, []
        self.restored += restore_all(dirty, changes)
        roles: list[Any] = []
        copies += tracked_copies(messages[same:], changes, roles)
        self._sources, self._copies = list(messages), copies
        changes.trim(max(_FEED_FLOOR, _FEED_PER_COPY * len(copies)))
        try:
            self._view_from(copies, same, roles)
        except Exception:  # a message that is not a dict: the next request starts over
            self._sources, self._copies, self._system, self._view = [], [], [], []
            raise
        self._returned = list(copies)
        return self._returned

    def _view_from(self, copies: list[Any], kept: int, roles: list[Any]) -> None:
        """The copies without system messages, from position ``kept`` on (``roles``: those copies')."""
        known = bisect_left(self._system, kept)
        system, view = self._system[:known], self._view[: kept - known]
        if NOT_A_DICT in roles:  # as the plain scan fails
            _split_system(copies, kept, system, view)
        else:
            _split_roles(copies[kept:], roles, kept, system, view)
        self._system, self._view = system, view

    def visible(self, step: int, messages: list[Message]) -> list[Message]:
        """``messages`` without system messages, for the ``step``-th handler of the chain (a list this
        object keeps: hand out a copy).

        The list :meth:`copy` returned is filtered with it (the copies kept their places).
        """
        if messages is self._returned and len(messages) == len(self._copies):
            return self._view  # (the caller hands out a copy: this one is kept)
        while len(self._filters) <= step:
            self._filters.append(_VisibleFilter())
        return self._filters[step].visible(messages)
