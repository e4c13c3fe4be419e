"""The checklist as a pure state machine: tasks, revisions, limits, dependency rules.

Shared by ``todo`` (which writes and reads it) and ``todo-loop`` (which reads ``pi-todo:state`` entries by
the same rules when ``todo`` is not loaded), so the two never judge a snapshot differently.

A state is the persisted shape ``{"schemaVersion": 1, "revision": N, "tasks": [...]}``. Mutations
never edit a state in place: :func:`apply` returns a new state (or raises :class:`TodoError`), and
the old one stays valid. Every rule is checked on the post-state of the whole mutation, so an
``update`` that completes a task and its dependent together is valid.

Errors::

    TodoError            a rejected call: ``code`` (details.error) and the catalogue message
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypedDict, cast

from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_trim

__all__ = [
    "MAX_DEPENDENCIES",
    "MAX_DESCRIPTION",
    "MAX_STATE_BYTES",
    "MAX_TASKS",
    "MAX_TITLE",
    "MIN_ID_PREFIX",
    "MUTATIONS",
    "SCHEMA_VERSION",
    "STATUSES",
    "Change",
    "State",
    "Task",
    "TodoError",
    "abbreviate",
    "apply",
    "check_state",
    "empty_state",
    "new_task_id",
    "state_bytes",
]

SCHEMA_VERSION = 1
MAX_TASKS = 40
MAX_TITLE = 160  # code points
MAX_DESCRIPTION = 512  # code points
MAX_DEPENDENCIES = 16  # distinct ids per task
MAX_STATE_BYTES = 64 * 1024  # UTF-8 bytes of the compact JSON of the whole state
STATUSES = ("pending", "in_progress", "completed")
MUTATIONS = ("add", "update", "remove", "clear")
_ACTIVE = ("in_progress", "completed")
_ID_SHOWN = 80  # longest id quoted back in an error message
MIN_ID_PREFIX = 8  # the shortest id prefix accepted for a task id (as git takes abbreviated hashes)
_BATCH_REF = "#"  # "#N" in a batch item's dependencies: the N-th task of the same batch (1-based)

Status = Literal["pending", "in_progress", "completed"]


class Task(TypedDict):
    """One checklist item, as persisted."""

    id: str
    title: str
    description: str
    status: Status
    dependencies: list[str]


class State(TypedDict):
    """The whole checklist: the data of a ``pi-todo:state`` entry."""

    schemaVersion: int
    revision: int
    tasks: list[Task]


class TodoError(Exception):
    """A rejected todo call: ``code`` goes to ``details.error``, ``message`` to the model."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Change:
    """The outcome of a mutation: the post-state and the ids of tasks added, changed or removed.

    An empty ``changed`` is a no-op: ``state`` is then the pre-state, with its revision.
    """

    state: State
    changed: list[str]

    @property
    def is_noop(self) -> bool:
        return not self.changed


def empty_state() -> State:
    """A new checklist: revision 0, no tasks."""
    return {"schemaVersion": SCHEMA_VERSION, "revision": 0, "tasks": []}


def new_task_id() -> str:
    """A fresh opaque task id (random UUID4)."""
    return str(uuid.uuid4())


def state_bytes(state: State) -> int:
    """UTF-8 length of the compact JSON serialization (``JSON.stringify``) of ``state``."""
    return len(jsjson.dumps(state))


def shown(task_id: Any) -> str:
    """A task id as quoted in a message (long values cut)."""
    text = task_id if isinstance(task_id, str) else jsjson.dumps_str(task_id)
    return text if len(text) <= _ID_SHOWN else text[: _ID_SHOWN - 1] + "…"


def abbreviate(task_id: str, ids: Iterable[str]) -> str:
    """The shortest prefix of ``task_id``, at least :data:`MIN_ID_PREFIX` characters, that no other of
    ``ids`` starts with (the whole id when it is that short)."""
    others = [other for other in ids if other != task_id]
    for length in range(MIN_ID_PREFIX, len(task_id)):
        prefix = task_id[:length]
        if not any(other.startswith(prefix) for other in others):
            return prefix
    return task_id


