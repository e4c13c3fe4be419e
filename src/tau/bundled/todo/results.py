"""What a todo call returns: model-visible text, and independent full snapshots for details.

Model-visible JSON shows bidi controls as JSON escapes (``\\u202e``), so a title cannot reorder what
the model or a terminal shows; ``details``, ``structuredContent`` and persisted snapshots keep the
original characters.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from tau.bundled.todo.state import Change, State, TodoError
from tau.common import jsjson
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "PENDING",
    "VOLATILE",
    "Reply",
    "error_reply",
    "escape_bidi",
    "list_json",
    "list_reply",
    "mutation_reply",
    "mutation_text",
    "snapshot",
    "unavailable_text",
]

VOLATILE = "in-memory, not persistent after process exit"
PENDING = "not yet persisted"

# ALM, LRM, RLM, LRE/RLE/PDF/LRO/RLO, LRI/RLI/FSI/PDI
_BIDI = lazy_pattern("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_bidi(text: str) -> str:
    """``text`` with every bidi control written as its JSON escape (``\\u202e``)."""
    return _BIDI.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


def list_json(state: State) -> str:
    """The model-visible snapshot: ``{"revision":N,"tasks":[...]}`` as ``JSON.stringify`` writes it."""
    return escape_bidi(jsjson.dumps_str({"revision": state["revision"], "tasks": state["tasks"]}))


def snapshot(state: State) -> dict[str, Any]:
    """An independent copy of ``state`` for ``details`` / ``structuredContent``."""
    return copy.deepcopy(dict(state))


def mutation_text(revision: int, changed: list[str]) -> str:
    """``todo revision N (K changes)``, or ``todo revision N (1 change: <id>)``."""
    if len(changed) == 1:
        return f"todo revision {revision} (1 change: {escape_bidi(changed[0])})"
    return f"todo revision {revision} ({len(changed)} changes)"


def unavailable_text(reason: str) -> str:
    """The catalogue message for storage that cannot be trusted."""
    return f"todo storage unavailable: {reason}; repair and reload"


@dataclass(frozen=True)
class Reply:
    """A tool result before it becomes the host's ``ToolResult``."""

    text: str
    details: dict[str, Any]
    structured: dict[str, Any] | None
    is_error: bool = False


def _with_note(text: str, note: str | None) -> str:
    return f"{text}\n({note})" if note else text


def list_reply(state: State, note: str | None = None) -> Reply:
    """``list``: the full snapshot in the content, details and structuredContent."""
    return Reply(_with_note(list_json(state), note), snapshot(state), snapshot(state))


def mutation_reply(change: Change, note: str | None = None) -> Reply:
    """A mutation (or no-op): compact content, full snapshots in details and structuredContent."""
    text = mutation_text(change.state["revision"], change.changed)
    return Reply(_with_note(text, note), snapshot(change.state), snapshot(change.state))


def error_reply(error: TodoError, state: State | None, note: str | None = None) -> Reply:
    """``Error: <message>``; details = ``{"error": code, ...snapshot}`` (no snapshot when none is authoritative)."""
    details: dict[str, Any] = {"error": error.code}
    if state is not None:
        details.update(snapshot(state))
    return Reply(_with_note(f"Error: {escape_bidi(error.message)}", note), details, None, is_error=True)
