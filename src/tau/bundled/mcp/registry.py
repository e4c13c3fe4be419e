"""The MCP tools a session registered: their names, their owners, and the resource tools.

Each connected server's tools are registered as ``mcp__<server>__<tool>`` with their exposure; a
name, once given to a server's tool, stays that tool's. Withdrawn tools are registered again
``hidden`` (tools cannot be unregistered). The resource tools follow the widest exposure of the
servers with resources.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.bundled.mcp.config import ServerEntry
from tau.bundled.mcp.naming import create_tool_name, mcp_namespace
from tau.extension import get_mcp_tool_exposure

if TYPE_CHECKING:
    from tau.bundled.mcp.manager import Server

__all__ = ["RESOURCE_TOOL_NAMES", "McpToolRegistry"]

# The resource tools; their definitions (and the result conversion) load with the first server.
RESOURCE_TOOL_NAMES = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})


class McpToolRegistry:
    """The tools registered for the servers ``servers()`` returns, through ``tau.register_tool``."""

    def __init__(self, tau: Any, servers: Callable[[], list[Server]]) -> None:
        self.tau = tau
        self._servers = servers
        # Tool name -> "<server>\0<tool>", so names stay unique and stable; tools offered per server;
        # the last definition per name, to re-register withdrawn tools hidden.
        self.tool_owners: dict[str, str] = {}
        self.server_tools: dict[str, set[str]] = {}
        self.definitions: dict[str, Any] = {}
        self.resource_exposure: str | None = None

    def _find(self, name: str) -> Server | None:
        return next((server for server in self._servers() if server.name == name), None)

    def owner(self, tool_name: str) -> str:
        """The server whose tool ``tool_name`` is (``""`` for a name no server's tool has)."""
        return self.tool_owners.get(tool_name, "").split("\0", 1)[0]

    def register(self, connection: Any) -> None:
        """Register (again) the tools ``connection``'s server offers; withdraw the ones it dropped."""
        from tau.bundled.mcp.tools import create_tool_definition

        name = connection.name
        server = self._find(name)
        entry = server.entry if server is not None else ServerEntry(name, connection.entry_config, "")
        description = (entry.config.get("description") or "").strip()
        namespace: dict[str, Any] = {"name": mcp_namespace(name), "aliases": [name]}
        if description:
            namespace["description"] = description
        if connection.instructions:
            namespace["instructions"] = connection.instructions
        previous = self.server_tools.get(name, set())
        current: set[str] = set()
        offered = list(dict.fromkeys(tool["name"] for tool in connection.tools))
        plain = [create_tool_name(name, tool) for tool in offered]

        def assign(tool: str) -> str:
            owner = f"{name}\0{tool}"

            def taken(candidate: str) -> bool:
                existing = self.tool_owners.get(candidate)
                # Tools whose names sanitize alike all get the hash suffix, whatever the list order.
                return (
                    (existing is not None and existing != owner)
                    or candidate in current
                    or plain.count(candidate) > 1
                )

            tool_name = create_tool_name(name, tool, taken)
            self.tool_owners[tool_name] = owner
            current.add(tool_name)
            return tool_name

        for tool in connection.tools:
            if not isinstance(tool.get("name"), str):
                continue
            definition = create_tool_definition(
                server=name,
                tool=tool,
                name=assign(tool["name"]),
                exposure=get_mcp_tool_exposure(entry.config, tool["name"]),
                namespace=namespace,
                get_connection=self._connection_getter(name, tool["name"]),
                readable=functools.partial(self._reads_resources, name),
            )
            self.definitions[definition.name] = definition
            self.tau.register_tool(definition)
        self.server_tools[name] = current
        for tool_name in previous - current:
            self._withdraw(tool_name)
        self.sync_resource_tools()

    def _withdraw(self, tool_name: str) -> None:
        import dataclasses

        definition = self.definitions.get(tool_name)
        if definition is not None and definition.exposure != "hidden":
            hidden = dataclasses.replace(definition, exposure="hidden")
            self.definitions[tool_name] = hidden
            self.tau.register_tool(hidden)

    def hide_tools(self, server: str) -> None:
        """Make a disabled or removed server's tools unreachable."""
        for tool_name in self.server_tools.get(server, set()):
            self._withdraw(tool_name)
        self.server_tools[server] = set()
        self.sync_resource_tools()

    def _connection_getter(self, server: str, tool: str) -> Any:
        async def get() -> Any:
            # Resolved at call time: a call prepared before a disable/enable runs on the new connection.
            current = self._find(server)
            if current is None or not current.enabled:
                raise RuntimeError(f'MCP server "{server}" is disabled.')
            connection = current.connection
            if connection is None:
                raise RuntimeError(f'MCP server "{server}" is still starting.')
            offered = any(item.get("name") == tool for item in connection.tools)
            if get_mcp_tool_exposure(current.config, tool) == "hidden" or (
                connection.state == "connected" and not offered
            ):
                raise RuntimeError(f'MCP tool "{server}/{tool}" is no longer available.')
            return connection

        return get

    def servers_with_resources(self) -> list[Server]:
        return [
            server
            for server in self._servers()
            if server.connection is not None
            and server.connection.has_resources
            and server.enabled
            and server.entry.exposure != "hidden"
        ]

    def resource_connections(self) -> list[Any]:
        return [server.connection for server in self.servers_with_resources()]

    def _reads_resources(self, server_name: str) -> bool:
        return any(c.name == server_name for c in self.resource_connections())

    def sync_resource_tools(self) -> None:
        """Register the resource tools with the widest exposure of the servers they reach."""
        exposures = {server.entry.exposure for server in self.servers_with_resources()}
        chosen = next(
            (exposure for exposure in ("direct", "codemode", "deferred") if exposure in exposures), "hidden"
        )
        if chosen == self.resource_exposure or (self.resource_exposure is None and chosen == "hidden"):
            return
        from tau.bundled.mcp.resources import create_resource_tool_definitions

        was_direct = self.resource_exposure == "direct"
        self.resource_exposure = chosen
        definitions = create_resource_tool_definitions(chosen, self.resource_connections)
        for definition in definitions:
            self.tau.register_tool(definition)
        if was_direct:
            self.tau.set_active_tools(
                [name for name in self.tau.get_active_tools() if name not in RESOURCE_TOOL_NAMES]
            )