def _resolve(ids: Iterable[str], given: Any) -> str | None:
    """The task id ``given`` names: itself, or the one id it is a unique prefix (>= 8 characters) of.

    ``None`` when it names none; raises ``ambiguous_task`` when a prefix fits several.
    """
    ids = list(ids)
    if not isinstance(given, str) or given in ids:
        return given if given in ids else None
    if len(given) < MIN_ID_PREFIX:
        return None
    found = [task_id for task_id in ids if task_id.startswith(given)]
    if len(found) > 1:
        raise TodoError(
            "ambiguous_task",
            f"task id prefix {shown(given)} matches {len(found)} tasks; give more characters",
        )
    return found[0] if found else None


# ---------------------------------------------------------------------------------------------- apply


def apply(state: State, params: dict[str, Any], new_id: Callable[[], str] = new_task_id) -> Change:
    """Apply the mutation ``params`` (``add``, ``update``, ``remove`` or ``clear``) to ``state``.

    Order: ``baseRevision`` first, then the action's own checks, then every rule on the post-state,
    then no-op detection. Raises :class:`TodoError` for a rejected call.
    """
    action = params.get("action")
    if action not in MUTATIONS:
        raise TodoError(
            "invalid_arguments", f"unknown action {action!r}; use list, add, update, remove or clear"
        )
    _check_revision(state, params.get("baseRevision"))
    before = state["tasks"]
    if action == "add":
        after = _add_batch(before, params, new_id) if "tasks" in params else _add(before, params, new_id)
    elif action == "update":
        after = _update(before, params)
    elif action == "remove":
        after = _remove(before, params)
    else:
        after = []
    changed = _changed_ids(before, after)
    if not changed:
        return Change(state, [])
    post: State = {"schemaVersion": SCHEMA_VERSION, "revision": state["revision"] + 1, "tasks": after}
    _check_graph(before, after)
    if state_bytes(post) > MAX_STATE_BYTES:
        raise TodoError("state_too_large", "state exceeds 64 KiB")
    return Change(post, changed)


def _check_revision(state: State, base: Any) -> None:
    current = state["revision"]
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise TodoError(
            "revision_conflict",
            f"revision conflict (baseRevision {jsjson.dumps_str(base) if base is not None else 'missing'}, "
            f'current {current}); call todo {{"action":"list"}} and retry',
        )
    if base != current:
        raise TodoError(
            "revision_conflict",
            f'revision conflict (baseRevision {base}, current {current}); call todo {{"action":"list"}} and retry',
        )


def _add(before: list[Task], params: dict[str, Any], new_id: Callable[[], str]) -> list[Task]:
    if len(before) >= MAX_TASKS:
        raise TodoError("task_limit", f"task limit {MAX_TASKS} reached")
    existing = {task["id"] for task in before}
    task_id = new_id()
    while task_id in existing:
        task_id = new_id()
    task: Task = {
        "id": task_id,
        "title": _title(params.get("title")),
        "description": _description(params.get("description", "")),
        "status": _status(params.get("status", "pending")),
        "dependencies": _resolved(existing, _dependencies(params.get("dependencies", []))),
    }
    return [*_copy_tasks(before), task]


def _add_batch(before: list[Task], params: dict[str, Any], new_id: Callable[[], str]) -> list[Task]:
    """``add`` with ``tasks``: every item a new pending task, in order, as one mutation."""
    items = params.get("tasks")
    if "title" in params:
        raise TodoError("invalid_arguments", "add takes either title or tasks, not both")
    stray = [key for key in ("description", "status", "dependencies") if key in params]
    if stray:
        raise TodoError(
            "invalid_arguments", f"with tasks, give {', '.join(stray)} inside each task, not beside tasks"
        )
    if not isinstance(items, list) or not items or not all(isinstance(item, dict) for item in items):
        raise TodoError(
            "invalid_arguments", "tasks must be a non-empty array of {title, description?, dependencies?}"
        )
    if len(before) + len(items) > MAX_TASKS:
        raise TodoError("task_limit", f"task limit {MAX_TASKS} reached")
    existing = {task["id"] for task in before}
    batch_ids: list[str] = []
    for _ in items:
        task_id = new_id()
        while task_id in existing or task_id in batch_ids:
            task_id = new_id()
        batch_ids.append(task_id)
    added: list[Task] = []
    for index, (item, task_id) in enumerate(zip(items, batch_ids, strict=True)):
        try:
            dependencies = _dependencies(item.get("dependencies", []))
            added.append(
                {
                    "id": task_id,
                    "title": _title(item.get("title")),
                    "description": _description(item.get("description", "")),
                    "status": "pending",
                    "dependencies": _resolved(existing, dependencies, batch_ids),
                }
            )
        except TodoError as exc:
            raise TodoError(exc.code, f"{exc.message} (tasks[{index}])") from None
    return [*_copy_tasks(before), *added]


