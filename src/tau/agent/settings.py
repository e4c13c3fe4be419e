"""Settings: ``<agentDir>/settings.json`` merged with a trusted project's ``.tau/settings.json``.

Project values win; nested objects merge key by key; a ``defaultTools`` list made only of
``+name``/``-name`` entries modifies the inherited list instead of replacing it (pi 1.6). Each file
is checked against :data:`~tau.agent.settings_schema.SCHEMA` as it is read: a wrong-typed value is
left out (its default applies) and described in :attr:`Settings.problems`.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, TypeGuard

from tau.agent.settings_schema import check_settings
from tau.common.config_files import ConfigFileError, read_json_file
from tau.common.dataclass import dataclass
from tau.common.paths import agent_dir, project_config_dir

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "Settings",
    "SettingsError",
    "apply_tool_modifiers",
    "resolve_default_tools",
    "tool_list_error",
]

DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")

_DEFAULTS: dict[str, Any] = {
    "defaultThinkingLevel": "medium",
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000, "maxAgentDelayMs": 60000},
    "images": {"autoResize": True, "blockImages": False},
    "defaultProjectTrust": "ask",
    "httpIdleTimeoutMs": 300_000,
}


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the problem."""


def _is_object(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def _deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in overrides.items():
        if value is None and key not in base:
            continue
        current = base.get(key)
        result[key] = _deep_merge(current, value) if _is_object(current) and _is_object(value) else value
    return result


def _is_modifier(entry: Any) -> bool:
    return isinstance(entry, str) and entry[:1] in ("+", "-")


def tool_list_error(entries: list[str]) -> str | None:
    """Why a ``--tools`` list is invalid, or ``None``: an allowlist, or only ``+name``/``-name`` entries."""
    modifiers = [e for e in entries if _is_modifier(e)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "tool names cannot be mixed with +name or -name entries"
    pattern = next((e for e in modifiers if "*" in e), None)
    if pattern:
        return f"+name and -name entries take exact tool names, not patterns: {pattern}"
    return None


def apply_tool_modifiers(base: list[str] | tuple[str, ...], entries: list[str]) -> list[str]:
    """Apply ``+name`` (add) and ``-name`` (remove) entries to ``base`` in order."""
    tools = list(base)
    for entry in entries:
        if not _is_modifier(entry) or len(entry) < 2:
            continue
        name = entry[1:]
        if entry[0] == "+" and name not in tools:
            tools.append(name)
        elif entry[0] == "-" and name in tools:
            tools.remove(name)
    return tools


def resolve_default_tools(entries: list[str]) -> list[str]:
    """Plain names replace the default tools; ``+``/``-`` entries then modify the selection."""
    plain = [e for e in entries if not _is_modifier(e)]
    base = plain if plain or not entries else list(DEFAULT_TOOL_NAMES)
    return apply_tool_modifiers(base, entries)


def _merge_settings(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = _deep_merge(base, overrides)
    inherited, given = base.get("defaultTools"), overrides.get("defaultTools")
    if isinstance(inherited, list) and isinstance(given, list) and given and all(map(_is_modifier, given)):
        merged["defaultTools"] = inherited + given
    return merged


def _read_json_object(path: Path) -> dict[str, Any]:
    """The file's JSON object (``{}`` when it is missing or blank); every problem is one line naming it."""
    try:
        data, _found = read_json_file(path)
    except ConfigFileError as exc:
        raise SettingsError(str(exc)) from exc
    if data is None:  # missing, or only whitespace
        return {}
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


@dataclass
class Settings:
    """Effective settings. ``get("a.b")`` reads a dotted path with the built-in default behind it."""

    global_settings: dict[str, Any] = field(default_factory=dict)
    project_settings: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    global_path: Path | None = None
    project_path: Path | None = None
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, cwd: str | Path, *, project_trusted: bool, directory: Path | None = None) -> Settings:
        """Read the user file and, when the project is trusted, the project file.

        Values of the wrong type are left out, one line each in :attr:`problems` (the modes print
        them as warnings); a file that is not a JSON object raises :class:`SettingsError`.
        """
        global_path = (directory or agent_dir()) / "settings.json"
        project_path = project_config_dir(cwd) / "settings.json"
        user, problems = check_settings(_read_json_object(global_path), str(global_path), _DEFAULTS)
        project: dict[str, Any] = {}
        if project_trusted:
            project, more = check_settings(_read_json_object(project_path), str(project_path), _DEFAULTS)
            problems += more
        return cls(user, project, {}, global_path, project_path, problems)

    @classmethod
    def in_memory(cls, values: dict[str, Any] | None = None) -> Settings:
        """Settings that never touch the disk (tests, ``--no-session`` embedding)."""
        return cls(global_settings=copy.deepcopy(values or {}))

    @property
    def effective(self) -> dict[str, Any]:
        return _deep_merge(_DEFAULTS, self._given())

    def _given(self) -> dict[str, Any]:
        return _merge_settings(_merge_settings(self.global_settings, self.project_settings), self.overrides)

    def get(self, dotted: str, default: Any = None) -> Any:
        return _lookup(self.effective, dotted, default)

    def get_set(self, dotted: str) -> Any:
        """The value a settings file or an override gives ``dotted``; ``None`` when only the built-in
        default would (pi reads some settings this way, e.g. ``defaultThinkingLevel`` on a model switch)."""
        return _lookup(self._given(), dotted, None)

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of the effective settings (what ``get_settings()`` hands to extensions)."""
        return copy.deepcopy(self.effective)

    def apply_overrides(self, overrides: dict[str, Any]) -> None:
        """Runtime overrides (CLI flags), applied above both files and never saved."""
        self.overrides = _merge_settings(self.overrides, overrides)

    def save_global(self, dotted: str | Sequence[str], value: Any) -> bool:
        """Set ``dotted`` (``"compaction.enabled"``, or the keys as a list when one holds a dot, as
        ``modelThinkingLevels`` keys do) in the user settings and write the user file.

        The file is read again first, so keys written meanwhile (by hand, another tau) are kept;
        it is replaced atomically (temporary file, then rename). A project file is never written.
        Returns ``False`` when nothing was written: in-memory settings, or a user file that cannot
        be parsed (pi then keeps the change for this process only, and so does tau).
        """
        _set_path(self.global_settings, dotted, value)
        if self.global_path is None:
            return False
        try:
            current = _read_json_object(self.global_path)
        except SettingsError:
            return False
        _set_path(current, dotted, value)
        _write_atomically(self.global_path, json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        return True

    def default_tools(self) -> list[str]:
        entries = self.get("defaultTools")
        return resolve_default_tools(entries) if isinstance(entries, list) else list(DEFAULT_TOOL_NAMES)


def _lookup(value: Any, dotted: str, default: Any) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value


def _set_path(target: dict[str, Any], dotted: str | Sequence[str], value: Any) -> None:
    *parents, last = dotted.split(".") if isinstance(dotted, str) else list(dotted)
    for part in parents:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[last] = value


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
