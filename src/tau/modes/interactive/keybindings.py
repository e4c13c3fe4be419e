"""pi 1.6's ``keybindings.json``: the user's keys for the interactive mode's named actions.

The file lives in the agent dir (``~/.tau/agent/keybindings.json``, pi's ``~/.pi/agent/``). Each
entry maps an action id (``app.tools.expand``) to a key (``"ctrl+e"``) or a list of keys; a
configured value replaces the action's default keys, ``[]`` unbinds it. The mode installs the
result once at start (:func:`install`); its key bindings, the overlays (the session picker, the tree
and the selectors) and the hint texts read it through :func:`active`.

pi drops a bad entry silently; tau drops it too (the defaults stay) but says which entry, in which
file, and why, in :attr:`Keybindings.warnings` (the startup report shows them).
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass

__all__ = [
    "ACTIONS",
    "PI_ONLY_ACTIONS",
    "Keybindings",
    "active",
    "canonical_key",
    "install",
    "load_keybindings",
    "prompt_toolkit_keys",
    "select_key",
]

# The actions tau has, with tau's default keys (pi's, minus the keys a terminal without the Kitty
# protocol cannot tell apart: pi's shift+ctrl+p arrives as ctrl+p, so tau's previous-model key is
# alt+p, pi's key for it on Windows; shift+enter arrives as enter, so a new line is ctrl+j).
ACTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "tui.input.submit": (("enter",), "Send the prompt (steer while the agent runs)"),
    "tui.input.newLine": (("ctrl+j",), "Insert a new line"),
    "tui.select.up": (("up",), "Move the selection up in a list"),
    "tui.select.down": (("down",), "Move the selection down in a list"),
    "tui.select.pageUp": (("pageUp",), "Page up in a list"),
    "tui.select.pageDown": (("pageDown",), "Page down in a list"),
    "tui.select.confirm": (("enter",), "Confirm the selection"),
    "tui.select.cancel": (("escape", "ctrl+c"), "Cancel the selection"),
    "app.interrupt": (("escape",), "Abort the run (queued messages return to the editor)"),
    "app.clear": (("ctrl+c",), "Clear the editor (twice on an empty editor: quit)"),
    "app.exit": (("ctrl+d",), "Quit when the editor is empty"),
    "app.model.select": (("ctrl+l",), "Open the model selector (/model)"),
    "app.model.cycleForward": (("ctrl+p",), "Next model"),
    "app.model.cycleBackward": (("alt+p",), "Previous model"),
    "app.tools.expand": (("ctrl+o",), "Expand or collapse tool output"),
    "app.message.followUp": (("alt+enter",), "Queue a follow-up message"),
    "app.session.new": ((), "Start a new session (/new)"),
    "app.session.tree": ((), "Open the session tree (/tree)"),
    "app.session.fork": ((), "Fork the session (/fork)"),
    "app.session.resume": ((), "Open the session picker (/resume)"),
    "app.session.togglePath": (("ctrl+p",), "Session picker: show paths"),
    "app.session.toggleSort": (("ctrl+s",), "Session picker: next sort"),
    "app.session.toggleNamedFilter": (("ctrl+n",), "Session picker: named sessions only"),
    "app.session.rename": (("ctrl+r",), "Session picker: rename the session"),
    "app.session.delete": (("ctrl+d",), "Session picker: delete the session"),
    "app.session.deleteNoninvasive": (("ctrl+backspace",), "Session picker: delete when the search is empty"),
}

# pi 1.6's other action ids: valid in the file, but tau has nothing to bind them to.
PI_ONLY_ACTIONS = frozenset(
    {
        *(
            f"tui.editor.{name}"
            for name in [
                "cursorUp",
                "cursorDown",
                "historyPrevious",
                "historyNext",
                "cursorLeft",
                "cursorRight",
                "cursorWordLeft",
                "cursorWordRight",
                "cursorLineStart",
                "cursorLineEnd",
                "jumpForward",
                "jumpBackward",
                "pageUp",
                "pageDown",
                "deleteCharBackward",
                "deleteCharForward",
                "deleteWordBackward",
                "deleteWordForward",
                "deleteToLineStart",
                "deleteToLineEnd",
                "yank",
                "yankPop",
                "undo",
            ]
        ),
        "tui.input.tab",
        "tui.input.copy",
        *(
            f"tui.altScreen.{name}"
            for name in [
                "pageUp",
                "pageDown",
                "halfPageUp",
                "halfPageDown",
                "lineUp",
                "lineDown",
                "previousPrompt",
                "nextPrompt",
                "search",
                "searchNext",
                "searchPrevious",
                "searchClose",
                "top",
                "bottom",
            ]
        ),
        "app.suspend",
        "app.editor.external",
        "app.clipboard.pasteImage",
        "app.thinking.cycle",
        "app.thinking.save",
        "app.thinking.toggle",
        "app.models.save",
        "app.message.copy",
        "app.message.dequeue",
        *(
            f"app.models.{name}"
            for name in ["enableAll", "clearAll", "toggleProvider", "reorderUp", "reorderDown"]
        ),
        *(f"app.tree.{name}" for name in ["foldOrUp", "unfoldOrDown", "editLabel", "toggleLabelTimestamp"]),
        *(
            f"app.tree.filter.{name}"
            for name in [
                "default",
                "noTools",
                "userOnly",
                "labeledOnly",
                "all",
                "cycleForward",
                "cycleBackward",
            ]
        ),
    }
)

# pi's names from before the dotted ids; pi still reads them (an entry under the new id wins).
_LEGACY_IDS = {
    "newLine": "tui.input.newLine",
    "submit": "tui.input.submit",
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "followUp": "app.message.followUp",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
}

_MODIFIERS = ("ctrl", "shift", "alt", "super")
_SPECIAL = {
    "escape", "esc", "enter", "return", "tab", "space", "backspace", "delete", "insert", "clear",
    "home", "end", "pageUp", "pageDown", "up", "down", "left", "right",
    *(f"f{n}" for n in range(1, 13)),
}  # fmt: skip
_SYMBOLS = set("`-=[]\\;',./!@#$%^&*()_+|~{}:<>?")
_ALIASES = {"esc": "escape", "return": "enter"}
_KEY_SYNTAX = "a key is [ctrl+][shift+][alt+][super+]KEY, KEY a letter a-z, a digit, a symbol, f1-f12 or a name such as escape, enter, pageUp"


def _split(key: str) -> tuple[list[str], str] | None:
    """The modifiers and the base key of pi's key syntax (``ctrl+shift+x``), or ``None``."""
    modifiers: list[str] = []
    rest = key
    while True:
        head, plus, tail = rest.partition("+")
        if plus and tail and head in _MODIFIERS:
            if head in modifiers:
                return None  # pi: a modifier twice is not a key
            modifiers.append(head)
            rest = tail
            continue
        break
    if rest in _SPECIAL or rest in _SYMBOLS or re.fullmatch(r"[a-z0-9]", rest):
        return modifiers, rest
    return None