def _update(before: list[Task], params: dict[str, Any]) -> list[Task]:
    patches = params.get("updates")
    if not isinstance(patches, list) or not patches:
        raise TodoError("invalid_arguments", "updates must be a non-empty array of {id, ...} patches")
    after = _copy_tasks(before)
    by_id = {task["id"]: task for task in after}
    for patch in patches:
        if not isinstance(patch, dict) or not isinstance(patch.get("id"), str):
            shown_patch = shown(patch) if isinstance(patch, dict) else repr(patch)
            raise TodoError(
                "invalid_arguments", f"each update must be an object with an id, not {shown_patch}"
            )
        task = by_id.get(_resolve(by_id, patch.get("id")))  # type: ignore[arg-type]
        if task is None:
            raise TodoError("unknown_task", f"unknown task id {shown(patch.get('id'))}")
        if "title" in patch:
            task["title"] = _title(patch["title"])
        if "description" in patch:
            task["description"] = _description(patch["description"])
        if "status" in patch:
            task["status"] = _status(patch["status"])
        if "dependencies" in patch:
            task["dependencies"] = _resolved(by_id, _dependencies(patch["dependencies"]))
    return after


def _remove(before: list[Task], params: dict[str, Any]) -> list[Task]:
    if not isinstance(params.get("id"), str):
        raise TodoError("invalid_arguments", "remove needs the id of the task to remove")
    ids = [task["id"] for task in before]
    target = _resolve(ids, params.get("id"))
    if target is None:
        raise TodoError("unknown_task", f"unknown task id {shown(params.get('id'))}")
    dependents = sum(1 for task in before if target in task["dependencies"])
    if dependents:
        raise TodoError(
            "has_dependents", f"cannot remove {abbreviate(target, ids)}: {dependents} task(s) depend on it"
        )
    return [task for task in _copy_tasks(before) if task["id"] != target]


def _resolved(ids: Iterable[str], dependencies: list[str], batch: list[str] | None = None) -> list[str]:
    """``dependencies`` with every id prefix (and, in a batch, every ``#N``) written out in full.

    What names no task stays as given, for the dependency rules to report.
    """
    ids = list(ids)
    out = []
    for given in dependencies:
        if batch is not None and given.startswith(_BATCH_REF) and given[1:].isdigit():
            position = int(given[1:])
            out.append(batch[position - 1] if 1 <= position <= len(batch) else given)
            continue
        found = _resolve(ids, given)
        out.append(found if found is not None else given)
    return list(dict.fromkeys(out))


def _copy_tasks(tasks: list[Task]) -> list[Task]:
    return [{**task, "dependencies": list(task["dependencies"])} for task in tasks]


def _changed_ids(before: list[Task], after: list[Task]) -> list[str]:
    old = {task["id"]: task for task in before}
    new_ids = {task["id"] for task in after}
    changed = [task["id"] for task in after if old.get(task["id"]) != task]
    changed += [task["id"] for task in before if task["id"] not in new_ids]
    return changed


# ----------------------------------------------------------------------------------------- fields


def _title(value: Any) -> str:
    if not isinstance(value, str) or not js_trim(value) or len(value) > MAX_TITLE:
        raise TodoError("invalid_title", f"title must be non-blank and at most {MAX_TITLE} characters")
    return value


