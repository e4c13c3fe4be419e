"""The checklist in the model's context: one snapshot block per revision, never persisted.

The ``context`` hook gets the projected messages of one request. When no successful ``list`` result
of the current revision is among them, one ``custom`` message (``customType: "pi-todo:snapshot"``)
carries the snapshot. It is placed right after the turn in which the revision was recorded (after
the last message not newer than the snapshot entry, and after the tool results of that turn), so
every request of that revision sees it at the same place. Unavailable storage is named instead,
at the end, without a snapshot. A checklist that was never recorded (revision 0, no entry) adds
nothing.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from tau.bundled.todo.results import list_json, unavailable_text
from tau.bundled.todo.state import State

__all__ = ["SNAPSHOT_TYPE", "has_current_list", "snapshot_message", "transform", "without_snapshots"]

SNAPSHOT_TYPE = "pi-todo:snapshot"


def without_snapshots(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``messages`` without this extension's blocks, or ``None`` when there are none."""
    try:  # one C-level pass for the common request, which holds no block
        if SNAPSHOT_TYPE not in map(dict.get, messages, repeat("customType")):
            return None
    except TypeError:  # something that is not a message dict: look closer
        pass
    kept = [message for message in messages if not _is_snapshot(message)]
    return kept if len(kept) != len(messages) else None


def has_current_list(messages: list[dict[str, Any]], state: State) -> bool:
    """Whether a successful ``list`` result of exactly this snapshot is among ``messages``."""
    expected = list_json(state)
    for message in messages:
        if message.get("role") != "toolResult" or message.get("toolName") != "todo" or message.get("isError"):
            continue
        texts = [
            b.get("text")
            for b in message.get("content") or ()
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        if any(isinstance(text, str) and text.split("\n", 1)[0] == expected for text in texts):
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


def transform(
    messages: list[dict[str, Any]],
    *,
    active: bool,
    state: State | None,
    note: str | None,
    reason: str | None,
    recorded: bool,
    anchor_ms: int | None,
    now_ms: int,
) -> list[dict[str, Any]] | None:
    """The request's messages with the checklist block in place, or ``None`` for no change.

    ``active``: whether ``todo`` is an active tool (otherwise only stale blocks are removed).
    ``state`` is ``None`` when the storage is unavailable (``reason`` says why).
    """
    cleaned = without_snapshots(messages)
    base = cleaned if cleaned is not None else messages
    if not active:
        return cleaned
    if state is None:
        text = f"[todo unavailable]\n{unavailable_text(reason or 'unknown')}"
        return [*base, snapshot_message(text, now_ms)]
    if not recorded and not state["tasks"] and state["revision"] == 0:
        return cleaned
    if has_current_list(base, state):
        return cleaned
    text = f"[todo snapshot, revision {state['revision']}]\n{list_json(state)}"
    if note:
        text += f"\n({note})"
    at = _position(base, anchor_ms)
    return [*base[:at], snapshot_message(text, anchor_ms if anchor_ms is not None else now_ms), *base[at:]]


def _position(messages: list[dict[str, Any]], anchor_ms: int | None) -> int:
    """After the last message not newer than the snapshot entry, and after that turn's tool results."""
    if anchor_ms is None:
        return len(messages)
    at = 0
    for index, message in enumerate(messages):
        stamp = message.get("timestamp")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp <= anchor_ms:
            at = index + 1
    while at < len(messages) and messages[at].get("role") == "toolResult":
        at += 1
    if at == 0 and messages and messages[0].get("role") == "compactionSummary":
        at = 1
    return at


def _is_snapshot(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("role") == "custom"
        and message.get("customType") == SNAPSHOT_TYPE
    )
