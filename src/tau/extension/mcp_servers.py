"""MCP server configuration as pi 1.6 validates it, and the servers extensions register.

The ``mcpServers`` shape is the one MCP clients share (stdio ``command``/``args``/``env``/``cwd``,
streamable HTTP ``url``/``headers``/``oauth``, ``enabled``/``description``/``timeout`` for both)
plus pi's ``exposure``/``toolExposure`` (pi-mcp ``config.ts`` and pi ``core/mcp-servers.ts``). The
host only validates and stores registrations (``tau.register_mcp_server``); the bundled ``mcp``
extension, or another one that handles ``mcp_servers_change``, connects them.

Validation raises :class:`McpConfigError` with pi's wording (``server "docs": url must be an http
or https URL``); files are a trust boundary, so nothing unknown is passed on unchecked.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from tau.agent.session_tools import MCP_RESOURCE_TOOLS, is_mcp_tool_name
from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "LIST_MCP_RESOURCES_TOOL",
    "LIST_MCP_RESOURCE_TEMPLATES_TOOL",
    "MCP_EXPOSURES",
    "MCP_RESOURCE_TOOLS",
    "READ_MCP_RESOURCE_TOOL",
    "McpConfigError",
    "McpServerRegistry",
    "RegisteredMcpServer",
    "get_mcp_tool_exposure",
    "is_mcp_server_override",
    "is_mcp_tool_name",
    "mcp_namespace",
    "tool_name_matcher",
    "tool_pattern",
    "transport_kind",
    "validate_mcp_server_config",
]

LIST_MCP_RESOURCES_TOOL = "list_mcp_resources"
LIST_MCP_RESOURCE_TEMPLATES_TOOL = "list_mcp_resource_templates"
READ_MCP_RESOURCE_TOOL = "read_mcp_resource"

MCP_EXPOSURES = ("codemode", "deferred", "direct", "hidden")
# Older exposure names, accepted in configs and replaced by their current name when validated.
_EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
_SERVER_NAME = lazy_pattern(r"^[A-Za-z0-9_-]+$")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


class McpConfigError(ValueError):
    """An invalid ``mcpServers`` entry; the message names the server and the field."""


def mcp_namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: names that differ only there share a namespace."""
    return f"mcp__{server.replace('-', '_')}"


def tool_pattern(pattern: str) -> re.Pattern[str]:
    """A tool name pattern where ``*`` matches any characters (``toolExposure``, ``--tools``)."""
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$", re.DOTALL)


def tool_name_matcher(entries: Sequence[str]) -> Callable[[str], bool]:
    """Whether a tool name matches any entry, each an exact name or a pattern."""
    names = {entry for entry in entries if "*" not in entry}
    patterns = [tool_pattern(entry) for entry in entries if "*" in entry]
    return lambda name: name in names or any(pattern.match(name) for pattern in patterns)


def get_mcp_tool_exposure(config: dict[str, Any], tool: str) -> str:
    """A tool's exposure: its exact ``toolExposure`` entry, else the first matching pattern, else the
    server's ``exposure`` (default ``codemode``)."""
    overrides = config.get("toolExposure") or {}
    exact = overrides.get(tool)
    if exact is not None:
        return exact
    for pattern, exposure in overrides.items():
        if "*" in pattern and tool_pattern(pattern).match(tool):
            return exposure
    return config.get("exposure") or "codemode"


def is_mcp_server_override(entry: dict[str, Any]) -> bool:
    """An entry without ``command``, ``url`` or ``type`` overrides a server defined elsewhere."""
    return "command" not in entry and "url" not in entry and "type" not in entry


# -- validation ------------------------------------------------------------------------------------


def _is_record(value: Any) -> bool:
    return isinstance(value, dict)


