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

__all__ = ["USAGE", "main", "parse_arguments"]


USAGE = "tau config [-l] [--json] [--approve|--no-approve]"

_HELP = f"""Usage: {USAGE}

Show the settings files tau reads here, what each holds, the effective settings, and the extensions.

Options:
  -l, --local          the project's settings only (the project must be trusted)
  --json               one JSON object instead of text
  -a, --approve        as if the project were trusted
  -na, --no-approve    as if it were not
  -h, --help           this help
"""


class _Options(argparse.Namespace):
    approve: bool | None = None
    local: bool = False
    json: bool = False


class _Usage(Exception):
    """A word ``tau config`` does not take: the two lines pi 1.6's ``pi config`` prints for it."""


def parse_arguments(argv: list[str]) -> _Options:
    """pi 1.6's ``config`` arguments (``-l``, ``-a``/``--approve``, ``-na``/``--no-approve``), and
    ``--json``. Anything else is an error naming the word, as pi words it (exit 1)."""
    options = _Options()
    for arg in argv:
        if arg in ("-l", "--local"):
            options.local = True
        elif arg == "--json":
            options.json = True
        elif arg in ("-a", "--approve"):
            options.approve = True
        elif arg in ("-na", "--no-approve"):
            options.approve = False
        elif arg.startswith("-"):
            raise _Usage(f'Unknown option {arg} for "config".\nUse "tau --help" or "{USAGE}".')
        else:
            raise _Usage(f"Unexpected argument {arg}.\nUsage: {USAGE}")
    return options


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
        return "not read: the project is not trusted (tau config -a shows it as trusted)"
    if "error" in described:
        return f"cannot be used: {described['error']}"
    return "read"


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(_HELP, end="")
        return 0
    try:
        args = parse_arguments(argv)
    except _Usage as exc:
        print(exc, file=sys.stderr)
        return 1
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
    if args.local and not trusted:
        print("Project is not trusted. Use tau config -l --approve to see its settings.", file=sys.stderr)
        return 1
    project = _file(project_config_dir(cwd) / "settings.json", trusted)
    project["trusted"] = trusted
    effective, problems = _effective(user, project if trusted else None)
    extensions, more = _extensions(cwd, trusted, user, project, effective)
    problems += more
    if args.local:
        # pi's `config -l` edits the project's scope; tau's shows that scope alone.
        extensions = [
            item for item in extensions if item["group"].startswith(("Project", "Built-in (project"))
        ]
    if args.json:
        document = {
            "user": user,
            "project": project,
            "effective": effective,
            "extensions": extensions,
            "problems": problems,
        }
        if args.local:
            document = {"project": project, "extensions": extensions, "problems": problems}
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    lines: list[str] = []
    if not args.local:
        lines.append(f"user settings: {user['path']} ({_state(user, False)})")
        if "values" in user:
            lines.append(_indented(user["values"]))
    lines.append(f"project settings: {project['path']} ({_state(project, not trusted)})")
    if "values" in project:
        lines.append(_indented(project["values"]))
    if not args.local:
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
