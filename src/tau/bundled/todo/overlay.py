"""``/todo``: the full-terminal overlay of the checklist (a component for ``ctx.ui.custom``).

Keys (seed): arrows, PgUp/PgDn, Home/End select by stable id (and scroll long details); Enter
inspects; ``a`` adds, ``e`` edits, ``s`` changes the status (or reopens); ``d`` then ``y`` removes,
``D`` then ``y`` clears, any other key cancels a confirmation; Escape backs out or closes; Ctrl+C
cancels. Character commands also arrive as Kitty CSI-u sequences; pasted text (``handle_paste``)
only ever goes into a form field, never runs a command.

Forms and dialogs belong to the revision they were opened at: their edit carries that
``baseRevision``, so a checklist changed meanwhile gives a conflict, never a blind overwrite. Values
are shown and prefilled inertly (:func:`.keys.clean`); a field left as prefilled is not sent, so an
unchanged edit keeps the task's original data.
"""

from __future__ import annotations

import os
import textwrap
import unicodedata
from collections.abc import Callable
from typing import Any, Protocol

from tau.bundled.todo.form import Form
from tau.bundled.todo.keys import clean, parse_keys
from tau.bundled.todo.results import Reply
from tau.bundled.todo_state import STATUSES, State, Task

__all__ = ["Source", "TodoOverlay"]

# The same marks as the todo rows of the conversation (tau.modes.interactive.todo_rows): one style.
_MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
_NAV = ("up", "down", "pageup", "pagedown", "home", "end")
_PASTE_START, _PASTE_END = "\x1b[200~", "\x1b[201~"
_HINT = "↑↓ PgUp/PgDn Home/End · Enter inspect · a add · e edit · s status · d remove · D clear · Esc close"


class Source(Protocol):
    """Where the overlay reads and changes the checklist (the extension's store)."""

    @property
    def state(self) -> State | None: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def note(self) -> str | None: ...

    def mutate(self, params: dict[str, Any]) -> Reply: ...


