"""The add/edit form of the ``/todo`` overlay: a small text editor per field, and the call it makes."""

from __future__ import annotations

from typing import Any

from tau.bundled.todo.keys import clean
from tau.bundled.todo_state import Task

__all__ = ["Editor", "Form"]

_REVERSE, _PLAIN = "\x1b[7m", "\x1b[27m"


class Editor:
    """A small text field: cursor, insertion, deletion and undo back to the prefill (never past it)."""

    def __init__(self, text: str = "", *, multiline: bool = False) -> None:
        self.multiline = multiline
        self.text = clean(text, multiline=multiline)
        self.initial = self.text
        self.cursor = len(self.text)
        self._undo: list[tuple[str, int]] = []

    @property
    def changed(self) -> bool:
        return self.text != self.initial

    def insert(self, text: str) -> None:
        text = clean(text, multiline=self.multiline)
        if text:
            self._remember()
            self.text = self.text[: self.cursor] + text + self.text[self.cursor :]
            self.cursor += len(text)

    def key(self, key: str) -> bool:
        """Apply an editing key; ``False`` when the key is not an editing key."""
        if key == "left":
            self.cursor = max(0, self.cursor - 1)
        elif key == "right":
            self.cursor = min(len(self.text), self.cursor + 1)
        elif key in ("home", "ctrl+a"):
            self.cursor = 0
        elif key in ("end", "ctrl+e"):
            self.cursor = len(self.text)
        elif key == "backspace" and self.cursor:
            self._remember()
            self.text = self.text[: self.cursor - 1] + self.text[self.cursor :]
            self.cursor -= 1
        elif key == "delete" and self.cursor < len(self.text):
            self._remember()
            self.text = self.text[: self.cursor] + self.text[self.cursor + 1 :]
        elif key in ("ctrl+z", "ctrl+_", "ctrl+-"):
            if self._undo:
                self.text, self.cursor = self._undo.pop()
        elif len(key) == 1:
            self.insert(key)
        else:
            return key == "backspace"
        return True

    def _remember(self) -> None:
        self._undo.append((self.text, self.cursor))

    def lines(self, focused: bool) -> list[str]:
        text = self.text
        if focused:
            at = text[self.cursor] if self.cursor < len(text) and text[self.cursor] != "\n" else " "
            after = self.cursor + (1 if self.cursor < len(text) and text[self.cursor] != "\n" else 0)
            text = text[: self.cursor] + _REVERSE + at + _PLAIN + text[after:]
        return text.split("\n")


class Form:
    """Add or edit: title, then description, then dependencies."""

    def __init__(self, task: Task | None, tasks: list[Task], revision: int) -> None:
        self.task_id = task["id"] if task else None
        self.revision = revision
        self.title = Editor(task["title"] if task else "")
        self.description = Editor(task["description"] if task else "", multiline=True)
        self.choices = [t for t in tasks if t["id"] != self.task_id]
        self.initial_deps = list(task["dependencies"]) if task else []
        self.deps = list(self.initial_deps)
        self.field = 0  # 0 title, 1 description, 2 dependencies
        self.cursor = 0

    def params(self) -> dict[str, Any] | None:
        """The tool call this form makes, or ``None`` when an edit changes nothing."""
        if self.task_id is None:
            params: dict[str, Any] = {
                "action": "add",
                "baseRevision": self.revision,
                "title": self.title.text,
            }
            if self.description.text:
                params["description"] = self.description.text
            if self.deps:
                params["dependencies"] = list(self.deps)
            return params
        patch: dict[str, Any] = {"id": self.task_id}
        if self.title.changed:
            patch["title"] = self.title.text
        if self.description.changed:
            patch["description"] = self.description.text
        if self.deps != self.initial_deps:
            patch["dependencies"] = list(self.deps)
        if len(patch) == 1:
            return None
        return {"action": "update", "baseRevision": self.revision, "updates": [patch]}