def canonical_key(key: str) -> str | None:
    """One spelling per key, for comparing: modifiers in a fixed order, names lower-case, pi's aliases
    resolved (``shift+ctrl+P``… is not valid pi; ``shift+ctrl+p`` gives ``ctrl+shift+p``).

    Also takes :func:`tau.modes.interactive.keys.parse_key`'s names (``pageup``, ``alt+enter``).
    """
    parts = key.split("+")
    base = "+" if key.endswith("++") or key == "+" else parts[-1]
    modifiers = parts[:-2] if base == "+" and key != "+" else parts[:-1]
    if any(m not in _MODIFIERS for m in modifiers):
        return None
    base = _ALIASES.get(base, base)
    if len(base) > 1:
        base = base.lower()
    ordered = [m for m in _MODIFIERS if m in modifiers]
    return "+".join([*ordered, base])


@dataclass
class Keybindings:
    """The keys of each action: the defaults, replaced by the user's file where it says so."""

    user: dict[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    path: str | None = None

    def keys(self, action: str) -> tuple[str, ...]:
        """The action's keys as written (pi's spelling), first the one hints show."""
        if action in self.user:
            return self.user[action]
        return ACTIONS[action][0]

    def matches(self, key: str, action: str) -> bool:
        """Whether ``key`` (a :func:`~tau.modes.interactive.keys.parse_key` name) triggers ``action``."""
        wanted = canonical_key(key)
        return wanted is not None and any(canonical_key(k) == wanted for k in self.keys(action))

    def text(self, action: str, *, capitalize: bool = False) -> str:
        """The keys as hints show them (``ctrl+o``, ``Ctrl+O`` capitalized, ``a/b`` for two); ``""``
        for an unbound action."""
        keys = self.keys(action)
        if not capitalize:
            return "/".join(keys)
        return "/".join("+".join(p[:1].upper() + p[1:] for p in k.split("+")) for k in keys)


def _spelled_as_pi(key: str) -> str | None:
    """``key`` in pi's spelling when only its case is wrong (``Ctrl+X``, ``pageup``), else ``None``."""
    names = {name.lower(): name for name in _SPECIAL}
    *modifiers, base = key.split("+") if not key.endswith("++") else [*key[:-2].split("+"), "+"]
    candidate = "+".join([*(m.lower() for m in modifiers), names.get(base.lower(), base.lower())])
    return candidate if candidate != key and _split(candidate) is not None else None


def _validate(action: str, value: Any, where: str) -> tuple[tuple[str, ...] | None, str | None]:
    values = value if isinstance(value, list) else [value]
    keys: list[str] = []
    for key in values:
        if not isinstance(key, str):
            return (
                None,
                f"Keybindings {where}: {action}: {json.dumps(key)} is not a key ({_KEY_SYNTAX}); using the default",
            )
        if _split(key) is None:
            spelled = _spelled_as_pi(key)
            hint = f"write {json.dumps(spelled)}" if spelled else _KEY_SYNTAX
            return (
                None,
                f"Keybindings {where}: {action}: {json.dumps(key)} is not a key ({hint}); using the default",
            )
        if key not in keys:
            keys.append(key)
    return tuple(keys), None


def load_keybindings(agent_dir: str | Path) -> Keybindings:
    """The user's ``keybindings.json`` in ``agent_dir`` (no file: the defaults).

    A file that is not a JSON object is named in a warning and ignored; an unknown action id, an
    action tau does not have and a value that is not a key (or a list of keys) are named one warning
    each and skipped; the other entries apply.
    """
    path = Path(agent_dir) / "keybindings.json"
    result = Keybindings(path=str(path))
    if not path.exists():
        return result
    if not path.is_file():  # a folder, or a named pipe that would block the start
        result.warnings.append(f"Keybindings {path}: not a regular file; using the default keys")
        return result
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return result
    except (OSError, UnicodeDecodeError) as exc:
        result.warnings.append(
            f"Keybindings {path}: cannot read the keybindings ({exc}); using the default keys"
        )
        return result
    try:
        raw = json.loads(text)
    except RecursionError:
        result.warnings.append(f"Keybindings {path}: JSON nested too deeply; using the default keys")
        return result
    except json.JSONDecodeError as exc:
        result.warnings.append(f"Keybindings {path}: not valid JSON ({exc}); using the default keys")
        return result
    if not isinstance(raw, dict):
        result.warnings.append(
            f"Keybindings {path}: must be a JSON object of action ids to keys; using the default keys"
        )
        return result
    unsupported: list[str] = []
    for name, value in raw.items():
        if name == "$schema":
            continue
        action = _LEGACY_IDS.get(name, name)
        if action != name and action in raw:
            continue  # pi: the new id's entry wins over the old name's
        if action not in ACTIONS:
            if action in PI_ONLY_ACTIONS:
                unsupported.append(name)
            else:
                result.warnings.append(f"Keybindings {path}: unknown action {json.dumps(name)}; ignored")
            continue
        keys, problem = _validate(name, value, str(path))
        if problem is not None:
            result.warnings.append(problem)
        elif keys is not None:
            result.user[action] = keys
    if unsupported:
        result.warnings.append(
            f"Keybindings {path}: not supported by tau (ignored): {', '.join(unsupported)}"
        )
    return result


def prompt_toolkit_keys(key: str) -> tuple[str, ...] | None:
    """pi's key as the key sequence prompt_toolkit sees from the terminal, or ``None`` when a terminal
    without the Kitty keyboard protocol cannot send it apart from another key (``shift+enter``,
    ``ctrl+shift+p``, ``super+…``, ``ctrl+1``)."""
    split = _split(key)
    if split is None:
        return None
    modifiers, base = split
    base = _ALIASES.get(base, base)
    alt = "alt" in modifiers
    rest = sorted(m for m in modifiers if m != "alt")
    names = {"pageUp": "pageup", "pageDown": "pagedown", "space": " ", "backspace": "c-h"}
    single: str | None
    if not rest:
        if base == "backspace":
            single = "c-h"  # prompt_toolkit's name for what the key sends (DEL is mapped to it)
        elif base == "clear":
            single = None
        else:
            single = names.get(base, base)
    elif rest == ["ctrl"]:
        if re.fullmatch(r"[a-z]", base):
            single = f"c-{base}"
        elif base in ("left", "right", "up", "down", "home", "end", "delete", "pageUp", "pageDown"):
            single = f"c-{names.get(base, base)}"
        elif base in ("]", "\\", "^", "_", "@"):
            single = f"c-{base}"
        elif base == "space":
            single = "c-@"
        else:
            single = None
    elif rest == ["shift"]:
        if base in ("tab",):
            single = "s-tab"
        elif base in ("left", "right", "up", "down", "home", "end", "delete"):
            single = f"s-{base}"
        elif re.fullmatch(r"[a-z]", base):
            single = base.upper()
        else:
            single = None
    elif rest == ["ctrl", "shift"] and base in ("left", "right", "up", "down", "home", "end"):
        single = f"c-s-{base}"
    else:
        single = None
    if single is None:
        return None
    return ("escape", single) if alt else (single,)


_ACTIVE: Keybindings = Keybindings()


def install(bindings: Keybindings) -> None:
    """Make ``bindings`` the keys the mode and its overlays read (the mode does this at start)."""
    global _ACTIVE
    _ACTIVE = bindings


def active() -> Keybindings:
    """The keys in use (the defaults until the mode installs the user's)."""
    return _ACTIVE


_SELECT_NAMES = (
    ("tui.select.cancel", "escape"),
    ("tui.select.confirm", "enter"),
    ("tui.select.up", "up"),
    ("tui.select.down", "down"),
    ("tui.select.pageUp", "pageup"),
    ("tui.select.pageDown", "pagedown"),
)
_SELECT_DEFAULTS = {canonical_key(k) for action, _ in _SELECT_NAMES for k in ACTIONS[action][0]}


def select_key(key: str) -> str:
    """A list's key (:func:`~tau.modes.interactive.keys.parse_key` name) as the name of the list
    action it triggers (``escape`` cancel, ``enter`` confirm, ``up``, ``down``, ``pageup``,
    ``pagedown``), ``""`` for a default key the user took off every list action, else ``key``."""
    bindings = active()
    for action, name in _SELECT_NAMES:
        if bindings.matches(key, action):
            return name
    return "" if canonical_key(key) in _SELECT_DEFAULTS else key