class TodoOverlay:
    """The ``/todo`` component: ``render(width)``, ``handle_input(data)``, ``handle_paste(text)``.

    The host gives it ``request_render()`` and ``done(result)``, as attributes or through
    :meth:`bind`; :meth:`retire` closes it when the session it belongs to changes.
    """

    def __init__(
        self,
        source: Source,
        *,
        height: Callable[[], int] | None = None,
        submit_keys: tuple[str, ...] = ("enter",),
        newline_keys: tuple[str, ...] = ("shift+enter", "alt+enter", "ctrl+j"),
    ) -> None:
        self.source = source
        # the host contract, replaced by the host: ask for a new frame; close the overlay
        self.request_render: Callable[[], None] = _no_frame
        self.done: Callable[[Any], None] = _no_close
        self._height = height or _terminal_height
        self.submit_keys = submit_keys
        self.newline_keys = newline_keys
        self.view = "list"
        self.closed = False
        self.rendered = False  # whether a frame was ever drawn
        self.message: str | None = None
        self.selected: str | None = None
        self._top = 0
        self._detail_top = 0
        self._width = 80
        self._form: Form | None = None
        self._pick = 0
        self._pending: tuple[str, int, str | None] | None = None  # (view, revision, task id) of a dialog
        tasks = self._tasks()
        self.selected = tasks[0]["id"] if tasks else None

    # ------------------------------------------------------------------------------ host contract

    def bind(self, request_render: Callable[[], None], done: Callable[[Any], None]) -> None:
        self.request_render = request_render
        self.done = done

    def retire(self) -> None:
        """Close without a result (the session or branch it belongs to is gone)."""
        self._close()

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            self.done(None)

    # ------------------------------------------------------------------------------------ input

    def handle_input(self, data: str) -> None:
        for kind, part in _split_pastes(data):
            if kind == "paste":
                self.handle_paste(part)
                continue
            for key in parse_keys(part):
                if self.closed:
                    return
                self._key(key)
        self.request_render()

    def handle_paste(self, text: str) -> None:
        """Pasted text goes into the focused form field only; it never runs a command."""
        form = self._form
        if self.view == "form" and form is not None and form.field < 2:
            (form.title if form.field == 0 else form.description).insert(text)
            self.request_render()

    def _key(self, key: str) -> None:
        handler = {
            "list": self._list_key,
            "detail": self._detail_key,
            "confirm": self._confirm_key,
            "status": self._status_key,
            "form": self._form_key,
        }[self.view]
        handler(key)

    def _list_key(self, key: str) -> None:
        tasks = self._tasks()
        if key in ("escape", "ctrl+c"):
            self._close()
        elif key in _NAV:
            self._move(tasks, key)
        elif key == "enter" and self._task():
            self.view, self._detail_top = "detail", 0
        elif key == "a":
            self._open_form(None)
        elif key == "e" and self._task():
            self._open_form(self._task())
        elif key == "s" and self._task():
            task = self._task()
            self._pick = STATUSES.index(task["status"]) if task else 0
            self._open("status", task)
        elif key == "d" and self._task():
            self._open("confirm", self._task(), "remove")
        elif key == "D" and tasks:
            self._open("confirm", None, "clear")

    def _detail_key(self, key: str) -> None:
        if key in ("escape", "ctrl+c"):
            self.view = "list"
        elif key in ("up", "pageup", "home"):
            step = {"up": 1, "pageup": self._page(), "home": self._detail_top}[key]
            self._detail_top = max(0, self._detail_top - step)
        elif key in ("down", "pagedown", "end"):
            limit = max(0, len(self._detail_lines()) - self._page())
            step = {"down": 1, "pagedown": self._page(), "end": limit}[key]
            self._detail_top = min(limit, self._detail_top + step)

    def _confirm_key(self, key: str) -> None:
        assert self._pending is not None
        _, revision, task_id = self._pending
        self.view, self._pending = "list", None
        if key != "y":
            self.message = "cancelled"
            return
        if task_id is None:
            self._apply({"action": "clear", "baseRevision": revision})
        else:
            self._apply({"action": "remove", "baseRevision": revision, "id": task_id})

    def _status_key(self, key: str) -> None:
        assert self._pending is not None
        if key in ("escape", "ctrl+c"):
            self.view, self._pending = "list", None
        elif key in ("up", "down"):
            self._pick = (self._pick + (1 if key == "down" else -1)) % len(STATUSES)
        elif key == "enter":
            _, revision, task_id = self._pending
            self.view, self._pending = "list", None
            task = self._task()
            if task and task["status"] == STATUSES[self._pick]:
                return
            patch = {"id": task_id, "status": STATUSES[self._pick]}
            self._apply({"action": "update", "baseRevision": revision, "updates": [patch]})

    def _form_key(self, key: str) -> None:
        form = self._form
        assert form is not None
        if key in ("escape", "ctrl+c"):
            self.view, self._form, self.message = "list", None, "cancelled"
        elif form.field == 0:
            if key in ("enter", "tab"):
                form.field = 1
            else:
                form.title.key(key)
        elif form.field == 1:
            if key in self.newline_keys:  # newLine wins over submit
                form.description.insert("\n")
            elif key in self.submit_keys or key == "tab":
                form.field = 2
            else:
                form.description.key(key)
        else:
            self._choose_key(form, key)

    def _choose_key(self, form: Form, key: str) -> None:
        if key in ("up", "down") and form.choices:
            form.cursor = (form.cursor + (1 if key == "down" else -1)) % len(form.choices)
        elif key == " " and form.choices:
            chosen = form.choices[form.cursor]["id"]
            form.deps = [d for d in form.deps if d != chosen] if chosen in form.deps else [*form.deps, chosen]
        elif key == "shift+tab":
            form.field = 1
        elif key == "enter":
            params = form.params()
            self.view, self._form = "list", None
            if params is None:
                self.message = "no changes"
            else:
                self._apply(params)

    # ---------------------------------------------------------------------------------- actions

    def _open(self, view: str, task: Task | None, what: str | None = None) -> None:
        state = self.source.state
        if state is None:
            self.message = f"todo storage unavailable: {self.source.reason}"
            return
        self.view = view
        self._pending = (what or view, state["revision"], task["id"] if task else None)

    def _open_form(self, task: Task | None) -> None:
        state = self.source.state
        if state is None:
            self.message = f"todo storage unavailable: {self.source.reason}"
            return
        self._form = Form(task, state["tasks"], state["revision"])
        self.view, self.message = "form", None

    def _apply(self, params: dict[str, Any]) -> None:
        reply = self.source.mutate(params)
        self.message = reply.text.split("\n", 1)[0]
        if not reply.is_error and params["action"] == "add" and reply.details.get("tasks"):
            self.selected = reply.details["tasks"][-1]["id"]
        self._keep_selection()

    def _move(self, tasks: list[Task], key: str) -> None:
        if not tasks:
            return
        ids = [task["id"] for task in tasks]
        index = ids.index(self.selected) if self.selected in ids else 0
        step = {"up": -1, "down": 1, "pageup": -self._page(), "pagedown": self._page()}
        if key == "home":
            index = 0
        elif key == "end":
            index = len(ids) - 1
        else:
            index = min(len(ids) - 1, max(0, index + step[key]))
        self.selected = ids[index]

    def _keep_selection(self) -> None:
        ids = [task["id"] for task in self._tasks()]
        if self.selected not in ids:
            self.selected = ids[0] if ids else None

    def _tasks(self) -> list[Task]:
        state = self.source.state
        return state["tasks"] if state is not None else []

    def _task(self) -> Task | None:
        return next((task for task in self._tasks() if task["id"] == self.selected), None)

    def _page(self) -> int:
        return max(1, self._height() - 6)

    # ---------------------------------------------------------------------------------- render

    def render(self, width: int) -> list[str]:
        self.rendered = True
        self._width = width
        self._keep_selection()
        body = {
            "list": self._list_lines,
            "detail": self._detail_view,
            "confirm": self._confirm_lines,
            "status": self._status_lines,
            "form": self._form_lines,
        }[self.view]()
        lines = [self._title(), "", *body, ""]
        if self.message:
            lines.append(clean(self.message))
        return [_fit(line, width) for line in lines]

    def _title(self) -> str:
        state = self.source.state
        if state is None:
            return f"Todo · unavailable: {clean(self.source.reason or '')}"
        done = sum(1 for task in state["tasks"] if task["status"] == "completed")
        title = f"Todo · revision {state['revision']} · {done}/{len(state['tasks'])} done"
        return f"{title} ({self.source.note})" if self.source.note else title

    def _list_lines(self) -> list[str]:
        tasks = self._tasks()
        if self.source.state is None:
            return [
                "The checklist is unavailable: repair the session, then run /todo reconcile.",
                "",
                "Esc close",
            ]
        if not tasks:
            return ["No tasks yet. Press a to add one.", "", _HINT]
        page = self._page()
        ids = [task["id"] for task in tasks]
        index = ids.index(self.selected) if self.selected in ids else 0
        self._top = min(max(self._top, index - page + 1), index)
        rows = []
        for task in tasks[self._top : self._top + page]:
            marker = ">" if task["id"] == self.selected else " "
            deps = f"  (after {len(task['dependencies'])})" if task["dependencies"] else ""
            rows.append(f"{marker} {_MARKS[task['status']]} {clean(task['title'])}{deps}")
        return [*rows, "", _HINT]

    def _detail_lines(self) -> list[str]:
        task = self._task()
        if task is None:
            return []
        by_id = {t["id"]: t for t in self._tasks()}
        lines = [clean(task["title"]), f"status: {task['status']}   id: {task['id']}", ""]
        description = clean(task["description"], multiline=True)
        for paragraph in description.split("\n") if description else ["(no description)"]:
            lines += textwrap.wrap(paragraph, max(10, self._width - 1)) or [""]
        lines += ["", "Dependencies:" if task["dependencies"] else "Dependencies: none"]
        for dependency in task["dependencies"]:
            other = by_id.get(dependency)
            lines.append(
                f"  {_MARKS[other['status']]} {clean(other['title'])}" if other else f"  ? {dependency}"
            )
        dependents = [t for t in self._tasks() if task["id"] in t["dependencies"]]
        if dependents:
            lines += ["Needed by:", *(f"  {_MARKS[t['status']]} {clean(t['title'])}" for t in dependents)]
        return lines

    def _detail_view(self) -> list[str]:
        lines = self._detail_lines()
        shown = lines[self._detail_top : self._detail_top + self._page()]
        return [*shown, "", "↑↓ PgUp/PgDn Home/End scroll · Esc back"]

    def _confirm_lines(self) -> list[str]:
        assert self._pending is not None
        what, _, task_id = self._pending
        if what == "clear":
            return [f"Clear all {len(self._tasks())} tasks? Press y to confirm; any other key cancels."]
        task = next((t for t in self._tasks() if t["id"] == task_id), None)
        title = clean(task["title"]) if task else task_id
        return [f"Remove {title!s}? Press y to confirm; any other key cancels."]

    def _status_lines(self) -> list[str]:
        rows = ["Status:"]
        for index, status in enumerate(STATUSES):
            rows.append(f"{'>' if index == self._pick else ' '} {_MARKS[status]} {status}")
        return [*rows, "", "↑↓ choose · Enter apply · Esc cancel"]

    def _form_lines(self) -> list[str]:
        form = self._form
        assert form is not None
        heading = "Add task" if form.task_id is None else "Edit task"
        lines = [f"{heading} (revision {form.revision})", "", "Title:"]
        lines += [f"  {line}" for line in form.title.lines(form.field == 0)]
        lines.append("Description:")
        lines += [f"  {line}" for line in form.description.lines(form.field == 1)]
        lines.append("Dependencies:" + ("" if form.choices else " (no other tasks)"))
        for index, task in enumerate(form.choices):
            pointer = ">" if form.field == 2 and index == form.cursor else " "
            box = "☑" if task["id"] in form.deps else "☐"
            lines.append(f"{pointer} {box} {clean(task['title'])}")
        hints = [
            "Enter next · Esc cancel",
            "Enter next · Shift+Enter newline · Esc cancel",
            "Space toggle · Enter save",
        ]
        return [*lines, "", hints[form.field]]


