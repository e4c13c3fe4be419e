"""``tau config``: the settings files in effect and their values.

pi 1.6's ``pi config`` opens a selector for package resources; tau has no packages, so its ``config``
answers the question a user has when something behaves unexpectedly: which settings files are read
(the user's, and the project's when the project is trusted), what each one holds, and the effective
values (built-in defaults, then the files). It never writes anything.
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
    layers = []
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
    if args.json:
        document = {"user": user, "project": project, "effective": effective, "problems": problems}
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
    lines += [f"warning: {problem}" for problem in problems]
    print("\n".join(lines))
    return 0


def _indented(values: dict[str, Any]) -> str:
    return "\n".join("  " + line for line in json.dumps(values, indent=2, ensure_ascii=False).splitlines())
