"""The session picker of ``/resume`` and ``tau -r``, with pi 1.6's scopes, sorts and keys.

It opens on this directory's sessions ("Current Folder"); Tab switches to every directory's ("All")
and back, as in pi. Typing searches with pi's syntax: every word must appear in the session's
name, id, messages or directory (or its letters, in order, in the name or directory), ``"two words"``
is a phrase, ``re:<pattern>`` a regular expression. Ctrl+S cycles pi's sorts: Threaded (forks under
the session they came from, each thread by its latest activity; a search ranks by relevance), Recent
(newest first, a search only filters) and Fuzzy (relevance: sessions whose name matches first).
Ctrl+N shows only named sessions, Ctrl+P each session's file path. Ctrl+D (or Ctrl+Backspace on an
empty search) asks ``Delete session?``; Enter deletes (to the trash when a ``trash`` command exists,
as pi), Esc keeps it. Ctrl+R renames (``/resume`` only, as pi: not at ``tau -r``): pi's
``session_info`` entry appended to that session's file. ↑↓ move, Enter opens, Esc cancels. A
session of another directory resumes in its own directory (:mod:`tau.modes.session_open`). The
session open now is listed too, marked, and cannot be deleted (as pi).

The component follows the overlay contract of :mod:`tau.modes.interactive.dialogs`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from tau.modes.interactive.dialogs import Component
from tau.modes.interactive.keybindings import active, select_key
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["SessionPicker"]

_BOLD, _DIM, _INVERSE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[7m", "\x1b[0m"
_RED, _YELLOW, _CYAN = "\x1b[31m", "\x1b[33m", "\x1b[36m"
CURRENT, ALL = "current", "all"
THREADED, RECENT, RELEVANCE = "threaded", "recent", "relevance"
_SORTS = (THREADED, RECENT, RELEVANCE)
_SORT_LABELS = {THREADED: "Threaded", RECENT: "Recent", RELEVANCE: "Fuzzy"}
_SEARCH_HINT = 'tab scope · re:<pattern> regex · "phrase" exact'
_CTRL_BACKSPACE = ("\x1b[127;5u", "\x1b[27;5;127~")  # kitty, xterm's modifyOtherKeys
# The picker's own actions (keybindings.json); they come before the list's keys, as in pi.
_PICKER_ACTIONS = (
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.delete",
    "app.session.rename",
)


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


def _stamp(info: Any) -> float:
    try:
        return float(info.modified.timestamp())
    except (AttributeError, OverflowError, OSError, ValueError):
        return 0.0


def _path_key(path: Any) -> str:
    return os.path.normcase(os.path.realpath(str(path)))


def threaded(sessions: Sequence[Any]) -> list[tuple[Any, str]]:
    """pi's thread view: each session under the one it was forked from (``parent_session_path``),
    siblings and threads by the latest activity in them, newest first; with the tree's prefix."""
    keys = [_path_key(info.path) for info in sessions]
    by_key = dict(zip(keys, sessions, strict=True))
    children: dict[str, list[str]] = {key: [] for key in keys}
    roots: list[str] = []
    for key, info in zip(keys, sessions, strict=True):
        parent = _path_key(info.parent_session_path) if info.parent_session_path else None
        if parent is not None and parent in by_key and parent != key:
            children[parent].append(key)
        else:
            roots.append(key)
    latest: dict[str, float] = {}

    def activity(key: str, seen: frozenset[str]) -> float:
        if key not in latest:
            latest[key] = max(
                [_stamp(by_key[key])]
                + [activity(child, seen | {key}) for child in children[key] if child not in seen]
            )
        return latest[key]

    rows: list[tuple[Any, str]] = []
    placed: set[str] = set()

    def walk(key: str, depth: int, ancestors: list[bool], last: bool) -> None:
        placed.add(key)
        prefix = (
            ""
            if depth == 0
            else "".join("│  " if more else "   " for more in ancestors) + ("└─ " if last else "├─ ")
        )
        rows.append((by_key[key], prefix))
        kids = sorted((k for k in children[key] if k not in placed), key=lambda k: -activity(k, frozenset()))
        for index, child in enumerate(kids):
            walk(child, depth + 1, [*ancestors, depth > 0 and not last], index == len(kids) - 1)

    ordered = sorted(roots, key=lambda k: -activity(k, frozenset()))
    for index, key in enumerate(ordered):
        walk(key, 0, [], index == len(ordered) - 1)
    for key in keys:  # a loop of parents has no root: its sessions become threads of their own, never lost
        if key not in placed:
            walk(key, 0, [], True)
    return rows


