"""What a todo call returns: model-visible text, and independent full snapshots for details.

A successful mutation's first line is ``todo revision N (…)`` and its second line the whole list
in compact JSON (:func:`compact_json`: ids cut to their shortest unique prefix of at least 8
characters, empty descriptions and dependencies left out): the model sees the current list in the
result of the call that made it, so nothing has to be injected into its context (see
:mod:`.context`), and each revision costs about half of what the full ``list`` JSON would.

Model-visible JSON shows bidi controls as JSON escapes (``\\u202e``), so a title cannot reorder what
the model or a terminal shows; ``details``, ``structuredContent`` and persisted snapshots keep the
original characters.
"""

from __future__ import annotations

import copy
from typing import Any

from tau.bundled.todo_state import Change, State, TodoError, abbreviate
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "PENDING",
    "VOLATILE",
    "Reply",
    "compact_json",
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


def compact_json(state: State) -> str:
    """The list as a mutation result carries it: ``{"revision":N,"tasks":[{"id","title","status",...}]}``.

    Ids (and dependencies) are their shortest unique prefix of at least 8 characters; a description
    or dependency list appears only when it is not empty.
    """
    ids = [task["id"] for task in state["tasks"]]
    tasks = []
    for task in state["tasks"]:
        item: dict[str, Any] = {
            "id": abbreviate(task["id"], ids),
            "title": task["title"],
            "status": task["status"],
        }
        if task["description"]:
            item["description"] = task["description"]
        if task["dependencies"]:
            item["dependencies"] = [abbreviate(dependency, ids) for dependency in task["dependencies"]]
        tasks.append(item)
    return escape_bidi(jsjson.dumps_str({"revision": state["revision"], "tasks": tasks}))


def snapshot(state: State) -> dict[str, Any]:
    """An independent copy of ``state`` for ``details`` / ``structuredContent``."""
    return copy.deepcopy(dict(state))


def mutation_text(revision: int, changed: list[str], ids: list[str] | None = None) -> str:
    """``todo revision N (K changes)``, or ``todo revision N (1 change: <id>)``.

    The one id is cut to its shortest prefix of at least 8 characters that is unique among ``ids``
    (the tasks before and after the change; every such prefix is accepted where an id is taken).
    """
    if len(changed) == 1:
        shown = abbreviate(changed[0], ids if ids is not None else changed)
        return f"todo revision {revision} (1 change: {escape_bidi(shown)})"
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


def mutation_reply(change: Change, note: str | None = None, before: State | None = None) -> Reply:
    """A mutation (or no-op): the revision line, then the compact list; full snapshots in details and
    structuredContent. ``before`` (the pre-state) makes the shown id unique among removed tasks too."""
    ids = [task["id"] for task in change.state["tasks"]]
    if before is not None:
        ids += [task["id"] for task in before["tasks"] if task["id"] not in ids]
    text = f"{mutation_text(change.state['revision'], change.changed, ids)}\n{compact_json(change.state)}"
    return Reply(_with_note(text, note), snapshot(change.state), snapshot(change.state))


def error_reply(error: TodoError, state: State | None, note: str | None = None) -> Reply:
    """``Error: <message>``; details = ``{"error": code, ...snapshot}`` (no snapshot when none is authoritative)."""
    details: dict[str, Any] = {"error": error.code}
    if state is not None:
        details.update(snapshot(state))
    return Reply(_with_note(f"Error: {escape_bidi(error.message)}", note), details, None, is_error=True)
