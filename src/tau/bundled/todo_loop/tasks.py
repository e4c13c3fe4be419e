"""The task list todo-loop reads: the newest valid list on the branch, from three persisted shapes.

Sources (``extensions.md`` §4.6, ``decisions.md`` "todo-loop"):

- a ``custom`` entry with ``customType: "pi-todo:state"`` (tau's ``todo``), tasks at ``data.tasks``;
- a ``custom`` entry with ``customType: "rpiv-todo-state"`` (rpiv-todo 2.15), tasks at ``data.tasks``;
- a ``message`` entry holding a ``toolResult`` of the tool ``todo``, tasks at ``details.tasks``.

A valid list is an array of objects that each have a string ``status``; an empty array is a list
with no open tasks. A task's text is its ``title``, ``subject`` or ``content`` (the first that is a
string). Unfinished means ``pending`` or ``in_progress``; every other status is closed. An entry
whose tasks are malformed is skipped, so an older valid list wins over a newer broken one: an errored
``todo`` call must never read as an empty list. A ``pi-todo:state`` entry is checked by ``todo``'s own
rules (its schema version, fields, limits and dependency graph), the same reader ``todo`` uses.

When the bundled ``todo`` is loaded, the loop does not read these entries for the list: it asks
``todo`` itself (:func:`task_list_of_state` on its answer), so both always agree on which snapshot is
current. The branch sources serve when another ``todo`` tool is active instead.

Nothing here raises for a strange entry: a reader that failed would stop the loop silently, so
whatever cannot be read is "no list".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tau.bundled.todo_state import check_state
from tau.common.dataclass import dataclass

__all__ = [
    "OPEN_STATUSES",
    "SOURCE_PI_TODO",
    "SOURCE_RPIV",
    "SOURCE_TODO_RESULT",
    "Task",
    "TaskList",
    "newest_task_list",
    "task_list_of",
    "task_list_of_state",
]

SOURCE_PI_TODO = "pi-todo:state"
SOURCE_RPIV = "rpiv-todo-state"
SOURCE_TODO_RESULT = "todo result"
OPEN_STATUSES = frozenset({"pending", "in_progress"})
_TOMBSTONE = "deleted"  # rpiv-todo keeps deleted tasks as tombstones; they are no longer tasks
_CUSTOM_SOURCES = {SOURCE_PI_TODO: SOURCE_PI_TODO, SOURCE_RPIV: SOURCE_RPIV}


@dataclass(frozen=True)
class Task:
    """One task as the loop sees it: its id (when it is a string or a number), text and status."""

    id: str | int | float | None
    text: str
    status: str

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


@dataclass(frozen=True)
class TaskList:
    """A valid list and where it was read from.

    Attributes:
        source: ``pi-todo:state``, ``rpiv-todo-state`` or ``todo result`` (as ``/todoloop`` names it).
        entry_id: The id of the session entry that holds it.
        tasks: The tasks in list order, tombstones (``deleted``) included.
    """

    source: str
    entry_id: str | None
    tasks: tuple[Task, ...]

    @property
    def open_count(self) -> int:
        return sum(1 for task in self.tasks if task.is_open)

    @property
    def total(self) -> int:
        """The tasks that still exist: rpiv-todo's ``deleted`` tombstones are not counted."""
        return sum(1 for task in self.tasks if task.status != _TOMBSTONE)


def _task(item: Any) -> Task | None:
    if item.__class__ is not dict:
        return None
    status = item.get("status")
    if status.__class__ is not str:
        return None
    text = ""
    for key in ("title", "subject", "content"):
        value = item.get(key)
        if value.__class__ is str:
            text = value
            break
    task_id = item.get("id")
    if task_id.__class__ not in (str, int, float):
        task_id = None
    return Task(task_id, text, status)


def _parse_tasks(value: Any) -> tuple[Task, ...] | None:
    """The tasks of a valid list (an array of objects each with a string ``status``), else ``None``."""
    if value.__class__ is not list:
        return None
    tasks = []
    for item in value:
        task = _task(item)
        if task is None:
            return None
        tasks.append(task)
    return tuple(tasks)


def _candidate(entry: Any) -> tuple[str, Any] | None:
    """``(source, raw tasks)`` when ``entry`` is one of the three shapes, whatever its tasks hold."""
    if entry.__class__ is not dict:
        return None
    kind = entry.get("type")
    if kind == "custom":
        source = _CUSTOM_SOURCES.get(entry.get("customType"))  # type: ignore[arg-type]
        data = entry.get("data")
        if source is None or data.__class__ is not dict:
            return None
        return source, data.get("tasks")
    if kind == "message":
        message = entry.get("message")
        if message.__class__ is not dict or message.get("role") != "toolResult":
            return None
        if message.get("toolName") != "todo":
            return None
        details = message.get("details")
        if details.__class__ is not dict:
            return None
        return SOURCE_TODO_RESULT, details.get("tasks")
    return None


def task_list_of(entry: Any) -> TaskList | None:
    """The valid list ``entry`` holds, or ``None`` (another entry type, or malformed tasks).

    A ``pi-todo:state`` entry is valid as the bundled ``todo`` judges it (:func:`check_state`), so
    the loop never reads as current a snapshot that ``todo`` would skip, even when ``todo`` is not
    loaded and another tool wrote the entry.
    """
    try:
        found = _candidate(entry)
        if found is None:
            return None
        if found[0] == SOURCE_PI_TODO:
            check_state(entry["data"])
        tasks = _parse_tasks(found[1])
    except Exception:  # a hook must never throw over a strange entry: unreadable is "no list"
        return None
    if tasks is None:
        return None
    entry_id = entry.get("id")
    return TaskList(found[0], entry_id if isinstance(entry_id, str) else None, tasks)


def newest_task_list(entries_newest_first: Iterable[Any]) -> TaskList | None:
    """The first valid list in ``entries_newest_first`` (for a branch: ``reversed(branch)``).

    Stops at the first valid list, so the cost is the distance from the newest end to it.
    """
    for entry in entries_newest_first:
        found = task_list_of(entry)
        if found is not None:
            return found
    return None


def task_list_of_state(state: Any) -> TaskList | None:
    """The list of a ``{schemaVersion, revision, tasks}`` state as the bundled ``todo`` answers it."""
    try:
        tasks = _parse_tasks(state.get("tasks")) if state.__class__ is dict else None
    except Exception:  # never raise over strange data: unreadable is "no list"
        return None
    return TaskList(SOURCE_PI_TODO, None, tasks) if tasks is not None else None