def _description(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TodoError("invalid_arguments", f"description must be a string, not {jsjson.dumps_str(value)}")
    if len(value) > MAX_DESCRIPTION:
        raise TodoError("description_too_long", f"description exceeds {MAX_DESCRIPTION} characters")
    return value


def _status(value: Any) -> Status:
    if value not in STATUSES:
        raise TodoError(
            "invalid_arguments",
            f"status must be pending, in_progress or completed, not {jsjson.dumps_str(value)}",
        )
    return value


def _dependencies(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TodoError("invalid_arguments", "dependencies must be an array of task ids")
    distinct = list(dict.fromkeys(value))  # duplicates are stored once
    if len(distinct) > MAX_DEPENDENCIES:
        raise TodoError("too_many_dependencies", f"too many dependencies (max {MAX_DEPENDENCIES})")
    return distinct


# ------------------------------------------------------------------------------------------ graph


def _check_graph(before: list[Task], after: list[Task]) -> None:
    """The dependency rules on the post-state ``after`` (``before``: the pre-state, for reopening)."""
    by_id = {task["id"]: task for task in after}
    ids = list(by_id)
    for task in after:
        for dependency in task["dependencies"]:
            if dependency == task["id"]:
                raise TodoError("self_dependency", "task cannot depend on itself")
            if dependency not in by_id:
                raise TodoError("missing_dependency", f"dependency {shown(dependency)} not found")
    if _has_cycle(after):
        raise TodoError("dependency_cycle", "dependencies would create a cycle")
    was_completed = {task["id"] for task in before if task["status"] == "completed"}
    for task in after:
        reopened = task["id"] in was_completed and task["status"] != "completed"
        if reopened and any(
            task["id"] in other["dependencies"] and other["status"] in _ACTIVE for other in after
        ):
            raise TodoError(
                "dependents_active",
                f"cannot reopen {abbreviate(task['id'], ids)}: dependent tasks are in progress or completed",
            )
    for task in after:
        if task["status"] in _ACTIVE and any(by_id[d]["status"] != "completed" for d in task["dependencies"]):
            raise TodoError(
                "prerequisites_incomplete",
                f"prerequisites of {abbreviate(task['id'], ids)} are not completed",
            )


def _has_cycle(tasks: Iterable[Task]) -> bool:
    edges = {task["id"]: task["dependencies"] for task in tasks}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in edges:
        if root in state:
            continue
        stack = [(root, iter(edges[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                return True
            elif child not in state and child in edges:
                state[child] = 1
                stack.append((child, iter(edges[child])))
    return False


# ---------------------------------------------------------------------------------- persisted data


_TASK_KEYS = {"id", "title", "description", "status", "dependencies"}


def check_state(data: Any) -> State:
    """``data`` of a ``pi-todo:state`` entry as a valid state (a deep copy), or ``ValueError`` naming the fault.

    Valid means: the schema-1 shape with exactly the task fields, unique ids, every limit, and every
    dependency rule (no missing, self or cyclic dependency; active tasks have completed prerequisites).
    """
    if not isinstance(data, dict) or set(data) != {"schemaVersion", "revision", "tasks"}:
        raise ValueError("not a {schemaVersion, revision, tasks} object")
    if data["schemaVersion"] != SCHEMA_VERSION or isinstance(data["schemaVersion"], bool):
        raise ValueError(f"unsupported schemaVersion {data['schemaVersion']!r}")
    revision = data["revision"]
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 0:
        raise ValueError(f"revision {revision!r} is not a non-negative integer")
    tasks = data["tasks"]
    if not isinstance(tasks, list) or len(tasks) > MAX_TASKS:
        raise ValueError(f"tasks must be an array of at most {MAX_TASKS} tasks")
    ids: set[str] = set()
    for task in tasks:
        _check_task(task)
        if task["id"] in ids:
            raise ValueError(f"task id {task['id']!r} appears twice")
        ids.add(task["id"])
    state = cast(State, copy.deepcopy(data))  # its shape checked above
    try:
        _check_graph(state["tasks"], state["tasks"])
    except TodoError as exc:
        raise ValueError(exc.message) from None
    if state_bytes(state) > MAX_STATE_BYTES:
        raise ValueError("state exceeds 64 KiB")
    return state


def _check_task(task: Any) -> None:
    if not isinstance(task, dict) or set(task) != _TASK_KEYS:
        raise ValueError("a task is not an {id, title, description, status, dependencies} object")
    if not isinstance(task["id"], str) or not task["id"]:
        raise ValueError(f"task id {task['id']!r} is not a non-empty string")
    if not isinstance(task["description"], str) or not isinstance(task["dependencies"], list):
        raise ValueError(f"task {task['id']!r}: description must be a string and dependencies an array")
    try:
        _title(task["title"])
        _description(task["description"])
        _status(task["status"])
        if _dependencies(task["dependencies"]) != task["dependencies"]:
            raise ValueError(f"task {task['id']!r} lists a dependency twice")
    except TodoError as exc:
        raise ValueError(f"task {task['id']!r}: {exc.message}") from None
