"""The session picker of ``/resume`` and ``tau -r``, with pi 1.6's scopes.

It opens on this directory's sessions ("Current Folder"); Tab switches to every directory's ("All")
and back, as in pi. Typing searches with pi's syntax: every word must appear in the session's
name, id, messages or directory (or its letters, in order, in the name or directory), ``"two words"``
is a phrase, ``re:<pattern>`` a regular expression; sessions whose name matches come first. Ctrl+N shows only named sessions, Ctrl+P shows each session's file path, ↑↓ move, Enter
opens, Esc cancels. A session of another directory resumes in its own directory
(:mod:`tau.modes.session_open`).

The component follows the overlay contract of :mod:`tau.modes.interactive.dialogs`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from tau.modes.interactive.dialogs import Component
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["SessionPicker"]

_BOLD, _DIM, _INVERSE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[7m", "\x1b[0m"
CURRENT, ALL = "current", "all"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _age(modified: Any, now: float) -> str:
    try:
        seconds = max(0.0, now - modified.timestamp())
    except (AttributeError, OverflowError, OSError, ValueError):
        return ""
    for size, unit in ((86400 * 7, "w"), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


class SessionPicker(Component):
    """Pick a session; ``done`` gets its path, or ``None``.

    Args:
        list_current: This directory's sessions (:class:`~tau.session.listing.SessionInfo`, newest first).
        list_all: Every directory's sessions; called the first time Tab shows them.
        exclude: A session file left out (the one already open).
        visible: How many sessions are shown at once.
    """

    def __init__(
        self,
        list_current: Callable[[], Sequence[Any]],
        list_all: Callable[[], Sequence[Any]],
        *,
        exclude: str | None = None,
        visible: int = 10,
    ) -> None:
        self._loaders = {CURRENT: list_current, ALL: list_all}
        self._loaded: dict[str, list[Any]] = {}
        self.exclude = exclude
        self.scope = CURRENT
        self.query = ""
        self.named_only = False
        self.show_path = False
        self.index = 0
        self.visible = visible

    def sessions(self, scope: str | None = None) -> list[Any]:
        """The sessions of ``scope`` (default: the current one), loaded once."""
        scope = scope or self.scope
        if scope not in self._loaded:
            self._loaded[scope] = [s for s in self._loaders[scope]() if str(s.path) != self.exclude]
        return self._loaded[scope]

    def matches(self) -> list[Any]:
        """The sessions the search keeps, best match first (pi's tiers: name, then text, then letters)."""
        search = parse_search(self.query)
        ranked = []
        for order, info in enumerate(self.sessions()):
            if self.named_only and not (info.name or "").strip():
                continue
            tier = search.tier(info)
            if tier is not None:
                ranked.append((tier, order, info))
        ranked.sort(key=lambda item: item[:2])
        return [info for _, _, info in ranked]

    def render(self, width: int) -> list[str]:
        title = "Resume Session (Current Folder)" if self.scope == CURRENT else "Resume Session (All)"
        scopes = "◉ Current Folder | ○ All" if self.scope == CURRENT else "○ Current Folder | ◉ All"
        name = "Named" if self.named_only else "All"
        header = _clip(f"{title}  {scopes}  Name: {name}", width)
        if header.startswith(title):
            header = f"{_BOLD}{title}{_RESET}{header[len(title) :]}"
        lines = [header]
        lines.append(_clip(f"search: {self.query}█", width))
        shown = self.matches()
        self.index = min(self.index, max(0, len(shown) - 1))
        error = parse_search(self.query).error
        if error:
            lines.append(f"{_DIM}{_clip(f'Invalid regex: {error}', width)}{_RESET}")
        elif not shown:
            lines.append(f"{_DIM}{_clip(self._empty_message(), width)}{_RESET}")
        start = max(0, min(self.index - self.visible // 2, len(shown) - self.visible))
        now = time.time()
        for position in range(start, min(start + self.visible, len(shown))):
            text = _clip(self._label(shown[position], now), width - 2)
            lines.append(f"{_INVERSE}› {text}{_RESET}" if position == self.index else f"  {text}")
        lines.append(
            f"{_DIM}"
            + _clip(
                'tab scope · re:<pattern> regex · "phrase" exact · ctrl+n named · ctrl+p path · enter · esc',
                width,
            )
            + _RESET
        )
        return lines

    def _empty_message(self) -> str:
        if self.named_only:
            if self.scope == CURRENT:
                return "No named sessions in current folder. Press Ctrl+N to show all, or Tab to view all."
            return "No named sessions found. Press Ctrl+N to show all."
        if self.scope == CURRENT:
            return "No sessions in current folder. Press Tab to view all."
        return "No sessions found"

    def _label(self, info: Any, now: float) -> str:
        first = (info.first_message or "").strip().splitlines()
        text = sanitize_text(info.name or (first[0] if first else info.id)).replace("\n", " ")
        details = f"{info.message_count} msgs · {_age(info.modified, now)}"
        where = ""
        if self.show_path:
            where = f"  {info.path}"
        elif self.scope == ALL and info.cwd:
            where = f"  [{info.cwd}]"
        return f"{text}  ({details}){where}"

    def handle_input(self, data: str) -> None:
        key = parse_key(data)
        shown = self.matches()
        if key in ("escape", "ctrl+c"):
            self.done(None)
            return
        if key == "enter":
            if shown:
                self.done(str(shown[min(self.index, len(shown) - 1)].path))
            return
        if key == "tab":
            self.scope = ALL if self.scope == CURRENT else CURRENT
            self.index = 0
        elif key == "ctrl+n":
            self.named_only = not self.named_only
            self.index = 0
        elif key == "ctrl+p":
            self.show_path = not self.show_path
        elif key in ("up", "down") and shown:
            self.index = (self.index + (1 if key == "down" else -1)) % len(shown)
        elif key in ("pageup", "pagedown") and shown:
            step = self.visible if key == "pagedown" else -self.visible
            self.index = max(0, min(len(shown) - 1, self.index + step))
        elif key == "backspace":
            self.query = self.query[:-1]
            self.index = 0
        elif key == "ctrl+u":
            self.query = ""
            self.index = 0
        elif not data.startswith("\x1b") and data.isprintable():
            self.query += sanitize_text(data).replace("\n", " ")
            self.index = 0
        self.request_render()

    def handle_paste(self, text: str) -> None:
        self.query += sanitize_text(text).replace("\n", " ")
        self.index = 0
        self.request_render()


_NAME, _TEXT, _LETTERS = 0, 1, 2


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def _in_order(letters: str, text: str) -> bool:
    found = iter(text.lower())
    return all(letter in found for letter in letters.lower())


class Search:
    """A parsed picker query: ``re:<pattern>``, or words and ``"phrases"`` that must all match."""

    def __init__(self, regex: re.Pattern[str] | None, tokens: list[tuple[str, str]], error: str = "") -> None:
        self.regex, self.tokens, self.error = regex, tokens, error

    def tier(self, info: Any) -> int | None:
        """How well ``info`` matches (lower is better), or ``None`` when it does not."""
        if self.error:
            return None
        name = str(info.name or "")
        text = str(info.all_messages_text or info.first_message or "")
        fields = (str(info.id), text, str(info.cwd))
        if self.regex is not None:
            if name and self.regex.search(name):
                return _NAME
            return _TEXT if any(self.regex.search(field) for field in fields) else None
        worst = _NAME
        for kind, value in self.tokens:
            squash = _squash if kind == "phrase" else str.lower
            wanted = squash(value)
            if wanted in squash(name):
                tier = _NAME
            elif any(wanted in squash(field) for field in fields):
                tier = _TEXT
            elif kind == "word" and (_in_order(wanted, name) or _in_order(wanted, str(info.cwd))):
                tier = _LETTERS
            else:
                return None
            worst = max(worst, tier)
        return worst


def parse_search(query: str) -> Search:
    """pi's session search syntax (``re:``, quotes; an unclosed quote: plain words)."""
    text = query.strip()
    if text.startswith("re:"):
        pattern = text[3:].strip()
        if not pattern:
            return Search(None, [], "Empty regex")
        try:
            return Search(re.compile(pattern, re.IGNORECASE), [])
        except re.error as exc:
            return Search(None, [], str(exc))
    if text.count('"') % 2:
        return Search(None, [("word", word) for word in text.split()])
    tokens: list[tuple[str, str]] = []
    for index, part in enumerate(text.split('"')):
        if index % 2:
            if part.strip():
                tokens.append(("phrase", part.strip()))
        else:
            tokens += [("word", word) for word in part.split()]
    return Search(None, tokens)
