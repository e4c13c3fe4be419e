"""What a provider derives from each message of a request, kept for the next request of the run.

A run's requests send the same messages again plus a few new ones. They are the host's copies,
which ``context`` handlers may edit in place and the host restores before the next request, so a
kept value is used only while its message is the same object and equal to a snapshot taken when
the value was derived (one C-level comparison per message, made once per request for every
column); a message that differs, or is new, is derived again. Nothing is kept before the second
request: a single request takes no snapshot.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import compress, count
from typing import Any

from tau.session.projection import unchanged_prefix

__all__ = ["MessageMemo", "common_prefix", "json_copy"]


def common_prefix(left: Sequence[Any], right: Sequence[Any]) -> int:
    """How many leading items of ``left`` and ``right`` are equal (one C-level pass)."""
    shortest = min(len(left), len(right))
    return next(compress(count(), map(operator.ne, left, right)), shortest)


def _snapshot(message: Any) -> Any:
    # As deep as a context handler may edit a copy in place (the message and its content blocks;
    # the host's copies are dict subclasses).
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, list):
        return {
            **message,
            "content": [dict(block) if isinstance(block, dict) else block for block in content],
        }
    return dict(message)


def json_copy(value: Any) -> Any:
    """A copy of a JSON-shaped value, every dict and list in it copied."""
    if value.__class__ is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if value.__class__ is list:
        return [json_copy(item) for item in value]
    return value


class _Column:
    """One derived value per message; with ``handed_out``, a copy of each to check it against."""

    def __init__(self, derive: Callable[[Any], Any], handed_out: bool) -> None:
        self.derive, self.handed_out = derive, handed_out
        self.values: list[Any] = []
        self.copies: list[Any] = []
        self.stale: set[int] = set()  # rows whose message changed since their value was derived
        self.fresh = True  # no value derived: every row is derived when the column is first read


class MessageMemo:
    """Columns of values derived per message (``name=(derive, handed_out)``), kept between requests.

    :meth:`refresh` compares the request's messages with the last request's once; :meth:`column`
    then derives what is missing. A ``handed_out`` column's values are given to code that may change
    them in place (a payload's dicts): each is kept only while it still equals a full copy of it.
    """

    def __init__(self, **columns: tuple[Callable[[Any], Any], bool]) -> None:
        self._columns = {name: _Column(derive, handed_out) for name, (derive, handed_out) in columns.items()}
        self._seen: list[Any] = []  # the messages of the last request
        self._frozen: list[Any] = []  # their snapshots (none after a first request)
        self._keeping = False

    def refresh(self, messages: Sequence[Any]) -> None:
        """Take the messages of a new request: the values of the unchanged ones are kept."""
        messages = list(messages)
        same = unchanged_prefix(messages, self._seen) if self._keeping else 0
        frozen = self._frozen[:same]
        changed = list(compress(count(), map(operator.ne, frozen, messages[:same])))
        for index in changed:
            frozen[index] = _snapshot(messages[index])
        new = range(same, len(messages))
        if self._keeping or self._seen:  # a second request: the run goes on, keep what is derived
            frozen += map(_snapshot, messages[same:])
            self._keeping = True
        for column in self._columns.values():
            if column.fresh:
                continue  # nothing to keep (a first request's columns: no row bookkeeping)
            if not same:
                column.values, column.copies, column.stale, column.fresh = [], [], set(), True
                continue
            column.values[same:] = [None] * len(new)
            del column.copies[same:]
            column.stale = {index for index in column.stale if index < same}
            column.stale.update(changed)
            column.stale.update(new)
        self._seen, self._frozen = messages, frozen

    def column(self, name: str) -> list[Any]:
        """The values of column ``name`` for the messages of the last :meth:`refresh` (a new list).

        A failing ``derive`` raises as the plain list would, and the column stays as it was.
        """
        column = self._columns[name]
        messages, derive = self._seen, column.derive
        if column.fresh:
            # Every value derived, in order (one C-level loop); a handed-out one kept with its copy
            # once the run goes on (nothing is kept to check after a first request).
            values = list(map(derive, messages))
            copies = list(map(json_copy, values)) if column.handed_out and self._keeping else []
            column.values, column.copies, column.stale, column.fresh = values, copies, set(), False
            return list(values)
        values, copies = list(column.values), list(column.copies)
        stale = set(column.stale)
        if column.handed_out and self._keeping:
            stale.update(compress(count(), map(operator.ne, copies, values)))
        for index in sorted(stale):
            values[index] = derive(messages[index])
        if column.handed_out and self._keeping:
            copies += [None] * (len(values) - len(copies))
            for index in stale:
                copies[index] = json_copy(values[index])
        column.values, column.copies, column.stale = values, copies if self._keeping else [], set()
        return list(values)
