"""``mcp.json``: the servers of ``<agentDir>/mcp.json`` and, for a trusted project, ``.tau/mcp.json``.

Both use the ``mcpServers`` shape other MCP clients share (pi ``extensions/mcp/config.ts``). A project
entry replaces a global entry of the same name; a project entry without ``command``, ``url`` or
``type`` overrides only ``enabled``, ``exposure`` and ``toolExposure`` of the global one and keeps the
rest, credentials included. ``autoEnableCodemode`` (default true) sits beside ``mcpServers``; a
project value overrides the global one. Invalid entries are reported and skipped.

Edits (``/mcp``, ``tau mcp add|remove``) rewrite the file with its own indentation and keep what
they do not change.
"""

from __future__ import annotations

import os
import re
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from tau.common import jsjson
from tau.common.config_files import ConfigFileError, parse_config_json, read_config_text, read_json_file
from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern
from tau.extension import (
    McpConfigError,
    is_mcp_server_override,
    mcp_namespace,
    project_config_dir,
    validate_mcp_server_config,
)

__all__ = [
    "McpConfig",
    "ServerEntry",
    "add_server_config",
    "load_mcp_config",
    "remove_server_config",
    "update_server_config",
]

OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
CONFIG_FILE = "mcp.json"


@dataclass
class ServerEntry:
    """One configured server.

    Attributes:
        name: The key in ``mcpServers``.
        config: The validated entry (exposure aliases resolved).
        source: The file that defines it, or the extension that registered it.
        scope: ``"global"``, ``"project"`` or ``"extension"``.
        override: The project file whose override entry changed it, if any.
    """

    name: str
    config: dict[str, Any]
    source: str
    scope: str = "global"
    override: str | None = None

    @property
    def enabled(self) -> bool:
        return self.config.get("enabled") is not False

    @property
    def exposure(self) -> str:
        return self.config.get("exposure") or "codemode"


@dataclass
class McpConfig:
    """What the files say: the servers in order, the errors, ``autoEnableCodemode`` and the project file."""

    servers: list[ServerEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    auto_enable_codemode: bool | None = None
    project_config: str | None = None


def _read_file(path: Path, scope: str, servers: dict[str, ServerEntry], config: McpConfig) -> None:
    try:
        parsed, found = read_json_file(path)
    except ConfigFileError as exc:  # its message names the file
        config.errors.append(str(exc))
        return
    if not found:
        return
    if not isinstance(parsed, dict) or (
        "mcpServers" in parsed and not isinstance(parsed["mcpServers"], dict)
    ):
        config.errors.append(f'{path}: expected an object with an "mcpServers" object')
        return
    if isinstance(parsed.get("autoEnableCodemode"), bool):
        config.auto_enable_codemode = parsed["autoEnableCodemode"]
    elif "autoEnableCodemode" in parsed:
        config.errors.append(f"{path}: autoEnableCodemode must be a boolean")
    for name, value in (parsed.get("mcpServers") or {}).items():
        if scope == "project" and isinstance(value, dict) and is_mcp_server_override(value):
            _apply_override(path, name, value, servers, config)
            continue
        try:
            validated = validate_mcp_server_config(name, value)
        except McpConfigError as exc:
            config.errors.append(f"{path}: {exc}")
            continue
        # Names that differ only in `-` and `_` would share a namespace.
        clash = next(
            (other for other in servers if other != name and mcp_namespace(other) == mcp_namespace(name)),
            None,
        )
        if clash is not None:
            config.errors.append(f'{path}: server "{name}" conflicts with "{clash}"')
            continue
        if scope == "project" and "url" in validated and "auth" in validated:
            config.errors.append(f'{path}: server "{name}": auth is only allowed in the global mcp.json')
            continue
        servers[name] = ServerEntry(name, validated, str(path), scope)


def _apply_override(
    path: Path, name: str, value: dict[str, Any], servers: dict[str, ServerEntry], config: McpConfig
) -> None:
    base = servers.get(name)
    extra = [key for key in value if key not in OVERRIDE_KEYS]
    if base is None:
        config.errors.append(
            f'{path}: server "{name}" needs "command" or "url", or a global server to override'
        )
    elif extra:
        config.errors.append(f'{path}: server "{name}": an override can only set {", ".join(OVERRIDE_KEYS)}')
    else:
        try:
            validated = validate_mcp_server_config(name, {**base.config, **value})
        except McpConfigError as exc:
            config.errors.append(f"{path}: {exc}")
            return
        servers[name] = replace(base, config=validated, override=str(path))


def load_mcp_config(
    agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str], trusted: bool
) -> McpConfig:
    """The global file, then the project's when ``trusted``. Disabled servers are included."""
    config = McpConfig()
    servers: dict[str, ServerEntry] = {}
    _read_file(Path(agent_dir) / CONFIG_FILE, "global", servers, config)
    if trusted:
        project = project_config_dir(cwd) / CONFIG_FILE
        config.project_config = str(project)
        _read_file(project, "project", servers, config)
    config.servers = list(servers.values())
    return config


