"""The ``todo`` tool's row: the checklist itself, as Claude Code and Codex show their plans.

The title says what the call did, in task titles (``todo update "Fix calc.py" → completed``); the
body is the list after the call, one line per task behind its status mark (☐ pending, ◐ in
progress, ☑ completed), with the tasks the call changed picked out. Only the screen changes: the
model still receives todo's own result text. The row reads the wire shape of todo's result
(``details``: ``{"revision", "tasks": [{"id", "title", "description", "status", ...}]}``); a result
of another shape (an error, another extension's ``todo``) gets the default row.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["MARKS", "Checklist", "checklist", "tasks_of", "todo_title"]

MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
_WORDS = {"pending": "pending", "in_progress": "in progress", "completed": "completed"}
_FOLD_ABOVE = 8  # collapsed, a longer list folds its unchanged completed tasks into one line
_MIN_PREFIX = 8  # todo accepts a unique id prefix of at least 8 characters


def tasks_of(details: Any) -> list[dict[str, Any]] | None:
    """The task list of a todo snapshot, or ``None`` when ``details`` is not one."""
    tasks = details.get("tasks") if isinstance(details, dict) else None
    if not isinstance(tasks, list):
        return None
    for task in tasks:
        if not (
            isinstance(task, dict) and isinstance(task.get("id"), str) and isinstance(task.get("title"), str)
        ):
            return None
        if task.get("status") not in MARKS:
            return None
    return tasks


def _one_line(text: str, limit: int) -> str:
    text = " ".join(sanitize_text(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoted(title: str) -> str:
    return f'"{_one_line(title, 60)}"'


def _find(tasks: list[dict[str, Any]], given: Any) -> dict[str, Any] | None:
    if not isinstance(given, str) or not given:
        return None
    exact = next((task for task in tasks if task["id"] == given), None)
    if exact is not None or len(given) < _MIN_PREFIX:
        return exact
    matches = [task for task in tasks if task["id"].startswith(given)]
    return matches[0] if len(matches) == 1 else None


def _name(given: Any, *lists: list[dict[str, Any]] | None) -> str:
    for tasks in lists:
        task = _find(tasks or [], given)
        if task is not None:
            return _quoted(task["title"])
    return str(given)[:_MIN_PREFIX] if given else "?"


def _patch_text(patch: dict[str, Any]) -> str:
    if patch.get("status") in _WORDS:
        return f"→ {_WORDS[patch['status']]}"
    if isinstance(patch.get("title"), str):
        return f"→ renamed {_quoted(patch['title'])}"
    return "edited"


def todo_title(args: Any, previous: Any = None, current: Any = None) -> str | None:
    """What a todo call did, in task titles; ``None`` for a call this row does not know.

    Args:
        args: the call's arguments.
        previous: the snapshot before the call (the last successful todo result), if known.
        current: the snapshot the call returned, if it has returned.
    """
    if not isinstance(args, dict):
        return None
    before, after = tasks_of(previous), tasks_of(current)
    action = args.get("action")
    if action in ("list", "clear"):
        return f"todo {action}"
    if action == "add":
        batch = found_tasks if isinstance(found_tasks := args.get("tasks"), list) else [args]
        titles = [
            _quoted(t["title"]) for t in batch if isinstance(t, dict) and isinstance(t.get("title"), str)
        ]
        if len(titles) == 1:
            return f"todo add {titles[0]}"
        return _one_line(f"todo add {len(titles)} tasks: {', '.join(titles)}", 200)
    if action == "update" and isinstance(args.get("updates"), list):
        parts = [
            f"{_name(patch.get('id'), before, after)} {_patch_text(patch)}"
            for patch in args["updates"]
            if isinstance(patch, dict)
        ]
        return _one_line(f"todo update {', '.join(parts)}", 200)
    if action == "remove":
        return f"todo remove {_name(args.get('id'), before)}"
    return None


@dataclass
class Checklist:
    """A checklist's lines, and which of them the call changed (shown highlighted)."""

    lines: list[str]
    changed: set[int] = field(default_factory=set)


def _changed_ids(args: Any, before: list[dict[str, Any]] | None, after: list[dict[str, Any]]) -> set[str]:
    if before is not None:
        old = {task["id"]: task for task in before}
        return {task["id"] for task in after if old.get(task["id"]) != task}
    if isinstance(args, dict) and args.get("action") == "update":
        found = (
            _find(after, patch.get("id")) for patch in args.get("updates") or [] if isinstance(patch, dict)
        )
        return {task["id"] for task in found if task is not None}
    return set()


def checklist(args: Any, previous: Any, current: Any, *, expanded: bool) -> Checklist | None:
    """The list after the call, ``None`` when ``current`` is not a todo snapshot.

    Collapsed, a list longer than 8 tasks folds the completed tasks the call did not touch into one
    line; expanded, every task is shown with its description.
    """
    after = tasks_of(current)
    if after is None:
        return None
    if not after:
        return Checklist(["(no tasks)"])
    changed = _changed_ids(args, tasks_of(previous), after)
    fold = not expanded and len(after) > _FOLD_ABOVE
    folded = [t for t in after if fold and t["status"] == "completed" and t["id"] not in changed]
    result = Checklist([f"{MARKS['completed']} {len(folded)} more completed"] if folded else [])
    for task in after:
        if task in folded:
            continue
        if task["id"] in changed:
            result.changed.add(len(result.lines))
        result.lines.append(f"{MARKS[task['status']]} {_one_line(task['title'], 200)}")
        description = task.get("description")
        if expanded and isinstance(description, str) and description.strip():
            result.lines.append(f"    {_one_line(description, 600)}")
    done = sum(1 for task in after if task["status"] == "completed")
    result.lines.append(f"{done} of {len(after)} done")
    return result