def _is_string_record(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _host(parts: Any) -> str:
    host = parts.hostname or ""
    return f"[{host}]" if ":" in host else host


def _base_error(entry: dict[str, Any]) -> str | None:
    enabled, timeout, description = entry.get("enabled"), entry.get("timeout"), entry.get("description")
    if "enabled" in entry and not isinstance(enabled, bool):
        return "enabled must be a boolean"
    if "description" in entry and not isinstance(description, str):
        return "description must be a string"
    if "timeout" in entry and not (_is_number(timeout) and timeout > 0):
        return "timeout must be a positive number of seconds"
    return None


def _stdio_error(entry: dict[str, Any]) -> str | None:
    args = entry.get("args")
    if "args" in entry and not (isinstance(args, list) and all(isinstance(arg, str) for arg in args)):
        return "args must be an array of strings"
    if "env" in entry and not _is_string_record(entry["env"]):
        return "env must map names to strings"
    if "cwd" in entry and not isinstance(entry["cwd"], str):
        return "cwd must be a string"
    return None


def _loopback_redirect(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return (
        parts.scheme == "http" and _host(parts) in _LOOPBACK_HOSTS and not parts.query and not parts.fragment
    )


def _oauth_error(value: Any) -> str | None:
    if value is None:
        return None
    if not _is_record(value):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret"):
        if key in value and not isinstance(value[key], str):
            return f"oauth.{key} must be a string"
    port = value.get("callbackPort")
    if "callbackPort" in value and not (
        isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535
    ):
        return "oauth.callbackPort must be a port number"
    if "callbackUrl" in value:
        url = value["callbackUrl"]
        if not isinstance(url, str) or not _loopback_redirect(url):
            return "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment"
        url_port = urlsplit(url).port
        if url_port is not None and port is not None and url_port != port:
            return "oauth.callbackUrl and oauth.callbackPort name different ports"
    if "scope" in value and not isinstance(value["scope"], str):
        return "oauth.scope must be a string"
    name = value.get("clientName")
    if "clientName" in value and not (isinstance(name, str) and name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = value.get("clientRegistration")
    if "clientRegistration" in value and registration not in ("auto", "dcr"):
        if registration != "cimd":
            return 'oauth.clientRegistration must be "auto", "dcr", or "cimd"'
        # tau publishes no Client ID Metadata Document (docs/mcp.md), so it cannot identify by one.
        return 'oauth.clientRegistration "cimd" is not supported: there are no Client ID Metadata Documents'
    if "authServerMetadataUrl" in value:
        metadata = value["authServerMetadataUrl"]
        parts = urlsplit(metadata) if isinstance(metadata, str) else None
        secure = parts is not None and (
            parts.scheme == "https" or (parts.scheme == "http" and _host(parts) in _LOOPBACK_HOSTS)
        )
        if not secure:
            return (
                "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
            )
    return None


def _http_error(entry: dict[str, Any], url: str) -> str | None:
    if not _http_url(url):
        return "url must be an http or https URL"
    if "headers" in entry and not _is_string_record(entry["headers"]):
        return "headers must map names to strings"
    return _oauth_error(entry.get("oauth"))


def _auth_error(auth: Any, url: str) -> str | None:
    """``auth: {"provider"}`` sends a model provider's credential to ``url``: only over https or loopback."""
    if auth is None:
        return None
    if not _is_record(auth) or not isinstance(auth.get("provider"), str) or not auth["provider"]:
        return "auth.provider must be a provider name"
    parts = urlsplit(url)
    if parts.scheme != "https" and _host(parts) not in _LOOPBACK_HOSTS:
        return "auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
    return None


def _exposure_error(entry: dict[str, Any]) -> str | None:
    listed = ", ".join(f'"{value}"' for value in MCP_EXPOSURES)
    if "exposure" in entry and entry["exposure"] not in MCP_EXPOSURES:
        return f"exposure must be one of {listed}"
    if "toolExposure" in entry:
        overrides = entry["toolExposure"]
        if not _is_record(overrides):
            return "toolExposure must map tool names to exposures"
        for tool, value in overrides.items():
            if value not in MCP_EXPOSURES:
                return f'toolExposure "{tool}" must be one of {listed}'
    return None


def _resolve_aliases(entry: dict[str, Any]) -> dict[str, Any]:
    resolved = dict(entry)
    if isinstance(resolved.get("exposure"), str):
        resolved["exposure"] = _EXPOSURE_ALIASES.get(resolved["exposure"], resolved["exposure"])
    if _is_record(resolved.get("toolExposure")):
        resolved["toolExposure"] = {
            tool: _EXPOSURE_ALIASES.get(value, value) if isinstance(value, str) else value
            for tool, value in resolved["toolExposure"].items()
        }
    return resolved


def transport_kind(entry: dict[str, Any]) -> str:
    """``"http"`` or ``"stdio"`` for a validated entry."""
    return "http" if isinstance(entry.get("url"), str) else "stdio"


def validate_mcp_server_config(name: str, raw: Any) -> dict[str, Any]:
    """A copy of one ``mcpServers`` entry with exposure aliases resolved; raises :class:`McpConfigError`.

    ``type`` is optional: ``command`` selects stdio, ``url`` streamable HTTP; ``sse`` is refused.
    """
    if not isinstance(name, str) or not _SERVER_NAME.match(name):
        raise McpConfigError(f'invalid server name "{name}" (use letters, digits, "_" and "-")')
    if not _is_record(raw):
        raise McpConfigError(f'server "{name}" must be an object')
    entry = _resolve_aliases(raw)
    error = _base_error(entry)
    if error:
        raise McpConfigError(f'server "{name}": {error}')
    kind, url, command = entry.get("type"), entry.get("url"), entry.get("command")
    if kind == "sse":
        raise McpConfigError(
            f'server "{name}": legacy SSE transport is not supported; use the streamable HTTP URL'
        )
    if isinstance(url, str) and kind in (None, "http", "streamable-http"):
        error = _http_error(entry, url) or _auth_error(entry.get("auth"), url)
    elif isinstance(command, str) and kind in (None, "stdio"):
        error = _stdio_error(entry)
    else:
        raise McpConfigError(f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)')
    error = error or _exposure_error(entry)
    if error:
        raise McpConfigError(f'server "{name}": {error}')
    return copy.deepcopy(entry)


# -- servers registered by extensions --------------------------------------------------------------


@dataclass
class RegisteredMcpServer:
    """A server an extension registered (pi ``RegisteredMcpServer``)."""

    name: str
    config: dict[str, Any]
    extension_path: str

    def to_json(self) -> dict[str, Any]:
        """pi's shape: ``{"name", "config", "extensionPath"}`` (a copy)."""
        return {"name": self.name, "config": copy.deepcopy(self.config), "extensionPath": self.extension_path}


@dataclass
class McpServerRegistry:
    """The servers registered by the extensions of one runner, in registration order."""

    servers: dict[str, RegisteredMcpServer] = field(default_factory=dict)
    on_change: Callable[[], None] | None = None

    def register(self, name: str, config: Any, extension_path: str) -> None:
        """Register or replace ``extension_path``'s server; raises for invalid configs and for names
        another extension registered (or that share a namespace with one)."""
        try:
            validated = validate_mcp_server_config(name, config)
        except McpConfigError as exc:
            raise McpConfigError(
                f'Invalid MCP server registered by extension "{extension_path}": {exc}'
            ) from None
        owner = self.servers.get(name)
        if owner is not None and owner.extension_path != extension_path:
            raise McpConfigError(
                f'MCP server "{name}" is already registered by extension "{owner.extension_path}"'
            )
        clash = next(
            (
                other
                for other in self.servers
                if other != name and mcp_namespace(other) == mcp_namespace(name)
            ),
            None,
        )
        if clash is not None:
            raise McpConfigError(f'MCP server "{name}" conflicts with registered server "{clash}"')
        self.servers[name] = RegisteredMcpServer(name, validated, extension_path)
        self._changed()

    def unregister(self, name: str, extension_path: str) -> None:
        """Remove ``extension_path``'s server; servers of other extensions are left alone."""
        server = self.servers.get(name)
        if server is None or server.extension_path != extension_path:
            return
        del self.servers[name]
        self._changed()

    def list(self) -> list[dict[str, Any]]:
        return [server.to_json() for server in self.servers.values()]

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