# -- edits ------------------------------------------------------------------------------------------

_INDENT = lazy_pattern(r"^([ \t]+)\S", re.MULTILINE)
_LEADING = lazy_pattern(r"^((?:  )+)", re.MULTILINE)


def _edit(path: Path, edit: Any) -> None:
    """Read ``path`` (empty when missing), let ``edit(servers, parsed)`` change it, and write it back
    with its own indentation when ``edit`` returns true."""
    text = read_config_text(path)
    parsed = parse_config_json(path, text) if text is not None else {}
    if not isinstance(parsed, dict) or (
        "mcpServers" in parsed and not isinstance(parsed["mcpServers"], dict)
    ):
        raise ValueError(f'{path}: expected an object with an "mcpServers" object')
    servers = parsed.get("mcpServers") if isinstance(parsed.get("mcpServers"), dict) else None
    if not edit(servers, parsed):
        return
    found = _INDENT.search(text or "")
    indent = found.group(1) if found else "  "
    out = jsjson.dumps_indented(parsed)
    if indent != "  ":
        # JSON text has no raw newline inside a string, so every line starts with indentation only.
        out = _LEADING.sub(lambda match: indent * (len(match.group(1)) // 2), out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out + "\n", encoding="utf-8")


def update_server_config(
    path: str | os.PathLike[str], name: str, patch: dict[str, Any], *, override: bool = False
) -> None:
    """Set ``enabled``/``exposure`` of one server in the file that defines (or, with ``override``,
    overrides) it. Defaults are dropped from a full entry and kept in an override."""

    def edit(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        server = (servers or {}).get(name)
        if server is None and override:
            server = {}
            parsed["mcpServers"] = {**(servers or {}), name: server}
        if not isinstance(server, dict):
            raise ValueError(f'{path} does not define MCP server "{name}"')
        keep_defaults = is_mcp_server_override(server)
        if "enabled" in patch:
            if patch["enabled"] and not keep_defaults:
                server.pop("enabled", None)
            else:
                server["enabled"] = patch["enabled"]
        if "exposure" in patch:
            if patch["exposure"] == "codemode" and not keep_defaults:
                server.pop("exposure", None)
            else:
                server["exposure"] = patch["exposure"]
        return True

    _edit(Path(path), edit)


def add_server_config(path: str | os.PathLike[str], name: str, entry: dict[str, Any]) -> bool:
    """Add or replace a server (creating the file); true when an entry was replaced."""
    replaced = False

    def edit(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        nonlocal replaced
        target = servers if servers is not None else {}
        replaced = name in target
        target[name] = entry
        parsed["mcpServers"] = target
        return True

    _edit(Path(path), edit)
    return replaced


def remove_server_config(path: str | os.PathLike[str], name: str) -> bool:
    """Remove a server; false when the file does not define it."""
    if not Path(path).exists():
        return False
    removed = False

    def edit(servers: dict[str, Any] | None, parsed: dict[str, Any]) -> bool:
        nonlocal removed
        if not servers or name not in servers:
            return False
        del servers[name]
        removed = True
        return True

    _edit(Path(path), edit)
    return removed
