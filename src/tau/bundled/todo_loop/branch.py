"""What todo-loop reads from the active branch: the newest task list and the anchor.

The **anchor** is the newest plain human message: a ``message`` entry whose message has
``role: "user"`` and no string ``customType``. Hidden continuation messages (this extension's
marker, other extensions' resume messages) are ``custom_message`` entries or carry a
``customType``, so they never move it; the round budget re-arms only when a human writes.

:class:`BranchReader` walks the branch backwards from the leaf (``get_leaf_id`` and ``get_entry``
of the read-only session view), one parent at a time, and stops as soon as both are found. Each
walk is remembered under the leaf it started from; entries are immutable and their ancestry is
fixed, so a later walk that reaches a remembered entry takes the rest of the answer from there.
A request therefore walks only the entries added since the previous one, and a branch switch walks
the new branch (nothing is carried over from an entry that is not an ancestor). When the list comes
from ``todo`` itself, only the anchor is needed: :meth:`BranchReader.anchor` stops at it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from tau.common.dataclass import dataclass
from tau.extension import content_text, entry_message

if TYPE_CHECKING:
    from tau.bundled.todo_loop.tasks import TaskList

__all__ = ["Anchor", "BranchReader", "BranchView", "Scan", "anchor_of", "scan_entries"]

_MEMO_SIZE = 64


@dataclass(frozen=True)
class Anchor:
    """The newest plain human message: its entry id and its text (text blocks joined by a space)."""

    entry_id: str | None
    text: str


@dataclass(frozen=True)
class Scan:
    """The task list and the anchor of one branch (either may be ``None``)."""

    tasks: TaskList | None
    anchor: Anchor | None


class BranchView(Protocol):
    """The part of ``ctx.session_manager`` the reader uses."""

    def get_session_id(self) -> str: ...

    def get_leaf_id(self) -> str | None: ...

    def get_entry(self, entry_id: str) -> dict[str, Any] | None: ...


def anchor_of(entry: Any) -> Anchor | None:
    """The anchor ``entry`` is, or ``None`` (not a plain human message)."""
    message = entry_message(entry, "user")
    if message is None or isinstance(message.get("customType"), str):
        return None
    entry_id = entry.get("id")
    return Anchor(entry_id if isinstance(entry_id, str) else None, content_text(message.get("content"), " "))


def scan_entries(entries_newest_first: Iterable[Any]) -> Scan:
    """The newest task list and anchor in ``entries_newest_first`` (stops once both are found)."""
    from tau.bundled.todo_loop.tasks import task_list_of  # loaded by the first scan, not by every start

    tasks: TaskList | None = None
    anchor: Anchor | None = None
    for entry in entries_newest_first:
        if tasks is None:
            tasks = task_list_of(entry)
        if anchor is None:
            anchor = anchor_of(entry)
        if tasks is not None and anchor is not None:
            break
    return Scan(tasks, anchor)


class BranchReader:
    """Reads :class:`Scan` from a session view, walking only what the previous walks did not cover."""

    def __init__(self, memo_size: int = _MEMO_SIZE) -> None:
        self._memo: OrderedDict[str, Scan] = OrderedDict()
        self._anchors: OrderedDict[str, Anchor | None] = OrderedDict()  # anchor-only walks
        self._memo_size = memo_size
        self._session_id: Any = None

    def forget(self) -> None:
        """Drop every remembered walk (a new session)."""
        self._memo.clear()
        self._anchors.clear()

    def read(self, view: BranchView, leaf: Any = None) -> Scan:
        """The task list and anchor of the active branch of ``view`` (or of the branch that ends at
        ``leaf``, an entry of it). Never raises: failure is "none"."""
        try:
            return self._read(view, leaf)
        except Exception:  # a hook must never throw: an unreadable branch has no list and no anchor
            return Scan(None, None)

    def anchor(self, view: BranchView) -> Anchor | None:
        """The anchor of the active branch of ``view``: a walk that stops at the newest human message
        (the list is not looked for). Never raises: failure is "none"."""
        try:
            leaf = self._leaf(view, None)
            if leaf is None:
                return None
            found = self._walk_to_anchor(view, leaf)
            _remember(self._anchors, leaf, found, self._memo_size)
            return found
        except Exception:  # as ``read``
            return None

    def _leaf(self, view: BranchView, leaf: Any) -> str | None:
        session_id = view.get_session_id()
        if session_id != self._session_id:
            self.forget()
            self._session_id = session_id
        leaf = view.get_leaf_id() if leaf is None else leaf
        return leaf if isinstance(leaf, str) else None

    def _read(self, view: BranchView, leaf: Any) -> Scan:
        leaf = self._leaf(view, leaf)
        if leaf is None:
            return Scan(None, None)
        result = self._walk(view, leaf)
        _remember(self._memo, leaf, result, self._memo_size)
        return result

    def _walk_to_anchor(self, view: BranchView, leaf: str) -> Anchor | None:
        seen: set[str] = set()
        entry_id: Any = leaf
        while isinstance(entry_id, str) and entry_id and entry_id not in seen:
            if entry_id in self._anchors:
                return self._anchors[entry_id]
            known = self._memo.get(entry_id)
            if known is not None:
                return known.anchor
            seen.add(entry_id)
            entry = view.get_entry(entry_id)
            if entry is None:
                break
            anchor = anchor_of(entry)
            if anchor is not None:
                return anchor
            entry_id = entry.get("parentId")
        return None

    def _walk(self, view: BranchView, leaf: str) -> Scan:
        from tau.bundled.todo_loop.tasks import task_list_of

        tasks: TaskList | None = None
        anchor: Anchor | None = None
        memo = self._memo
        seen: set[str] = set()
        entry_id: Any = leaf
        while isinstance(entry_id, str) and entry_id and entry_id not in seen:
            known = memo.get(entry_id)
            if known is not None:
                return Scan(
                    known.tasks if tasks is None else tasks, known.anchor if anchor is None else anchor
                )
            seen.add(entry_id)  # a parentId cycle ends the walk, as it ends the host's branch
            entry = view.get_entry(entry_id)
            if entry is None:
                break
            if tasks is None:
                tasks = task_list_of(entry)
            if anchor is None:
                anchor = anchor_of(entry)
            if tasks is not None and anchor is not None:
                break
            entry_id = entry.get("parentId")
        return Scan(tasks, anchor)


def _remember(memo: OrderedDict[str, Any], leaf: str, value: Any, size: int) -> None:
    memo[leaf] = value
    memo.move_to_end(leaf)
    while len(memo) > size:
        memo.popitem(last=False)