class SessionPicker(Component):
    """Pick a session; ``done`` gets its path, or ``None``.

    Args:
        list_current: This directory's sessions (:class:`~tau.session.listing.SessionInfo`, newest first).
        list_all: Every directory's sessions; called the first time Tab shows them.
        current: The session file open now: listed and marked, as pi; never offered for deletion.
        visible: How many sessions are shown at once.
        delete: Deletes a session file (Ctrl+D, confirmed) and says how: ``"trash"`` or ``"unlink"``;
            raises with the reason it did not. ``None``: no delete key.
        rename: Names a session file (Ctrl+R); raises with the reason it did not. ``None``: no rename key.
    """

    def __init__(
        self,
        list_current: Callable[[], Sequence[Any]],
        list_all: Callable[[], Sequence[Any]],
        *,
        current: str | None = None,
        visible: int = 10,
        delete: Callable[[str], str] | None = None,
        rename: Callable[[str, str], object] | None = None,
    ) -> None:
        self._loaders = {CURRENT: list_current, ALL: list_all}
        self._loaded: dict[str, list[Any]] = {}
        self.current = _path_key(current) if current else None
        self.scope = CURRENT
        self.sort = THREADED
        self.query = ""
        self.named_only = False
        self.show_path = False
        self.index = 0
        self.visible = visible
        self._delete = delete
        self._rename = rename
        self.confirming: str | None = None  # the file Enter would delete
        self.renaming: str | None = None  # the file the name is for
        self.new_name = ""
        self.status: tuple[str, str] | None = None  # ("info" | "error", text) until the next key

    def sessions(self, scope: str | None = None) -> list[Any]:
        """The sessions of ``scope`` (default: the current one), loaded once."""
        scope = scope or self.scope
        if scope not in self._loaded:
            self._loaded[scope] = list(self._loaders[scope]())
        return self._loaded[scope]

    def rows(self) -> list[tuple[Any, str]]:
        """The sessions shown, in order, each with its tree prefix (pi's sorts and search)."""
        pool = [info for info in self.sessions() if not self.named_only or (info.name or "").strip()]
        if not self.query.strip():
            return threaded(pool) if self.sort == THREADED else [(info, "") for info in pool]
        search = parse_search(self.query)
        ranked = []
        for order, info in enumerate(pool):
            tier = search.tier(info)
            if tier is not None:
                ranked.append((tier if self.sort != RECENT else 0, order, info))
        ranked.sort(key=lambda item: item[:2])  # Recent only filters: newest first stays
        return [(info, "") for _, _, info in ranked]

    def matches(self) -> list[Any]:
        """The sessions shown, in order."""
        return [info for info, _ in self.rows()]

    def render(self, width: int) -> list[str]:
        if self.renaming is not None:
            return [
                f"{_BOLD}Rename Session{_RESET}",
                "",
                _clip(f"> {self.new_name}█", width),
                "",
                f"{_DIM}{_clip('enter to save · escape/ctrl+c to cancel', width)}{_RESET}",
            ]
        lines = [self._header(width), *self._hints(width)]
        lines.append(_clip(f"search: {self.query}█", width))
        shown = self.rows()
        self.index = min(self.index, max(0, len(shown) - 1))
        error = parse_search(self.query).error
        if error:
            lines.append(f"{_DIM}{_clip(f'Invalid regex: {error}', width)}{_RESET}")
        elif not shown:
            lines.append(f"{_DIM}{_clip(self._empty_message(), width)}{_RESET}")
        start = max(0, min(self.index - self.visible // 2, len(shown) - self.visible))
        now = time.time()
        for position in range(start, min(start + self.visible, len(shown))):
            info, prefix = shown[position]
            text = _clip(prefix + self._label(info, now), width - 2)
            if position == self.index:
                colour = _RED if str(info.path) == self.confirming else ""
                lines.append(f"{_INVERSE}{colour}› {text}{_RESET}")
            elif self._is_current(info):
                lines.append(f"  {_CYAN}{text}{_RESET}")
            elif info.name:
                lines.append(f"  {_YELLOW}{text}{_RESET}")
            else:
                lines.append(f"  {text}")
        if start > 0 or start + self.visible < len(shown):
            lines.append(f"{_DIM}{_clip(f'  ({self.index + 1}/{len(shown)})', width)}{_RESET}")
        return lines

    def _header(self, width: int) -> str:
        title = "Resume Session (Current Folder)" if self.scope == CURRENT else "Resume Session (All)"
        scopes = "◉ Current Folder | ○ All" if self.scope == CURRENT else "○ Current Folder | ◉ All"
        name = "Named" if self.named_only else "All"
        right = _clip(f"{scopes}  Name: {name}  Sort: {_SORT_LABELS[self.sort]}", width)
        left = title[: max(0, width - len(right) - 1)]
        return f"{_BOLD}{left}{_RESET}{' ' * max(1, width - len(left) - len(right))}{right}"

    def _hints(self, width: int) -> list[str]:
        if self.confirming is not None:
            return [
                f"{_RED}{_clip('Delete session? enter confirm · escape/ctrl+c cancel', width)}{_RESET}",
                "",
            ]
        if self.status is not None:
            kind, text = self.status
            return [f"{_RED if kind == 'error' else _BOLD}{_clip(text, width)}{_RESET}", ""]
        bound = active()

        def hint(action: str, what: str) -> list[str]:
            text = bound.text(action)
            return [f"{text} {what}"] if text else []

        keys = [*hint("app.session.toggleSort", "sort"), *hint("app.session.toggleNamedFilter", "named")]
        if self._delete is not None:
            keys += hint("app.session.delete", "delete")
        keys += hint("app.session.togglePath", f"path ({'on' if self.show_path else 'off'})")
        if self._rename is not None:
            keys += hint("app.session.rename", "rename")
        return [
            f"{_DIM}{_clip(_SEARCH_HINT, width)}{_RESET}",
            f"{_DIM}{_clip(' · '.join(keys), width)}{_RESET}",
        ]

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

    def _is_current(self, info: Any) -> bool:
        return self.current is not None and _path_key(info.path) == self.current

    def _selected(self) -> Any | None:
        shown = self.matches()
        return shown[min(self.index, len(shown) - 1)] if shown else None

    def _reload(self) -> None:
        self._loaded.clear()  # both scopes: a file changed or went, read the folders again

    def _confirm_delete(self, key: str) -> None:
        path, self.confirming = self.confirming, None
        if key != "enter" or path is None or self._delete is None:
            return
        try:
            how = self._delete(path)
        except (OSError, ValueError) as exc:
            self.status = ("error", f"Failed to delete: {exc}")
            return
        self.status = ("info", "Session moved to trash" if how == "trash" else "Session deleted")
        self._reload()

    def _rename_input(self, key: str, data: str) -> None:
        if key in ("escape", "ctrl+c"):
            self.renaming = None
        elif key == "enter":
            if not self.new_name.strip():
                return  # as pi: an empty name saves nothing and leaves the box open
            path, self.renaming = self.renaming, None
            try:
                if path is not None and self._rename is not None:
                    self._rename(path, self.new_name)
            except (OSError, ValueError) as exc:
                self.status = ("error", f"Failed to rename: {exc}")
            self._reload()
        elif key == "backspace":
            self.new_name = self.new_name[:-1]
        elif key == "ctrl+u":
            self.new_name = ""
        elif not data.startswith("\x1b") and data.isprintable():
            self.new_name += sanitize_text(data).replace("\n", " ")

    def handle_input(self, data: str) -> None:
        key = parse_key(data)
        if self.renaming is not None:
            self._rename_input(key, data)
            self.request_render()
            return
        if self.confirming is not None:
            if key in ("enter", "escape", "ctrl+c"):  # every other key is ignored while asking, as pi
                self._confirm_delete(key)
                self.request_render()
            return
        self.status = None
        shown = self.matches()
        keys = active()
        if data in _CTRL_BACKSPACE:
            key = "ctrl+backspace"
        delete_empty = keys.matches(key, "app.session.deleteNoninvasive")
        action = next((a for a in _PICKER_ACTIONS if keys.matches(key, a)), None)
        if action is None:
            key = select_key(key)
        if key == "escape":
            self.done(None)
            return
        if key == "enter":
            if shown:
                self.done(str(shown[min(self.index, len(shown) - 1)].path))
            return
        if key == "tab":
            self.scope = ALL if self.scope == CURRENT else CURRENT
            self.index = 0
        elif action == "app.session.toggleSort":
            self.sort = _SORTS[(_SORTS.index(self.sort) + 1) % len(_SORTS)]
        elif action == "app.session.toggleNamedFilter":
            self.named_only = not self.named_only
            self.index = 0
        elif action == "app.session.togglePath":
            self.show_path = not self.show_path
        elif action == "app.session.delete" or (delete_empty and not self.query):
            if self._delete is not None and (selected := self._selected()) is not None:
                if self._is_current(selected):
                    self.status = ("error", "Cannot delete the currently active session")
                else:
                    self.confirming = str(selected.path)
        elif action == "app.session.rename":
            if self._rename is not None and (selected := self._selected()) is not None:
                self.renaming, self.new_name = str(selected.path), selected.name or ""
        elif key == "ctrl+backspace":  # with a search: the word before the cursor goes, as in pi's input
            self.query = re.sub(r"\S*\s*$", "", self.query, count=1)
            self.index = 0
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
        target = "new_name" if self.renaming is not None else "query"
        if self.confirming is not None:
            return
        setattr(self, target, getattr(self, target) + sanitize_text(text).replace("\n", " "))
        if target == "query":
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
