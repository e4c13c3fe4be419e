"""The hidden continuation marker, and the one rewrite the ``context`` hook ever makes.

A continuation is exactly one appended entry: a ``custom_message`` with
``customType: "todo-loop:continue"`` and ``display: false``. It projects as a user-role message, so
the proposed projection ends on a non-assistant message (what the host's boundary check asks), and
it stays in history: between two assistant turns it is what keeps the conversation alternating
(``assistant → marker → assistant``). Its body is one of two fixed sentences and never names a
round, so a marker left in history cannot claim anything about the loop's state.

The ``context`` hook removes a marker only where it would sit next to a human message and project
as ``user → user`` (for instance after the continued request failed and the human wrote next).
Every other request passes through untouched.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MARKER_TYPE",
    "NUDGE",
    "NUDGE_WITH_BLOCK",
    "is_marker",
    "marker_draft",
    "without_markers_next_to_human",
]

MARKER_TYPE = "todo-loop:continue"
NUDGE = "Continue working: your todo list still has unfinished tasks."
NUDGE_WITH_BLOCK = (
    NUDGE + " If you cannot make progress without the user, call todo_loop_block with the reason."
)


def marker_draft(*, with_block: bool) -> dict[str, Any]:
    """The boundary draft of one continuation (the second sentence when the block tool is active)."""
    return {
        "type": "custom_message",
        "customType": MARKER_TYPE,
        "content": NUDGE_WITH_BLOCK if with_block else NUDGE,
        "display": False,
    }


def is_marker(message: Any) -> bool:
    """Whether a context message is this extension's marker (a ``custom`` message of our type)."""
    return (
        isinstance(message, dict)  # (the host's copies are tracked dicts)
        and message.get("customType") == MARKER_TYPE
        and message.get("role") in ("custom", "user")
    )


def _is_human(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("role") == "user"
        and not isinstance(message.get("customType"), str)
    )


def _is_dropped(message: Any) -> bool:
    """Messages the provider never receives, so they separate nothing."""
    if not isinstance(message, dict):
        return True
    role = message.get("role")
    if role == "assistant":
        return message.get("stopReason") in ("error", "aborted")
    if role == "bashExecution":
        return bool(message.get("excludeFromContext"))
    return False


def _neighbour(messages: list[Any], index: int, step: int) -> Any:
    """The nearest message the provider receives, markers skipped (a run of markers goes together)."""
    index += step
    while 0 <= index < len(messages):
        message = messages[index]
        if not _is_dropped(message) and not is_marker(message):
            return message
        index += step
    return None


def without_markers_next_to_human(messages: list[Any]) -> list[Any] | None:
    """``messages`` without the markers that sit next to a human message, or ``None`` when none do.

    Neighbours are taken as the provider sees them: an assistant message that ended in an error or
    an abort, and a bash execution excluded from context, are dropped before sending and separate
    nothing; neither does another marker.
    """
    try:  # one lookup per message: this runs on every request, over the whole context
        markers = [
            index for index, message in enumerate(messages) if message.get("customType") == MARKER_TYPE
        ]
    except AttributeError:  # something that is not a message dict: look closer
        markers = [index for index, message in enumerate(messages) if is_marker(message)]
    markers = [index for index in markers if is_marker(messages[index])]
    doomed = {
        index
        for index in markers
        if (_is_human(_neighbour(messages, index, -1)) or _is_human(_neighbour(messages, index, 1)))
    }
    if not doomed:
        return None
    return [message for index, message in enumerate(messages) if index not in doomed]
