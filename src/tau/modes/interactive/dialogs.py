"""tau's own overlay components: select, confirm, input, editor.

They follow the same contract as an extension's ``ctx.ui.custom`` component (``render(width)``,
``handle_input(data)``, ``handle_paste(text)``; the host sets ``request_render`` and ``done``),
so one overlay host shows them all and tests drive them with raw key data.
"""

from __future__ import annotations

from typing import Any

from tau.modes.interactive.keybindings import select_key
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["Component", "ConfirmDialog", "EditorDialog", "InputDialog", "SelectDialog"]

_BOLD, _DIM, _INVERSE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[7m", "\x1b[0m"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


class Component:
    """Base of the built-in overlay components; the host replaces the two callbacks."""

    def request_render(self) -> None:
        """Set by the host: asks for a new frame."""

    def done(self, result: Any) -> None:
        """Set by the host: closes the overlay with ``result``."""

    def render(self, width: int) -> list[str]:
        raise NotImplementedError

    def handle_input(self, data: str) -> None:
        raise NotImplementedError

    def handle_paste(self, text: str) -> None:
        return None


class SelectDialog(Component):
    """Pick one of ``options``: arrows move, typing filters, Enter picks, Esc gives ``None``."""

    def __init__(self, title: str, options: list[str], *, visible: int = 10, selected: int = 0) -> None:
        self.title = sanitize_text(title)
        self.options = [str(option) for option in options]
        self.filter = ""
        self.index = selected
        self.visible = visible

    def matches(self) -> list[int]:
        words = self.filter.lower().split()
        return [i for i, option in enumerate(self.options) if all(w in option.lower() for w in words)]

    def render(self, width: int) -> list[str]:
        matches = self.matches()
        lines = [f"{_BOLD}{_clip(self.title, width)}{_RESET}"]
        if self.filter:
            lines.append(_clip(f"filter: {self.filter}", width))
        position = matches.index(self.index) if self.index in matches else 0
        start = max(0, min(position - self.visible // 2, len(matches) - self.visible))
        for i in matches[start : start + self.visible]:
            text = _clip(sanitize_text(self.options[i]).replace("\n", " "), width - 2)
            lines.append(f"{_INVERSE}› {text}{_RESET}" if i == self.index else f"  {text}")
        if not matches:
            lines.append(f"{_DIM}  (no match){_RESET}")
        lines.append(f"{_DIM}↑↓ move · type to filter · enter select · esc cancel{_RESET}")
        return lines

    def handle_input(self, data: str) -> None:
        key = select_key(parse_key(data))
        matches = self.matches()
        if key in ("escape", "ctrl+c"):
            self.done(None)
        elif key == "enter":
            if self.index in matches:
                self.done(self.options[self.index])
        elif key in ("up", "down", "pageup", "pagedown"):
            self._move(matches, key)
        elif key == "backspace":
            self.filter = self.filter[:-1]
            self._keep(matches)
        elif len(key) == 1 or (len(data) >= 1 and data.isprintable() and not data.startswith("\x1b")):
            self.filter += sanitize_text(data).replace("\n", "")
            self._keep(self.matches())
        self.request_render()

    def _move(self, matches: list[int], key: str) -> None:
        if not matches:
            return
        position = matches.index(self.index) if self.index in matches else 0
        step = {"up": -1, "down": 1, "pageup": -self.visible, "pagedown": self.visible}[key]
        if key in ("up", "down"):
            position = (position + step) % len(matches)
        else:
            position = max(0, min(len(matches) - 1, position + step))
        self.index = matches[position]

    def _keep(self, matches: list[int]) -> None:
        if matches and self.index not in matches:
            self.index = matches[0]

    def handle_paste(self, text: str) -> None:
        self.filter += sanitize_text(text).replace("\n", " ")
        self._keep(self.matches())
        self.request_render()


class ConfirmDialog(Component):
    """Yes or no: ``y``/``n``, arrows and Enter; Esc answers ``False``."""

    def __init__(self, title: str, message: str) -> None:
        self.title = sanitize_text(title)
        self.message = sanitize_text(message)
        self.yes = True

    def render(self, width: int) -> list[str]:
        yes = f"{_INVERSE} Yes {_RESET}" if self.yes else " Yes "
        no = f"{_INVERSE} No {_RESET}" if not self.yes else " No "
        lines = [f"{_BOLD}{_clip(self.title, width)}{_RESET}"]
        lines += [_clip(line, width) for line in self.message.split("\n") if self.message]
        return [*lines, f"{yes}  {no}", f"{_DIM}y/n · ←→ · enter · esc{_RESET}"]

    def handle_input(self, data: str) -> None:
        key = parse_key(data)
        if key in ("y", "Y"):
            self.done(True)
        elif key in ("n", "N", "escape", "ctrl+c"):
            self.done(False)
        elif key == "enter":
            self.done(self.yes)
        elif key in ("left", "right", "tab"):
            self.yes = not self.yes
            self.request_render()


class InputDialog(Component):
    """One line of text: Enter gives it, Esc gives ``None``; pasted newlines become spaces."""

    multiline = False

    def __init__(self, title: str, placeholder: str | None = None, prefill: str = "") -> None:
        self.title = sanitize_text(title)
        self.placeholder = sanitize_text(placeholder or "")
        self.text = prefill

    def _insert(self, text: str) -> None:
        text = sanitize_text(text)
        self.text += text if self.multiline else text.replace("\n", " ")

    def render(self, width: int) -> list[str]:
        lines = [f"{_BOLD}{_clip(self.title, width)}{_RESET}"]
        if not self.text and self.placeholder:
            lines.append(f"{_DIM}{_clip(self.placeholder, width)}{_RESET}")
        else:
            body = self.text.split("\n")
            body[-1] += "█"
            lines += [_clip(line, width) for line in body]
        hint = (
            "enter submit · alt+enter newline · esc cancel" if self.multiline else "enter submit · esc cancel"
        )
        return [*lines, f"{_DIM}{hint}{_RESET}"]

    def handle_input(self, data: str) -> None:
        key = parse_key(data)
        if key in ("escape", "ctrl+c"):
            self.done(None)
            return
        if key == "enter":
            self.done(self.text)
            return
        if key == "backspace":
            self.text = self.text[:-1]
        elif key == "ctrl+u":
            self.text = ""
        elif self.multiline and key in ("alt+enter", "shift+enter", "ctrl+j"):
            self.text += "\n"
        elif not data.startswith("\x1b") and data.isprintable():
            self._insert(data)
        self.request_render()

    def handle_paste(self, text: str) -> None:
        self._insert(text)
        self.request_render()


class EditorDialog(InputDialog):
    """Several lines of text (``ctx.ui.editor``): Alt+Enter adds a line, Enter submits."""

    multiline = True

    def __init__(self, title: str, prefill: str | None = None) -> None:
        super().__init__(title, None, sanitize_text(prefill or ""))
