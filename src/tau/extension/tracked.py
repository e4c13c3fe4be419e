"""Tracked copies: the message copies ``context`` handlers edit, which say themselves that they changed.

pi hands ``context`` handlers a ``structuredClone`` of the messages, which they may edit in place.
tau keeps that contract. To learn which copies a handler changed without comparing every copy with
its source (and every observer comparing every message with a snapshot), each copy is a dict whose
editing methods report the edit: :class:`TrackedMessage` (the message), :class:`TrackedContent`
(its ``content`` list) and :class:`TrackedBlock` (each content block dict). They are plain dicts
and lists for everything that reads them (``isinstance``, ``json``, ``orjson``, ``==``, ``dict()``);
``copy.copy``, ``copy.deepcopy`` and ``pickle`` give plain dicts and lists.

Every edit of a copy is reported to its :class:`ChangeLog`: the first one since the copy was
clean puts it on ``dirty`` (what the host restores), and each one on the feed that observers read
with :meth:`ChangeLog.since`. Setting top-level keys of a message (what
ObservationPack does: a new ``content``) is journaled, so putting the copy back (:func:`restore`)
sets the old values again, the original content list among them, untouched; any other edit
(deleting a key, editing the content list or a block) marks the copy for a full restore from its
source. Values deeper than the content blocks (tool-call ``arguments``, ``details``) are shared
with the session and must be replaced, never changed (as before tracking).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex

__all__ = [
    "NOT_A_DICT",
    "ChangeLog",
    "TrackedBlock",
    "TrackedContent",
    "TrackedMessage",
    "WatchedList",
    "detach",
    "restore",
    "restore_all",
    "tracked_copies",
    "tracked_copy",
]

_MISSING: Any = object()
CLEAN, SHALLOW, DEEP = 0, 1, 2


class ChangeLog:
    """What changed among one owner's tracked copies, in order.

    ``dirty`` holds the copies edited since they were last equal to their source (the owner
    restores them and empties it). The feed holds every copy each time it changed: at each edit,
    and when it was restored. An observer keeps a :attr:`mark` and asks
    :meth:`since` it for the copies that may differ from what it saw then; only those need a look.
    """

    __slots__ = ("_base", "_feed", "dirty")

    def __init__(self) -> None:
        self._feed: list[TrackedMessage] = []
        self._base = 0  # the mark of ``_feed[0]``
        self.dirty: list[TrackedMessage] = []

    @property
    def mark(self) -> int:
        """Where the feed is now: :meth:`since` this mark answers what changes after it."""
        return self._base + len(self._feed)

    def since(self, mark: int) -> list[TrackedMessage] | None:
        """The copies that changed after ``mark`` (each once or more, oldest first), or ``None`` when
        that part of the feed was forgotten (:meth:`trim`): then anything may have changed."""
        start = mark - self._base
        if start < 0 or start > len(self._feed):
            return None
        return self._feed[start:]

    def owns(self, message: Any) -> bool:
        """Whether ``message`` is one of this log's copies (its changes are in the feed)."""
        return message.__class__ is TrackedMessage and message._log is self

    def changed(self, copy: TrackedMessage) -> None:
        self._feed.append(copy)

    def trim(self, keep: int) -> None:
        """Once the feed holds twice ``keep`` changes, forget all but the newest ``keep`` (observers
        that are further behind compare everything)."""
        if len(self._feed) > 2 * keep:
            drop = len(self._feed) - keep
            del self._feed[:drop]
            self._base += drop


class TrackedMessage(dict[Any, Any]):
    """A message copy that reports its edits to its :class:`ChangeLog` (see the module's docstring)."""

    __slots__ = ("_log", "_source", "_state", "_undo")

    _log: ChangeLog | None
    _source: dict[str, Any]
    _state: int
    _undo: dict[Any, Any] | None

    # -- reporting -------------------------------------------------------------------------------

    def _set_key(self, key: Any) -> None:
        """``key`` is about to be set: keep its old value (once) so a restore can put it back."""
        state = self._state
        if state != DEEP:
            undo = self._undo
            if undo is None:
                undo = self._undo = {}
            if key not in undo:
                undo[key] = dict.get(self, key, _MISSING)
            if state == CLEAN:
                self._state = SHALLOW
        self._report(state)

    def _deep(self) -> None:
        """An edit a journal cannot undo: the next restore copies the source again."""
        state = self._state
        self._state = DEEP
        self._report(state)

    def _report(self, state: int) -> None:
        log = self._log
        if log is not None:
            if state == CLEAN:
                log.dirty.append(self)
            log.changed(self)

    @property
    def edited(self) -> bool:
        """Whether the copy was edited since it was made or last restored."""
        return self._state != CLEAN

    # -- dict's editing methods ------------------------------------------------------------------

    def __setitem__(self, key: Any, value: Any) -> None:
        # The common edit (ObservationPack's placeholder: a new ``content``), inlined: it runs for
        # every placeholder on every request.
        state = self._state
        if state == CLEAN:
            self._undo = {key: dict.get(self, key, _MISSING)}
            self._state = SHALLOW
            log = self._log
            if log is not None:
                log.dirty.append(self)
                log._feed.append(self)
        else:
            self._set_key(key)
        dict.__setitem__(self, key, value)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self._set_key(key)
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        values = dict(*args, **kwargs)
        for key in values:
            self._set_key(key)
        dict.update(self, values)

    def __ior__(self, other: Any) -> TrackedMessage:  # type: ignore[misc]
        self.update(other)
        return self

    def __delitem__(self, key: Any) -> None:
        self._deep()
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self._deep()
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[Any, Any]:
        self._deep()
        return dict.popitem(self)

    def clear(self) -> None:
        self._deep()
        dict.clear(self)

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return dict, (dict(self),)


