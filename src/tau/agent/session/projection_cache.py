"""The session's projection, kept between requests instead of rebuilt from the branch for each.

A request needs the canonical projection of the session (pi's ``buildSessionProjection``) and its
model messages (``convert_to_llm``); between two requests of a run only messages are appended, so
:class:`ProjectionCache` extends the projection and :class:`Conversion` extends the conversion.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
from typing import Any

from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm
from tau.session.projection import APPENDABLE, extend_projection, unchanged_prefix

__all__ = ["Conversion", "ProjectionCache"]

class ProjectionCache:
    """The session's projection, extended in place while entries are only appended to the leaf.

    A request needs the canonical projection of the session (pi's ``buildSessionProjection``);
    between two requests of a run only messages are appended, so rebuilding it from the whole
    branch each time would cost O(session) per request. Anything else (a moved leaf, a compaction,
    a context edit, a branch summary) rebuilds it. The model messages of the projection are
    converted once too. Callers must not change the returned lists.
    """

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager
        self._projection: dict[str, Any] | None = None
        self._leaf: Any = None
        self._count = 0
        self._conversion = Conversion()
        self._edits: tuple[Any, bool] = (None, False)  # (projection, whether it holds a context edit)

    def invalidate(self) -> None:
        self._projection = None

    def has_context_edit(self, projection: dict[str, Any]) -> bool:
        """Whether ``projection`` has a ``context_edit`` entry (kept per projection: appends add none)."""
        seen, found = self._edits
        if seen is not projection:
            found = any(item["sourceEntry"].get("type") == "context_edit" for item in projection["entries"])
            self._edits = (projection, found)
        return found

    def get(self) -> dict[str, Any]:
        manager = self.manager
        leaf, count = manager.get_leaf_id(), manager.get_entry_count()
        projection = self._projection
        if projection is not None and leaf == self._leaf and count == self._count:
            return projection
        if projection is not None and count > self._count and self._extend(projection, leaf, count):
            return projection
        projection = manager.build_session_projection()
        self._projection, self._leaf, self._count = projection, leaf, count
        return projection

    def _extend(self, projection: dict[str, Any], leaf: Any, count: int) -> bool:
        added: list[dict[str, Any]] = []
        current = leaf
        while current != self._leaf:
            entry = self.manager.get_entry(current)
            if entry is None or entry.get("type") not in APPENDABLE or len(added) >= count - self._count:
                return False
            added.append(entry)
            current = entry.get("parentId")
        if len(added) != count - self._count:
            return False  # entries were appended elsewhere in the tree
        extend_projection(projection, added[::-1])
        self._leaf, self._count = leaf, count
        return True

    def convert(self, messages: list[dict[str, Any]], block_images: bool) -> list[dict[str, Any]]:
        """``convert_to_llm(messages)``, reusing the conversion of the leading messages seen last time."""
        if block_images:
            return convert_to_llm(messages, block_images=True)
        return self._conversion.convert(messages)


class Conversion:
    """``convert_to_llm`` of the request messages, extended while they are only appended to.

    ``system``, ``user``, ``assistant`` and ``toolResult`` messages are their own conversion, so
    for the leading messages that are the same objects as last time (a C-level identity check)
    their converted list is reused as it is. The other roles (custom, bash executions, summaries)
    build new messages from their fields, which a ``context`` handler may have edited in place:
    they are converted again on every request, and the last conversion is kept when it is equal,
    so what follows (a provider's per-message memo, passes that check how far the request is the
    same objects as last time) does not start over at a compaction's summary on every request. A
    message's role is never changed in place.
    """

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._out: list[Any] = []
        self._before: list[int] = []  # len(converted) before each given message
        self._built: list[int] = []  # indices of given messages not passed through as they are

    def convert(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        same = unchanged_prefix(messages, self._given)
        before = self._before[:same]
        out = self._out[: self._before[same] if same < len(self._before) else len(self._out)]
        built = self._built[: bisect_left(self._built, same)]
        for index in built:
            fresh = convert_to_llm([messages[index]])
            at = before[index]
            present = (before[index + 1] if index + 1 < same else len(out)) - at
            if len(fresh) != present:
                self._given = []  # dropped then, kept now (or the reverse): start over
                return self.convert(messages)
            if fresh and fresh[0] != out[at]:
                out[at] = fresh[0]  # unchanged, the last conversion stays: the same object as before
        tail = messages[same:]
        if _passed_through(tail):  # the common tail: no message is built, one C-level pass
            before += range(len(out), len(out) + len(tail))
            out += tail
        else:
            for index in range(same, len(messages)):
                message = messages[index]
                before.append(len(out))
                converted = convert_to_llm([message])
                if not converted or converted[0] is not message:
                    built.append(index)
                out.extend(converted)
        self._given, self._out, self._before, self._built = list(messages), out, before, built
        return list(out)


_PASSED_THROUGH = frozenset(("system", "user", "assistant", "toolResult"))


def _passed_through(messages: list[Any]) -> bool:
    """Whether every message is a dict of a role ``convert_to_llm`` passes through as it is."""
    try:
        return _PASSED_THROUGH.issuperset(map(dict.get, messages, repeat("role")))
    except TypeError:  # not a dict, or an unhashable role: item by item
        return False
