"""``tau config``: the settings files in effect and their values.

pi 1.6's ``pi config`` opens a selector for package resources; tau has no packages, so its ``config``
answers the question a user has when something behaves unexpectedly: which settings files are read
(the user's, and the project's when the project is trusted), what each one holds, the effective
values (built-in defaults, then the files), and the extensions, grouped as ``pi config`` groups them
(``Built-in`` for the bundled ones), each on (``[x]``) or off (``[ ]``). It never writes anything:
the ``extensions`` setting turns them on and off (``"-builtin:mcp"``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau config",
        description="Show the settings files tau reads here, what each holds, and the effective settings.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "--approve",
        "-a",
        dest="approve",
        action="store_const",
        const=True,
        help="as if the project were trusted",
    )
    trust.add_argument(
        "--no-approve", "-na", dest="approve", action="store_const", const=False, help="as if it were not"
    )
    return parser


def _file(path: Path, read: bool) -> dict[str, Any]:
    """One settings file: where, whether it exists, and its values (or why they cannot be read)."""
    from tau.agent.settings import SettingsError, _read_json_object

    described: dict[str, Any] = {"path": str(path), "exists": path.is_file(), "read": read}
    if read and described["exists"]:
        try:
            described["values"] = _read_json_object(path)
        except SettingsError as exc:
            described["error"] = str(exc)
    return described


def _effective(user: dict[str, Any], project: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """The settings a run here would use (a file that cannot be used counts as empty, as in a run)."""
    from tau.agent.settings import _DEFAULTS, Settings
    from tau.agent.settings_schema import check_settings

    problems: list[str] = []
    layers: list[dict[str, Any]] = []
    for described in (user, project):
        if described is None or "values" not in described:
            layers.append({})
            continue
        values, found = check_settings(described["values"], described["path"], _DEFAULTS)
        layers.append(values)
        problems += found
    return Settings(layers[0], layers[1]).effective, problems


def _state(described: dict[str, Any], untrusted: bool) -> str:
    if not described["exists"]:
        return "not found"
    if untrusted:
        return "not read: the project is not trusted (tau -a config shows it as trusted)"
    if "error" in described:
        return f"cannot be used: {described['error']}"
    return "read"


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    # Lazy: `tau --version` must not pay for the settings modules.
    from tau.agent.settings import Settings, SettingsError
    from tau.agent.trust import TrustError, resolve_trust
    from tau.common.paths import agent_dir, project_config_dir

    cwd = os.getcwd()
    user = _file(agent_dir() / "settings.json", True)
    try:
        policy = str(Settings.load(cwd, project_trusted=False).get("defaultProjectTrust", "ask"))
    except SettingsError:
        policy = "ask"
    try:
        trusted = resolve_trust(cwd, approve=args.approve, default_policy=policy)
    except TrustError as exc:
        print(f"tau config: {exc}", file=sys.stderr)
        trusted = False
    project = _file(project_config_dir(cwd) / "settings.json", trusted)
    project["trusted"] = trusted
    effective, problems = _effective(user, project if trusted else None)
    extensions, more = _extensions(cwd, trusted, user, project, effective)
    problems += more
    if args.json:
        document = {
            "user": user,
            "project": project,
            "effective": effective,
            "extensions": extensions,
            "problems": problems,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    lines = [f"user settings: {user['path']} ({_state(user, False)})"]
    if "values" in user:
        lines.append(_indented(user["values"]))
    lines.append(f"project settings: {project['path']} ({_state(project, not trusted)})")
    if "values" in project:
        lines.append(_indented(project["values"]))
    lines.append("effective settings (built-in defaults, then the files read):")
    lines.append(_indented(effective))
    lines.append('extensions (the "extensions" setting turns them off and on: "-builtin:mcp", "!name.py"):')
    for group, items in _grouped(extensions):
        lines.append(f"  {group}")
        lines += [f"    {'[x]' if item['enabled'] else '[ ]'} {item['name']}" for item in items]
    lines += [f"warning: {problem}" for problem in problems]
    print("\n".join(lines))
    return 0


def _indented(values: dict[str, Any]) -> str:
    return "\n".join("  " + line for line in json.dumps(values, indent=2, ensure_ascii=False).splitlines())


# pi config's group order: installed packages, then the user's groups, then the project's; within
# a scope the conventional folder, the built-ins, then the settings entries.
_GROUP_RANK = {"Installed packages": 0, "User": 1, "Built-in": 2, "User settings": 3}
_PROJECT_RANK = {"Project": 4, "Built-in (project override)": 5, "Project settings": 6}


def _group_rank(group: str) -> int:
    for label, rank in {**_GROUP_RANK, **_PROJECT_RANK}.items():
        if group == label or (label in ("User", "Project") and group.startswith(label + " (")):
            return rank
    return 7


def _display_name(path: str, builtin: bool) -> str:
    if builtin:
        return path.split(":", 1)[1]
    name, parent = os.path.basename(path), os.path.basename(os.path.dirname(path))
    return name if parent == "extensions" else f"{parent}/{name}"


def _extensions(
    cwd: str, trusted: bool, user: dict[str, Any], project: dict[str, Any], effective: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every extension a run here would consider (``-e`` aside), with its group and whether it loads;
    and the warnings for ``builtin:`` names that name no bundled extension."""
    from tau.agent.settings import Settings
    from tau.extension.loader import extension_inventory, unknown_builtin_warnings

    settings = Settings(user.get("values") or {}, (project.get("values") or {}) if trusted else {})
    disabled = [name for name in effective.get("disabledExtensions") or [] if isinstance(name, str)]
    listed = []
    for candidate in extension_inventory(cwd=cwd, trusted=trusted, settings=settings, disabled=disabled):
        source = candidate.source
        builtin = source.source == "bundled"
        listed.append(
            {
                "group": candidate.group,
                "name": _display_name(source.path, builtin),
                "path": f"builtin:{source.name}" if builtin else source.path,
                "enabled": candidate.enabled,
            }
        )
    return listed, unknown_builtin_warnings(settings)


def _grouped(extensions: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in extensions:
        groups.setdefault(item["group"], []).append(item)
    ordered = sorted(groups.items(), key=lambda pair: _group_rank(pair[0]))
    return [(group, sorted(items, key=lambda item: item["name"])) for group, items in ordered]
