"""What a provider derives from each message of a request, kept for the next request of the run.

A run's requests send the same messages again plus a few new ones. They are the host's copies,
which ``context`` handlers may edit in place and the host restores before the next request, so a
kept value is used only while its message is the same object and equal to a snapshot taken when
the value was derived (one C-level comparison per message); a message that differs, or is new, is
derived again. Nothing is kept before the second request: a single request takes no snapshot.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import compress, count
from typing import Any, Generic, TypeVar

from tau.session.projection import unchanged_prefix

__all__ = ["MessageMemo", "common_prefix", "json_copy"]

T = TypeVar("T")


def common_prefix(left: Sequence[Any], right: Sequence[Any]) -> int:
    """How many leading items of ``left`` and ``right`` are equal (one C-level pass)."""
    shortest = min(len(left), len(right))
    return next(compress(count(), map(operator.ne, left, right)), shortest)


def _snapshot(message: Any) -> Any:
    # As deep as a context handler may edit a copy in place (the message and its content blocks).
    if message.__class__ is not dict:
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


class MessageMemo(Generic[T]):
    """``derive(message)`` for each message of a request, kept per message between requests.

    With ``handed_out``, the values themselves are handed to code that may change them in place
    (a payload's dicts): each is kept only while it still equals a full copy taken when it was made.
    """

    def __init__(self, derive: Callable[[Any], T], *, handed_out: bool = False) -> None:
        self._derive = derive
        self._handed_out = handed_out
        self._seen: list[Any] = []  # the messages of the last request
        self._frozen: list[Any] = []  # their snapshots (none after a first request)
        self._values: list[T] = []
        self._copies: list[Any] = []  # with ``handed_out``: copies of the values

    def values(self, messages: Sequence[Any]) -> list[T]:
        """``[derive(message) for message in messages]``, reusing the values of unchanged messages.

        A failing ``derive`` raises as the plain list would, and the memo stays as it was.
        """
        messages = list(messages)
        derive = self._derive
        same = unchanged_prefix(messages, self._seen) if self._frozen else 0
        values, frozen = self._values[:same], self._frozen[:same]
        changed = compress(count(), map(operator.ne, frozen, messages[:same]))
        copies = self._copies[:same]
        if self._handed_out:
            changed = sorted({*changed, *compress(count(), map(operator.ne, copies, values))})
        for index in changed:
            frozen[index] = _snapshot(messages[index])
            values[index] = derive(messages[index])
            if self._handed_out:
                copies[index] = json_copy(values[index])
        tail = messages[same:]
        start = len(values)
        values += map(derive, tail)
        if self._seen:  # a second request: the run goes on, keep what is derived
            frozen += map(_snapshot, tail)
            if self._handed_out:
                copies += map(json_copy, values[start:])
        self._seen, self._frozen, self._values, self._copies = messages, frozen, values, copies
        return list(values)