def _split_pastes(data: str) -> list[tuple[str, str]]:
    """``data`` as ("keys", text) and ("paste", text) parts: a bracketed paste that reaches
    ``handle_input`` anyway is still only a paste."""
    parts: list[tuple[str, str]] = []
    while (start := data.find(_PASTE_START)) >= 0:
        end = data.find(_PASTE_END, start)
        end = len(data) if end < 0 else end
        parts += [("keys", data[:start]), ("paste", data[start + len(_PASTE_START) : end])]
        data = data[end + len(_PASTE_END) :]
    return [*parts, ("keys", data)]


def _terminal_height() -> int:
    try:
        return os.get_terminal_size().lines
    except OSError:
        return 24


def _fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` terminal cells (ANSI sequences cost nothing; wide characters two)."""
    out = []
    used = 0
    index = 0
    while index < len(line):
        if line[index] == "\x1b":
            end = line.find("m", index)
            end = len(line) - 1 if end < 0 else end
            out.append(line[index : end + 1])
            index = end + 1
            continue
        cells = 2 if unicodedata.east_asian_width(line[index]) in "WF" else 1
        if used + cells > width:
            break
        out.append(line[index])
        used += cells
        index += 1
    return "".join(out) + ("\x1b[0m" if "\x1b" in line else "")


def _no_frame() -> None:
    """Until the host binds the overlay, a frame request goes nowhere."""


def _no_close(result: Any) -> None:
    """Until the host binds the overlay, closing it tells nobody."""