def _marking(name: str, base: type) -> Any:
    method = getattr(base, name)

    def edit(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._owner._deep()
        return method(self, *args, **kwargs)

    edit.__name__ = name
    return edit


class TrackedContent(list[Any]):
    """A message copy's ``content`` list; any edit marks its message for a full restore."""

    __slots__ = ("_owner",)

    _owner: TrackedMessage

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return list, (list(self),)


class TrackedBlock(dict[Any, Any]):
    """A content block of a message copy; any edit marks its message for a full restore."""

    __slots__ = ("_owner",)

    _owner: TrackedMessage

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return dict, (dict(self),)


_LIST_EDITS = (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
)
for _name in _LIST_EDITS:
    setattr(TrackedContent, _name, _marking(_name, list))
for _name in ("__setitem__", "__delitem__", "__ior__", "pop", "popitem", "clear", "update", "setdefault"):
    setattr(TrackedBlock, _name, _marking(_name, dict))


class WatchedList(list[Any]):
    """The message list handed to a ``context`` handler: whether the handler changed the list itself
    (``changed``), so an unchanged one needs no comparison with what it was given."""

    changed = False

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        return list, (list(self),)


def _watching(name: str) -> Any:
    method = getattr(list, name)

    def edit(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.changed = True
        return method(self, *args, **kwargs)

    edit.__name__ = name
    return edit


for _name in _LIST_EDITS:
    setattr(WatchedList, _name, _watching(_name))


def _content(blocks: Iterable[Any], owner: TrackedMessage) -> TrackedContent:
    # One frame per message, no call per block: a resumed session's first request copies every block.
    copied: list[Any] = []
    add = copied.append
    for block in blocks:
        if isinstance(block, dict):
            block = TrackedBlock(block)
            block._owner = owner
        add(block)
    content = TrackedContent(copied)
    content._owner = owner
    return content


def tracked_copy(message: dict[str, Any], log: ChangeLog | None) -> TrackedMessage:
    """A tracked copy of ``message`` (the message dict, its ``content`` list and blocks), reporting to ``log``."""
    copied = TrackedMessage(message)
    copied._log, copied._source, copied._state, copied._undo = log, message, CLEAN, None
    content = message.get("content")
    if isinstance(content, list):
        dict.__setitem__(copied, "content", _content(content, copied))
    return copied


# What :func:`tracked_copies` notes as the role of a message that is not a dict.
NOT_A_DICT = object()


def tracked_copies(messages: Iterable[Any], log: ChangeLog | None, roles: list[Any] | None = None) -> list[Any]:
    """:func:`tracked_copy` of each of ``messages`` that is a dict (the others as they are), in one frame.

    ``roles``: gets each message's role appended (:data:`NOT_A_DICT` for one that is not a dict),
    read while the message is at hand (a later pass over the copies would touch each one again).
    """
    copies: list[Any] = []
    add = copies.append
    add_role = roles.append if roles is not None else None
    set_content = dict.__setitem__
    for message in messages:
        if not isinstance(message, dict):
            add(message)
            if add_role is not None:
                add_role(NOT_A_DICT)
            continue
        copied = TrackedMessage(message)
        copied._log, copied._source, copied._state, copied._undo = log, message, CLEAN, None
        content = message.get("content")
        if isinstance(content, list):
            set_content(copied, "content", _content(content, copied))
        add(copied)
        if add_role is not None:
            add_role(message.get("role"))
    return copies


def restore(copy: TrackedMessage) -> None:
    """Make an edited copy equal to its source again, in place (it keeps its identity).

    Top-level keys set by handlers get their old values back (the original content list among
    them); after any other edit the copy is made again from its source.
    """
    if copy._state == SHALLOW and copy._undo is not None:
        for key, old in copy._undo.items():
            if old is _MISSING:
                dict.pop(copy, key, None)
            else:
                dict.__setitem__(copy, key, old)
    else:
        source = copy._source
        dict.clear(copy)
        dict.update(copy, source)
        content = source.get("content")
        if isinstance(content, list):
            dict.__setitem__(copy, "content", _content(content, copy))
    copy._state, copy._undo = CLEAN, None
    if copy._log is not None:
        copy._log.changed(copy)


def restore_all(copies: list[TrackedMessage], log: ChangeLog) -> int:
    """:func:`restore` each of ``copies`` that is still ``log``'s (one frame: it runs for every
    placeholder of every request); how many were restored."""
    feed, restored = log._feed, 0
    for copy in copies:
        if copy._log is not log:
            continue  # detached: no longer handed out
        undo = copy._undo
        if copy._state == SHALLOW and undo is not None and _MISSING not in undo.values():
            dict.update(copy, undo)  # existing keys: their places stay
        else:
            restore(copy)
            restored += 1
            continue
        copy._state = CLEAN
        copy._undo = None
        feed.append(copy)
        restored += 1
    return restored


def detach(copy: TrackedMessage) -> None:
    """A copy no longer handed out: its later edits are reported nowhere."""
    copy._log = None
