"""The checklist in the model's context: the current list once, never persisted, never moved.

Every successful ``todo`` result carries the whole list (``list``: the list JSON on its first line;
a mutation: the compact list JSON on the line after ``todo revision N (…)``), so in the common
request the model already sees the current list and the ``context`` hook adds nothing. Only when no successful result of exactly the current
list is among the request's messages (the list changed through ``/todo``, the results were compacted
away, a branch switch, the storage became unavailable) is one hidden ``custom`` message
(``customType: "pi-todo:snapshot"``) added, **at the end** of that request.

A block, once sent, stays: later requests carry it at the same place (right after the message it
followed) with the same text, even when a newer list has superseded it, because removing or moving
it would change messages an earlier request already sent and break the provider's cached prefix.
When the message it followed is no longer in the context (compaction, another branch), the block
goes too: that prefix has changed anyway. A checklist that was never recorded (revision 0, no entry)
adds nothing.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from tau.bundled.todo.results import compact_json, list_json, unavailable_text
from tau.bundled.todo_state import State
from tau.common.dataclass import dataclass
from tau.extension import is_custom, message_key, unchanged_prefix

__all__ = ["SNAPSHOT_TYPE", "Blocks", "has_current_list", "snapshot_message", "without_snapshots"]

SNAPSHOT_TYPE = "pi-todo:snapshot"
_MUTATION_PREFIX = "todo revision "

Key = tuple[Any, Any, Any, Any]


def without_snapshots(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``messages`` without this extension's blocks, or ``None`` when there are none."""
    try:  # one C-level pass for the common request, which holds no block
        if SNAPSHOT_TYPE not in map(dict.get, messages, repeat("customType")):
            return None
    except TypeError:  # something that is not a message dict: look closer
        pass
    kept = [message for message in messages if not is_custom(message, SNAPSHOT_TYPE)]
    return kept if len(kept) != len(messages) else None


class _SnapshotScan:
    """:func:`without_snapshots`, remembering how many blocks the leading messages that are the same
    objects as last time hold (only the new ones are looked at; a block is never edited in place)."""

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._blocks = 0

    def without(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        if unchanged_prefix(messages, self._given) < len(self._given):
            self._given, self._blocks = [], 0
        if len(messages) > len(self._given):
            self._blocks += without_snapshots(messages[len(self._given) :]) is not None
        self._given = list(messages)
        return without_snapshots(messages) if self._blocks else None


def has_current_list(messages: list[dict[str, Any]], state: State) -> bool:
    """Whether a successful ``todo`` result among ``messages`` shows exactly this list."""
    listed: str | None = None
    carried: str | None = None  # both made only when a result needs them
    for message in reversed(messages):
        if message.get("role") != "toolResult" or message.get("toolName") != "todo" or message.get("isError"):
            continue
        for block in message.get("content") or ():
            text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
            if not isinstance(text, str):
                continue
            first, _, rest = text.partition("\n")  # JSON strings hold no raw newline
            if first.startswith(_MUTATION_PREFIX):
                carried = carried if carried is not None else compact_json(state)
                if rest.partition("\n")[0] == carried:
                    return True
            else:
                listed = listed if listed is not None else list_json(state)
                if first == listed:
                    return True
    return False


def snapshot_message(text: str, timestamp: int) -> dict[str, Any]:
    """The hidden block: a ``custom`` message the host sends as user content and never stores."""
    return {
        "role": "custom",
        "customType": SNAPSHOT_TYPE,
        "content": text,
        "display": False,
        "timestamp": timestamp,
    }


def block_text(state: State | None, note: str | None, reason: str | None) -> str:
    """What a block says: the snapshot (with the storage words), or why the storage is unavailable."""
    if state is None:
        return f"[todo unavailable]\n{unavailable_text(reason or 'unknown')}"
    text = f"[todo snapshot, revision {state['revision']}]\n{list_json(state)}"
    return f"{text}\n({note})" if note else text


@dataclass(frozen=True)
class _Placed:
    """A block that was sent: the message it follows (``None``: the start) and the block itself."""

    after: Key | None
    message: dict[str, Any]


class Blocks:
    """The blocks this extension has sent in the current session, re-placed on every request."""

    def __init__(self) -> None:
        self._placed: list[_Placed] = []
        self._scan = _SnapshotScan()

    def forget(self) -> None:
        """A new session (or another file): nothing was sent in its context yet."""
        self._placed = []

    def transform(
        self,
        messages: list[dict[str, Any]],
        *,
        active: bool,
        state: State | None,
        note: str | None,
        reason: str | None,
        recorded: bool,
        now_ms: int,
    ) -> list[dict[str, Any]] | None:
        """The request's messages with the blocks in place, or ``None`` for no change.

        ``active``: whether ``todo`` is an active tool (otherwise no block is sent, and the sent ones
        are forgotten: the tool set changed, so the cached prefix did too). ``state`` is ``None``
        when the storage is unavailable (``reason`` says why).
        """
        cleaned = self._scan.without(messages)
        base = cleaned if cleaned is not None else messages
        if not active:
            self._placed = []
            return cleaned
        out = self._replace(base)
        wanted = self._wanted(base, state, note, reason, recorded)
        if wanted is not None and not any(placed.message["content"] == wanted for placed in self._placed):
            placed = _Placed(message_key(base[-1]) if base else None, snapshot_message(wanted, now_ms))
            self._placed.append(placed)
            out.append(placed.message)
        if not self._placed:
            return cleaned
        return out

    def _replace(self, base: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``base`` with every sent block after its message; blocks whose message is gone are dropped."""
        out: list[dict[str, Any]] = []
        kept: list[_Placed] = []
        index = 0
        for placed in self._placed:
            if kept and placed.after == kept[-1].after:  # sent after the same message: after that block
                found: int | None = index
            elif placed.after is None:
                found = 0 if not kept else None
            else:
                found = next(
                    (at + 1 for at in range(index, len(base)) if message_key(base[at]) == placed.after), None
                )
            if found is None:
                continue
            out.extend(base[index:found])
            out.append(placed.message)
            kept.append(placed)
            index = found
        out.extend(base[index:])
        self._placed = kept
        return out

    @staticmethod
    def _wanted(
        base: list[dict[str, Any]], state: State | None, note: str | None, reason: str | None, recorded: bool
    ) -> str | None:
        """The text the model is missing, or ``None`` when it has the current list (or there is none)."""
        if state is None:
            return block_text(None, note, reason)
        if not recorded and not state["tasks"] and state["revision"] == 0:
            return None
        if has_current_list(base, state):
            return None
        return block_text(state, note, reason)
