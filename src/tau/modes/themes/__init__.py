"""Themes: the colours of the terminal, as pi 1.6's theme files give them.

``system`` (the default) is tau's own palette of the terminal's ANSI colours, so tau looks like the
terminal it runs in; ``dark`` and ``light`` are built in; a theme file (pi's format: ``name``,
``appearance``, ``vars``, ``colors``, ``export``; see :mod:`tau.modes.themes.tokens`) loads from, in
pi's order, the first of a name winning:

1. a trusted project's ``themes`` settings entries (paths from ``<cwd>/.tau``) and ``.tau/themes/``;
2. the user's ``themes`` settings entries (paths from the agent dir) and the agent dir's ``themes/``;
3. ``--theme`` paths (files or folders; kept with ``--no-themes``, which drops 1 and 2).

Extensions add theme paths in ``resources_discover`` (:meth:`ThemeSet.add_paths`: after the others,
kept with ``--no-themes``, as pi). The ``theme`` setting (or ``--use-theme`` for one run) names the
theme; ``"light/dark"`` picks by the terminal's background (``COLORFGBG``, else dark). A theme file that
cannot be used is reported at startup and left out; a name that names no theme falls back to
``system`` with a warning.

The active theme's file is watched (:meth:`ThemeSet.reload_changed`, polled by the interactive mode):
an edit is drawn in the new colours, a broken edit keeps the colours in use and says why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.themes.colors import ColorError, to_terminal
from tau.modes.themes.tokens import BACKGROUND, FALLBACKS, TOKENS

__all__ = [
    "SYSTEM",
    "Theme",
    "ThemeError",
    "ThemeReload",
    "ThemeSet",
    "builtin_theme",
    "load_theme_file",
    "load_themes",
    "resolve_theme_setting",
]

SYSTEM = "system"
_HERE = Path(__file__).resolve().parent
_TOP_LEVEL = {"$schema", "name", "appearance", "vars", "colors", "export"}
_EXPORT = {"pageBg", "cardBg", "infoBg"}

# The system theme: the terminal's ANSI colours, as ``rich`` styles (tau's look before themes).
_SYSTEM_COLORS = {
    "accent": "cyan",
    "success": "green",
    "error": "red",
    "warning": "yellow",
    "muted": "grey70",
    "dim": "dim",
    "thinkingText": "dim",
    "userMessageBg": "grey15",
    "customMessageLabel": "magenta",
    "toolOutput": "grey70",
}


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and what is wrong (pi's words).

    Attributes:
        missing: The required colour tokens it lacks.
        problems: Its other errors (``/colors: unknown color token "x"``).
    """

    def __init__(self, message: str, missing: Sequence[str] = (), problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.missing = list(missing)
        self.problems = list(problems)

    def summary(self) -> str:
        """One line for a startup warning (pi's message lists every missing token, one a line)."""
        if not (self.missing or self.problems):
            return str(self)
        parts = []
        if self.missing:
            shown = ", ".join(self.missing[:4]) + (", …" if len(self.missing) > 4 else "")
            parts.append(f"missing {len(self.missing)} required color token(s): {shown}")
        parts += [problem.split(": ", 1)[-1] for problem in self.problems[:3]]
        return "invalid theme: " + "; ".join(parts)


@dataclass
class Theme:
    """One theme: its colours by token (``rich`` colours; ``"default"`` is the terminal's own).

    Attributes:
        name: What the ``theme`` setting calls it.
        path: The file it came from (``None`` for ``system``).
        appearance: ``"dark"`` or ``"light"`` (the background it is made for), ``None`` for ``system``.
        colors: Token to colour; a token left out has no colour of its own.
        stamp: The file's identity, size and times when it was read (``None`` for the
            built-in themes): what tells an edit of the file.
    """

    name: str
    path: str | None = None
    appearance: str | None = None
    colors: dict[str, str] = field(default_factory=dict)
    stamp: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    def fg(self, token: str, text: str | None = None) -> str:
        """The token as a foreground ``rich`` style (``""``: the terminal's own); with ``text``, the
        text in that colour (SGR), as pi's ``theme.fg(token, text)`` gives it to extensions."""
        value = self.colors.get(token, "default")
        style = "" if value == "default" else value
        return style if text is None else _styled(style, text)

    def bg(self, token: str, text: str | None = None) -> str:
        """The token as a background ``rich`` style; with ``text``, the text on it (SGR)."""
        value = self.colors.get(token, "default")
        style = "" if value == "default" else f"on {value}"
        return style if text is None else _styled(style, text)

    def markdown_styles(self) -> dict[str, str]:
        """``rich``'s markdown styles from the ``md*`` tokens (none for ``system``: rich's own)."""
        if self.name == SYSTEM and self.path is None:
            return {}
        heading = f"bold {self.fg('mdHeading')}".strip()
        styles = {f"markdown.h{level}": heading for level in range(1, 7)}
        styles.update(
            {
                "markdown.code": self.fg("mdCode") or "bold",
                "markdown.code_block": self.fg("mdCodeBlock") or "none",
                "markdown.link": self.fg("mdLink") or "none",
                "markdown.link_url": f"underline {self.fg('mdLinkUrl')}".strip(),
                "markdown.block_quote": self.fg("mdQuote") or "none",
                "markdown.hr": self.fg("mdHr") or "none",
                "markdown.item.bullet": f"bold {self.fg('mdListBullet')}".strip(),
                "markdown.item.number": f"bold {self.fg('mdListBullet')}".strip(),
            }
        )
        return styles

    def info(self) -> dict[str, Any]:
        """What ``ctx.ui.get_all_themes()`` lists: ``{"name", "path"}``."""
        return {"name": self.name, "path": self.path}


def _styled(style: str, text: str) -> str:
    if not style:
        return text
    from rich.color import ColorSystem
    from rich.style import Style

    truecolor = os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")
    system = ColorSystem.TRUECOLOR if truecolor else ColorSystem.EIGHT_BIT
    return Style.parse(style).render(text, color_system=system)


def builtin_theme(name: str) -> Theme | None:
    """``system``, ``dark`` or ``light``."""
    if name == SYSTEM:
        return Theme(SYSTEM, None, None, dict(_SYSTEM_COLORS))
    path = _HERE / f"{name}.json"
    if name in ("dark", "light") and path.is_file():
        theme = load_theme_file(path)
        theme.stamp = None  # tau's own file: not watched
        return theme
    return None


def file_stamp(path: str | Path) -> tuple[int, ...] | None:
    """The file's inode, size, modification and change times (ns); ``None`` when it cannot be read.
    A save in place changes the times, an editor's save by rename the inode or the change time."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def load_theme_file(path: str | Path) -> Theme:
    """Read and check one theme file.

    Raises:
        ThemeError: it cannot be read, is not JSON, or is not a theme (pi 1.6's messages).
    """
    label = str(path)
    stamp = file_stamp(path)  # before reading: an edit during the read is seen by the next check
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ThemeError(f"Failed to read theme {label}: {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ThemeError(f"Failed to parse theme {label}: {exc}") from exc
    theme = theme_from_json(label, document, str(path))
    theme.stamp = stamp
    return theme


def theme_from_json(label: str, document: Any, path: str | None = None) -> Theme:
    """A theme from a parsed theme document (checked as pi checks theme files)."""
    if not isinstance(document, dict):
        raise ThemeError(f'Invalid theme "{label}": expected an object with a "colors" map.')
    name = document.get("name")
    if isinstance(name, str) and "/" in name:
        raise ThemeError(
            f'Invalid theme name "{name}": theme names cannot contain "/" because it is reserved for '
            "automatic light/dark theme settings."
        )
    colors = document.get("colors")
    problems: list[str] = []
    missing: list[str] = []
    if not isinstance(name, str):
        problems.append("/name: must be a string")
    for key in sorted(set(document) - _TOP_LEVEL):
        problems.append(f'/: unknown property "{key}"')
    appearance = document.get("appearance")
    if appearance is not None and appearance not in ("dark", "light"):
        problems.append('/appearance: must be "dark" or "light"')
    if not isinstance(colors, dict):
        problems.append("/colors: must be an object")
        colors = {}
    else:
        missing = sorted(token for token in TOKENS if token not in colors and token not in FALLBACKS)
        problems += [f'/colors: unknown color token "{key}"' for key in colors if key not in TOKENS]
    export = document.get("export")
    if export is not None:
        if not isinstance(export, dict):
            problems.append("/export: must be an object")
        else:
            problems += [f'/export: unknown property "{key}"' for key in export if key not in _EXPORT]
    variables = document.get("vars") or {}
    if not isinstance(variables, dict):
        problems.append("/vars: must be an object")
        variables = {}
    if missing or problems:
        message = f'Invalid theme "{label}":\n'
        if missing:
            message += "\nMissing required color tokens:\n" + "\n".join(f"  - {token}" for token in missing)
            message += '\n\nPlease add these colors to your theme\'s "colors" object.'
            message += "\nSee the built-in themes (dark.json, light.json) for reference values."
        if problems:
            message += "\n\nOther errors:\n" + "\n".join(f"  - {problem}" for problem in problems)
        raise ThemeError(message, missing, problems)
    resolved: dict[str, str] = {}
    try:
        for token in TOKENS:
            if token in colors:
                resolved[token] = to_terminal(_resolve(colors[token], variables))
        for token, fallback in FALLBACKS.items():
            resolved.setdefault(token, resolved[fallback])
    except (ColorError, ThemeError) as exc:
        raise ThemeError(f'Invalid theme "{label}": {exc}') from exc
    if appearance is None:
        appearance = _appearance(resolved)
    return Theme(str(name), path, appearance, resolved)


def _resolve(value: Any, variables: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """A colour value with its variable references followed (pi: a bare word names a variable)."""
    if not isinstance(value, str) or value == "" or value.startswith("#") or "(" in value:
        return value
    if value in seen:
        raise ThemeError(f"Circular variable reference detected: {value}")
    if value not in variables:
        raise ThemeError(f"Variable reference not found: {value}")
    return _resolve(variables[value], variables, seen | {value})


def _appearance(colors: Mapping[str, str]) -> str | None:
    """Dark or light from the backgrounds' lightness (hex ones), as pi guesses when a file does not say."""
    levels = []
    for token in BACKGROUND:
        value = colors.get(token, "")
        if value.startswith("#"):
            red, green, blue = (int(value[i : i + 2], 16) for i in (1, 3, 5))
            levels.append((0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255)
    if not levels:
        return None
    return "dark" if sum(levels) / len(levels) < 0.5 else "light"


def resolve_theme_setting(setting: Any, env: Mapping[str, str] | None = None) -> str:
    """The theme name a ``theme`` setting means here: ``"light/dark"`` picks by the terminal's
    background (``COLORFGBG``'s last field, as pi classifies it; dark when unknown)."""
    if not isinstance(setting, str) or not setting.strip():
        return SYSTEM
    if "/" not in setting:
        return setting.strip()
    parts = [part.strip() for part in setting.split("/")]
    if len(parts) != 2 or not all(parts):
        return SYSTEM
    return parts[0] if terminal_appearance(env) == "light" else parts[1]


def terminal_appearance(env: Mapping[str, str] | None = None) -> str:
    background = (env if env is not None else os.environ).get("COLORFGBG", "").split(";")[-1].strip()
    if background.isdigit() and int(background) <= 15:
        index = int(background)
        return "dark" if index <= 6 or index == 8 else "light"
    return "dark"


@dataclass
class ThemeReload:
    """What an edit of the active theme's file did: the new ``theme`` in use, or the ``warning`` why
    the file cannot be used (the colours in use stay)."""

    theme: Theme | None = None
    warning: str | None = None


@dataclass
class ThemeSet:
    """The themes a run offers, the one in use, and what loading them found wrong.

    Attributes:
        themes: Loaded theme files by name (the first of a name wins).
        active: The theme in use.
        warnings: One line per problem (a file that cannot be used, a name collision, an unknown name).
        unresolved: The warning for a ``theme`` setting that names no theme (also in ``warnings``);
            ``None`` once it names one. An extension's theme may still resolve it (:meth:`add_paths`).
    """

    themes: dict[str, Theme] = field(default_factory=dict)
    active: Theme = field(default_factory=lambda: Theme(SYSTEM, None, None, dict(_SYSTEM_COLORS)))
    warnings: list[str] = field(default_factory=list)
    unresolved: str | None = None
    _wanted: str | None = None
    _seen_files: set[str] = field(default_factory=set)
    _checked: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Every theme name, ``system`` first, then alphabetical (as pi's selector lists them)."""
        names = {"dark", "light", *self.themes}
        return [SYSTEM, *sorted(names - {SYSTEM})]

    def get(self, name: str) -> Theme | None:
        """A theme by name (a loaded file wins over a built-in of the same name; ``system`` is reserved)."""
        if name == SYSTEM:
            return builtin_theme(SYSTEM)
        return self.themes.get(name) or builtin_theme(name)

    def all_themes(self) -> list[dict[str, Any]]:
        listed = []
        for name in self.names():
            theme = self.get(name)
            listed.append({"name": name, "path": theme.path if theme else None})
        return listed

    def use(self, name: str) -> Theme:
        """Make ``name`` (a name or ``"light/dark"``) the active theme.

        Raises:
            ThemeError: no theme of that name (the active theme does not change).
        """
        wanted = resolve_theme_setting(name)
        theme = self.get(wanted)
        if theme is None:
            raise ThemeError(f"Theme not found: {wanted}")
        self.active = theme
        self._drop_unresolved()
        return theme

    def use_setting(self, setting: Any) -> None:
        """Use the ``theme`` setting's theme; one that names no theme leaves ``system`` and a warning."""
        try:
            self.use(str(setting))
        except ThemeError as exc:
            self._wanted = str(setting)
            self.unresolved = f"{exc}; using {SYSTEM}"
            self.warnings.append(self.unresolved)

    def add_paths(self, paths: Sequence[str], *, cwd: str) -> list[str]:
        """Load the theme files (or folders of them) ``paths`` name, after the themes already loaded
        (the first of a name still wins), as pi adds the paths of extensions' ``resources_discover``.
        A ``theme`` setting that named no theme is used once one of them has its name.

        Returns:
            The warnings these paths gave (also added to ``warnings``).
        """
        before = len(self.warnings)
        self._add_files([(os.path.normpath(os.path.join(cwd, os.path.expanduser(p))), True) for p in paths])
        added = self.warnings[before:]
        if self._wanted is not None and self.get(resolve_theme_setting(self._wanted)) is not None:
            self.use(self._wanted)
        return added

    def reload_changed(self) -> ThemeReload | None:
        """Read the active theme's file again if it changed since it was read (pi watches it too).

        ``None`` when nothing changed (or the theme has no file of its own, or the file is missing for
        a moment, as while an editor replaces it); else the new theme, now active under the same name,
        or why the edit cannot be used: the colours in use stay, and the same edit is not reported twice.
        """
        theme = self.active
        if theme.path is None or theme.stamp is None:
            return None
        stamp = file_stamp(theme.path)
        if stamp is None or stamp == self._checked.get(theme.path, theme.stamp):
            return None
        self._checked[theme.path] = stamp
        try:
            fresh = load_theme_file(theme.path)
        except ThemeError as exc:
            return ThemeReload(
                warning=f"Theme {theme.path} changed but cannot be used ({exc.summary()}); "
                f'keeping the colours of "{theme.name}"'
            )
        fresh.name = theme.name  # the setting names it: an edited "name" applies from the next start
        if self.themes.get(theme.name) is theme:
            self.themes[theme.name] = fresh
        self.active = fresh
        return ThemeReload(theme=fresh)

    def _drop_unresolved(self) -> None:
        if self.unresolved is not None and self.unresolved in self.warnings:
            self.warnings.remove(self.unresolved)
        self.unresolved = self._wanted = None

    def _add_files(self, candidates: Sequence[tuple[str, bool]]) -> None:
        for path, explicit in candidates:
            for file in _theme_files(path, explicit, self.warnings):
                key = os.path.realpath(file)
                if key in self._seen_files:
                    continue
                self._seen_files.add(key)
                try:
                    theme = load_theme_file(file)
                except ThemeError as exc:
                    self.warnings.append(f"Theme {file}: {exc.summary()}")
                    continue
                if theme.name == SYSTEM:
                    self.warnings.append(f'Theme {file}: "system" is reserved; the file is ignored')
                elif theme.name in self.themes:
                    winner = self.themes[theme.name].path
                    self.warnings.append(f'Theme name "{theme.name}" collision: {file} (using {winner})')
                else:
                    self.themes[theme.name] = theme


def load_themes(
    *,
    cwd: str,
    agent_dir: str,
    trusted: bool,
    user_settings: Mapping[str, Any],
    project_settings: Mapping[str, Any],
    paths: Sequence[str] = (),
    no_themes: bool = False,
    setting: Any = None,
) -> ThemeSet:
    """The run's themes (module docstring), with ``setting`` (the ``theme`` setting, or ``--use-theme``)
    as the active one."""
    found = ThemeSet()
    candidates: list[tuple[str, bool]] = []  # path, given explicitly (a missing one is reported)
    if not no_themes:
        project_base = os.path.join(cwd, ".tau")
        if trusted:
            candidates += _setting_paths(project_settings.get("themes"), project_base)
            candidates.append((os.path.join(project_base, "themes"), False))
        candidates += _setting_paths(user_settings.get("themes"), agent_dir)
        candidates.append((os.path.join(agent_dir, "themes"), False))
    candidates += [(os.path.normpath(os.path.join(cwd, os.path.expanduser(p))), True) for p in paths]
    found._add_files(candidates)
    if setting is not None:
        found.use_setting(setting)
    return found


def _setting_paths(value: Any, base: str) -> list[tuple[str, bool]]:
    entries = [entry for entry in value if isinstance(entry, str)] if isinstance(value, list) else []
    return [
        (os.path.normpath(os.path.join(base, os.path.expanduser(entry.strip()))), True)
        for entry in entries
        if entry.strip() and entry[:1] not in ("!", "+", "-")
    ]


def _theme_files(path: str, explicit: bool, warnings: list[str]) -> list[str]:
    if os.path.isdir(path):
        return sorted(
            os.path.join(path, name)
            for name in os.listdir(path)
            if name.endswith(".json") and os.path.isfile(os.path.join(path, name))
        )
    if os.path.isfile(path) and path.endswith(".json"):
        return [path]
    if explicit:
        reason = "theme path is not a json file" if os.path.exists(path) else "theme path does not exist"
        warnings.append(f"Theme {path}: {reason}")
    return []
