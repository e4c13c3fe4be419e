"""The ``extensions`` setting (pi 1.6's resource rules, for extensions).

An ``extensions`` array in the user's settings (paths from the agent dir) or a trusted project's
(paths from ``.tau``) holds:

- paths of extension files, packages or folders of them, loaded before the conventional folders
  of the same scope;
- patterns that turn resources off and on: ``!glob`` leaves out what it matches, ``+path`` puts one
  back, ``-path`` leaves one out. They apply to the array's own paths and to the scope's
  conventional folder (``<agentDir>/extensions/`` or ``.tau/extensions/``);
- ``builtin:<name>`` under those patterns for the built-in (bundled) extensions, which load by
  default: ``"-builtin:mcp"`` turns MCP off, ``"!builtin:*"`` every built-in. A ``+``, ``-`` or
  ``!`` entry of the project that names a built-in wins over the user's entries.

This module decides; :mod:`tau.extension.loader` loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tau.agent.resources import (
    enabled_by_overrides,
    enabled_by_patterns,
    entry_matches,
    is_pattern_entry,
    resolve_entry,
)
from tau.common.dataclass import dataclass

__all__ = [
    "BUILTIN_PREFIX",
    "PI_ONLY_BUILTINS",
    "ExtensionSettings",
    "builtin_state",
    "conventional_enabled",
    "extension_settings",
    "settings_paths",
]

BUILTIN_PREFIX = "builtin:"
# pi 1.6's built-in extensions tau has no counterpart of: named in a copied pi setting, they are
# accepted without a warning (and, having nothing to turn off, change nothing).
PI_ONLY_BUILTINS = ("llama.cpp",)


@dataclass
class ExtensionSettings:
    """The ``extensions`` arrays a run reads and the folders their paths start from."""

    user: list[str]
    project: list[str]
    user_base: str
    project_base: str


def _strings(value: Any) -> list[str]:
    return [entry for entry in value if isinstance(entry, str)] if isinstance(value, list) else []


def extension_settings(settings: Any, agent_dir: str, project_base: str) -> ExtensionSettings:
    """The user's and the (trusted) project's ``extensions`` arrays of ``settings`` (a ``Settings``,
    whose project part is empty for an untrusted project, or a plain dict taken as the user's)."""
    if isinstance(settings, dict):
        user, project = settings.get("extensions"), None
    else:
        user = (getattr(settings, "global_settings", None) or {}).get("extensions")
        project = (getattr(settings, "project_settings", None) or {}).get("extensions")
    return ExtensionSettings(_strings(user), _strings(project), agent_dir, project_base)


def builtin_state(name: str, entries: ExtensionSettings) -> tuple[bool, str]:
    """Whether the built-in ``name`` is on, and which scope decided (``"user"`` or ``"project"``).

    The project's last ``+``/``-`` (exact) or ``!`` (glob) entry that names it decides; else the
    user's entries under pi's override rules (``!`` off, then ``+`` on, then ``-`` off).
    """
    path = BUILTIN_PREFIX + name
    decided: bool | None = None
    for entry in entries.project:
        if entry[:1] not in ("+", "-", "!"):
            continue
        if entry_matches(path, entry[1:], entries.project_base, exact=entry[0] != "!"):
            decided = entry[0] == "+"
    if decided is not None:
        return decided, "project"
    return enabled_by_overrides(path, entries.user, entries.user_base), "user"


def settings_paths(
    entries: list[str], base: str, collect: Callable[[str], list[str]]
) -> list[tuple[str, bool]]:
    """The extension paths an array's plain entries name (missing ones skipped, as pi does), each
    with whether the array's patterns leave it on; ``collect`` turns a folder into its extensions."""
    found: list[str] = []
    for entry in entries:
        if is_pattern_entry(entry) or entry.startswith(BUILTIN_PREFIX):
            continue
        path = resolve_entry(entry, base)
        if os.path.isfile(path):
            found.append(path)
        elif os.path.isdir(path):
            found += collect(path)
    return [(path, enabled_by_patterns(path, entries, base)) for path in found]


def conventional_enabled(path: str, entries: list[str], base: str) -> bool:
    """Whether an extension of the scope's conventional folder stays on under the array's patterns."""
    return enabled_by_overrides(path, entries, base)
