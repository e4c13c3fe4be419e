"""The bundled ``mcp`` extension: connects the servers of ``mcp.json`` and those extensions register.

It works like pi 1.6's built-in ``builtin:mcp`` (``extensions/mcp/index.ts``), on tau's public
extension API only:

- ``session_start`` reads the configuration, activates ``codemode`` or ``tool_search`` for servers
  whose tools are not declared, and connects every enabled server in the background, in parallel
  (the SDK is imported only then). Problems found at startup are reported once.
- Each connected server's tools are registered as ``mcp__<server>__<tool>`` with their exposure
  (:mod:`tau.bundled.mcp.registry`).
- ``before_agent_start`` waits (at most 10 seconds, once) for servers with ``direct`` tools, which
  the first request must declare, and keeps the ``mcp_servers`` section current.
- ``tool_call`` waits for the servers a call needs: its own server for a direct call, every server
  for the resource tools and for a tool whose ``reaches_tools`` says ``"all"``.
- ``mcp_servers_change`` connects servers registered later; ``session_shutdown`` stops them all.
- A server that fails, or dies after connecting, is reported once with its name and the log path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.bundled.mcp.config import McpConfig, ServerEntry, load_mcp_config, update_server_config
from tau.bundled.mcp.naming import mcp_namespace, rows_before_connect
from tau.bundled.mcp.registry import RESOURCE_TOOL_NAMES, McpToolRegistry
from tau.bundled.mcp.section import MCP_SERVERS_SECTION, configured_exposures, render_servers_section
from tau.common.dataclass import dataclass

__all__ = ["McpExtension", "describe_state"]

DEFAULT_STARTUP_WAIT = 10.0
CODEMODE_TOOL = "codemode"
TOOL_SEARCH_TOOL = "tool_search"
# For slow machines and tests: how long the first prompt waits for servers with direct tools.
STARTUP_WAIT_ENV = "TAU_MCP_STARTUP_WAIT"


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


@dataclass
class Server:
    """A server of the session: its entry, its connection once started, and its latest attempt."""

    entry: ServerEntry
    connection: Any = None
    ready: asyncio.Future[None] | None = None
    attempt: object | None = None
    registered_config: str | None = None
    reported_closed: bool = False

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def config(self) -> dict[str, Any]:
        return self.entry.config

    @property
    def enabled(self) -> bool:
        return self.entry.enabled

    @property
    def instructions(self) -> str | None:
        return getattr(self.connection, "instructions", None)


def describe_state(server: Server, with_error: bool = True) -> str:
    """Short state for lists and reports."""
    if not server.enabled:
        return "disabled"
    connection = server.connection
    if connection is None:
        return "starting"
    state = connection.state
    if state == "needs-auth":
        return "needs sign-in"
    if state == "failed":
        return f"failed: {_first_line(connection.error or 'unknown error')}" if with_error else "failed"
    if state == "connected":
        count = len(connection.tools)
        return f"connected · {count} tool{'' if count == 1 else 's'}{' · resources' if connection.has_resources else ''}"
    if state == "connecting":
        return "connecting…"
    return state


@dataclass
class McpExtension:
    """The state of one loaded ``mcp`` extension (one per runner; a session switch starts it again)."""

    tau: Any
    servers: list[Server] = field(default_factory=list)
    configured: list[ServerEntry] = field(default_factory=list)
    config_errors: list[str] = field(default_factory=list)
    overridden: list[str] = field(default_factory=list)
    project_config: str | None = None
    auto_enable_codemode: bool = True
    cwd: str = "."
    warned_unreachable: bool = False
    waited_for_startup: bool = False
    pending: asyncio.Future[None] | None = None
    alive: bool = False
    startup_wait: float = DEFAULT_STARTUP_WAIT
    _log: Any = None
    _credentials: Any = None
    tools: McpToolRegistry = field(init=False)
    # The stored tokens of each server waiting for a sign-in, as they were when it began waiting:
    # ``tau mcp login`` in another process (the agent may run it) changes them.
    tokens_at_sign_in: dict[Any, str] = field(default_factory=dict)  # by connection

    def __post_init__(self) -> None:
        self.tools = McpToolRegistry(self.tau, lambda: self.servers)
        wait = os.environ.get(STARTUP_WAIT_ENV)
        with contextlib.suppress(ValueError):
            if wait:
                self.startup_wait = max(0.0, float(wait))

    # -- places ----------------------------------------------------------------------------------

    @property
    def agent_dir(self) -> Path:
        return Path(self.tau.agent_dir)

    @property
    def log_path(self) -> Path:
        return self.agent_dir / "mcp.log"

    def log(self) -> Any:
        if self._log is None:
            from tau.bundled.mcp.log import McpServerLog

            self._log = McpServerLog(self.log_path)
        return self._log

    def credentials(self) -> Any:
        if self._credentials is None:
            from tau.bundled.mcp.oauth import McpCredentialStore

            self._credentials = McpCredentialStore(self.agent_dir / "mcp-auth.json")
        return self._credentials

    def find(self, name: str) -> Server | None:
        return next((server for server in self.servers if server.name == name), None)

    # -- reaching indirect tools -----------------------------------------------------------------

    def ensure_discovery_active(self, ctx: Any) -> None:
        """Activate ``codemode`` (for ``codemode`` exposure, unless ``autoEnableCodemode`` is false) or
        ``tool_search`` (for ``deferred``), when a tool of that name reaches other tools; warn once
        when neither is active and the indirect tools cannot be called."""
        exposures: set[str] = set()
        for server in self.servers:
            if server.enabled:
                exposures |= configured_exposures(server.config)
        needs_codemode, needs_search = "codemode" in exposures, "deferred" in exposures
        if not needs_codemode and not needs_search:
            return
        tools = self.tau.get_all_tools()

        def reaching(name: str) -> bool:
            return any(tool["name"] == name and tool.get("reachesTools") for tool in tools)

        has_codemode, has_search = reaching(CODEMODE_TOOL), reaching(TOOL_SEARCH_TOOL)
        active = list(self.tau.get_active_tools())
        activate = []
        if needs_codemode and has_codemode and self.auto_enable_codemode and CODEMODE_TOOL not in active:
            activate.append(CODEMODE_TOOL)
        if needs_search and has_search and TOOL_SEARCH_TOOL not in active:
            activate.append(TOOL_SEARCH_TOOL)
        if activate:
            self.tau.set_active_tools([*active, *activate])
        reachable = [*active, *activate]
        if (has_codemode and CODEMODE_TOOL in reachable) or (has_search and TOOL_SEARCH_TOOL in reachable):
            return
        if self.warned_unreachable:
            return
        self.warned_unreachable = True
        reason = (
            " (autoEnableCodemode is false)"
            if needs_codemode and has_codemode and not self.auto_enable_codemode
            else ""
        )
        self._notify(
            ctx,
            "MCP tools are only reachable from the codemode or tool_search tool, but neither is active"
            f"{reason}; they cannot be called.",
            "warning",
        )

    # -- connections -----------------------------------------------------------------------------

    def _provider_token(self, ctx: Any) -> Any:
        def token(provider: str) -> str | None:
            registry = getattr(ctx, "model_registry", None)
            getter = getattr(registry, "get_api_key_for_provider", None)
            return getter(provider) if getter is not None else None

        return token

    def _create_connection(self, server: Server, ctx: Any, is_current: Any) -> Any:
        from tau.bundled.mcp.connection import McpServerConnection
        from tau.extension import VERSION

        def on_tools(connection: Any) -> None:
            if is_current():
                self.tools.register(connection)

        def on_change(connection: Any) -> None:
            if not is_current():
                self.tokens_at_sign_in.pop(connection, None)
                return
            if connection.state != "needs-auth":
                self.tokens_at_sign_in.pop(connection, None)
            elif connection not in self.tokens_at_sign_in:
                self.tokens_at_sign_in[connection] = self._stored_tokens(connection)
            self._connection_changed(server, connection, ctx)

        connection = McpServerConnection(
            server.name,
            server.config,
            self.cwd,
            log=self.log(),
            on_tools=on_tools,
            on_change=on_change,
            auth=self.credentials().auth_for(server.name) if server.config.get("url") else None,
            provider_token=self._provider_token(ctx),
            version=VERSION,
        )
        server.connection = connection
        return connection

    def _stored_tokens(self, connection: Any) -> str:
        url = connection.oauth_url
        try:
            tokens = self.credentials().tokens(connection.name, url) if url else None
        except (OSError, ValueError):  # an unreadable store: no sign-in to pick up
            tokens = None
        return json.dumps(tokens, sort_keys=True)

    async def on_turn_start(self, event: Any, ctx: Any) -> None:
        """Reconnect the servers waiting for a sign-in whose tokens were stored since (a ``tau mcp
        login`` in another process), so the turn's request declares their tools."""
        if not self.tokens_at_sign_in:
            return
        signed_in = [
            connection
            for connection, tokens in list(self.tokens_at_sign_in.items())
            if self._stored_tokens(connection) != tokens
        ]
        if not signed_in:
            return
        for connection in signed_in:
            self.tokens_at_sign_in.pop(connection, None)
        servers = [server for server in self.servers if server.connection in signed_in]
        await asyncio.gather(*(self.reconnect(server) for server in servers))
        self.ensure_discovery_active(ctx)

    def _connection_changed(self, server: Server, connection: Any, ctx: Any) -> None:
        """A server that dies after connecting is reported once, with its name and the log."""
        if connection.state == "connected":
            return
        if connection.state == "disconnected" and not server.reported_closed and self.alive:
            server.reported_closed = True
            detail = _first_line(connection.error or "Connection closed")
            self._notify(
                ctx,
                f'MCP server "{server.name}" disconnected ({detail}); it reconnects on the next call. '
                f"Server log: {self.log_path}",
                "warning",
            )

    def start_connection(self, server: Server, ctx: Any, after: Any = None) -> asyncio.Future[None]:
        """Connect ``server`` in the background; ``server.ready`` settles when it connected or failed."""
        attempt = object()
        server.attempt = attempt

        def is_current() -> bool:
            return self.alive and server.attempt is attempt and server.enabled and server in self.servers

        async def run() -> None:
            if after is not None:
                await after
            if not is_current():
                return
            connection = self._create_connection(server, ctx, is_current)
            with contextlib.suppress(Exception):  # the state holds the failure
                await connection.get_client()

        ready = asyncio.ensure_future(run())
        server.ready = ready
        return ready

    async def wait_for(self, waiting: list[Server], signal: Any = None) -> None:
        """Wait for the latest connection attempts of ``waiting`` (or an abort)."""
        while True:
            pending = [
                s
                for s in waiting
                if s.enabled and s in self.servers and s.ready is not None and not s.ready.done()
            ]
            if not pending or (signal is not None and signal.aborted):
                return
            futures: set[asyncio.Future[Any]] = {
                asyncio.ensure_future(asyncio.shield(s.ready)) for s in pending if s.ready
            }
            if signal is not None:
                futures.add(asyncio.ensure_future(signal.wait()))
            _done, rest = await asyncio.wait(
                futures, return_when=asyncio.ALL_COMPLETED if signal is None else asyncio.FIRST_COMPLETED
            )
            for future in rest:
                future.cancel()
            if signal is not None and signal.aborted:
                return

    def report_problems(self, ctx: Any, only: list[Server] | None = None) -> None:
        """One message for everything that needs the user after startup (or for ``only``)."""
        lines = [] if only is not None else [f"config: {error}" for error in self.config_errors]
        for server in only if only is not None else self.servers:
            state = getattr(server.connection, "state", None)
            if state in ("needs-auth", "failed"):
                lines.append(f"{server.name}: {describe_state(server)}")
        if not lines:
            return
        listed = "\n".join(f"  {line}" for line in lines)
        self._notify(
            ctx,
            f"MCP servers need attention:\n{listed}\nRun /mcp to fix. Server log: {self.log_path}",
            "warning",
        )

    def _notify(self, ctx: Any, message: str, level: str) -> None:
        with contextlib.suppress(Exception):  # a ctx gone stale after a session switch
            ctx.ui.notify(message, level)

    # -- registered servers ----------------------------------------------------------------------

    def registered_servers(self) -> tuple[list[Server], list[str]]:
        """Servers extensions registered, except names ``mcp.json`` defines (those win)."""
        found: list[Server] = []
        overridden: list[str] = []
        for registered in self.tau.get_mcp_servers():
            name, config, path = registered["name"], registered["config"], registered["extensionPath"]
            configured = next(
                (e for e in self.configured if mcp_namespace(e.name) == mcp_namespace(name)), None
            )
            if configured is not None:
                overridden.append(
                    f'"{name}" registered by {path} is overridden by "{configured.name}" in {configured.source}'
                )
                continue
            found.append(
                Server(
                    ServerEntry(name, config, path, "extension"),
                    registered_config=json.dumps(config, sort_keys=True),
                )
            )
        return found, overridden

    # -- handlers --------------------------------------------------------------------------------

    async def on_session_start(self, event: Any, ctx: Any) -> None:
        await self.close_all()
        loaded: McpConfig = load_mcp_config(self.agent_dir, ctx.cwd, bool(ctx.is_project_trusted()))
        self.config_errors = loaded.errors
        self.project_config = loaded.project_config
        self.auto_enable_codemode = (
            loaded.auto_enable_codemode if loaded.auto_enable_codemode is not None else True
        )
        self.warned_unreachable = False
        self.waited_for_startup = False
        self.cwd = ctx.cwd
        self.alive = True
        self.configured = loaded.servers
        registered, self.overridden = self.registered_servers()
        self.servers = [Server(entry) for entry in loaded.servers] + registered
        self.ensure_discovery_active(ctx)
        enabled = [server for server in self.servers if server.enabled]
        if not enabled:
            self.report_problems(ctx)
            return

        async def after_first_turn() -> None:
            await asyncio.sleep(0)  # the first render happens before the SDK loads and servers start

        gate = asyncio.ensure_future(after_first_turn())
        attempts = [self.start_connection(server, ctx, gate) for server in enabled]

        async def report() -> None:
            await asyncio.gather(*attempts, return_exceptions=True)
            if self.alive:
                self.report_problems(ctx)

        self.pending = asyncio.ensure_future(report())

    async def on_before_agent_start(self, event: Any, ctx: Any) -> None:
        await self._wait_for_direct_servers(ctx)
        sections = event.system_prompt_options.setdefault("sections", {})
        section = render_servers_section(self.servers)
        if section:
            sections[MCP_SERVERS_SECTION] = section
        else:
            sections.pop(MCP_SERVERS_SECTION, None)

    async def _wait_for_direct_servers(self, ctx: Any) -> None:
        """The first prompt waits for servers whose tools are declared, but not for ever."""
        if self.waited_for_startup:
            return
        self.waited_for_startup = True
        ready = [
            server.ready
            for server in self.servers
            if server.enabled and "direct" in configured_exposures(server.config) and server.ready is not None
        ]
        if not ready:
            return
        _done, pending = await asyncio.wait(
            [asyncio.shield(future) for future in ready], timeout=self.startup_wait
        )
        for future in pending:
            future.cancel()
        if pending:
            self._notify(
                ctx, "MCP servers are still connecting; their tools become available once connected.", "info"
            )

    async def on_tool_call(self, event: Any, ctx: Any) -> None:
        """Wait for the servers the call needs, so their tools are registered before it runs."""
        waiting_for = [server for server in self.servers if server.enabled and server.ready is not None]
        if not waiting_for:
            return
        tool = next((t for t in self.tau.get_all_tools() if t["name"] == event.tool_name), None)
        if tool is None:
            return
        reaches = tool.get("reachesTools")
        if callable(reaches):
            reach = reaches(event.input)
            if reach != "all":
                words = list(reach or [])
                waiting_for = [s for s in waiting_for if any(mcp_namespace(s.name) in word for word in words)]
        elif event.tool_name not in RESOURCE_TOOL_NAMES:
            owner = self.tools.owner(event.tool_name)
            waiting_for = [s for s in waiting_for if s.name == owner]
        await self.wait_for(waiting_for, getattr(ctx, "signal", None))

    async def on_mcp_servers_change(self, event: Any, ctx: Any) -> None:
        """Servers registered or unregistered during the session connect or disconnect at once."""
        if not self.alive:
            return
        registered, self.overridden = self.registered_servers()
        latest = {server.name: server for server in registered}
        removed = [
            server
            for server in self.servers
            if server.entry.scope == "extension"
            and getattr(latest.get(server.name), "registered_config", None) != server.registered_config
        ]
        self.servers = [server for server in self.servers if server not in removed]
        for server in removed:
            self.tools.hide_tools(server.name)
        added = [server for server in registered if self.find(server.name) is None]
        self.servers.extend(added)
        self.ensure_discovery_active(ctx)
        await asyncio.gather(
            *(server.connection.close() for server in removed if server.connection is not None)
        )
        connecting = [server for server in added if server.enabled]
        if not connecting or not self.alive:
            return
        await asyncio.gather(*(self.start_connection(server, ctx) for server in connecting))
        if self.alive:
            self.report_problems(ctx, connecting)

    async def on_session_shutdown(self, event: Any, ctx: Any) -> None:
        await self.close_all()

    async def close_all(self) -> None:
        self.alive = False
        closing = [server.connection for server in self.servers if server.connection is not None]
        for server in self.servers:
            server.attempt = None
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        await asyncio.gather(*(connection.close() for connection in closing), return_exceptions=True)

    # -- changes from /mcp -----------------------------------------------------------------------

    def save_config(self, server: Server, patch: dict[str, Any], in_project: bool = False) -> str | None:
        """Save an ``enabled``/``exposure`` change; an error message when the file could not be written.
        Registered servers change for this session only; ``in_project`` adds a project override."""
        override = self.project_config if in_project else server.entry.override
        entry = ServerEntry(server.name, server.config, server.entry.source, server.entry.scope, override)
        if entry.scope != "extension":
            path = entry.override or entry.source
            try:
                update_server_config(path, entry.name, patch, override=entry.override is not None)
            except (OSError, ValueError) as exc:
                return f"Could not update {path}: {exc}"
        server.entry = ServerEntry(
            entry.name, {**entry.config, **patch}, entry.source, entry.scope, entry.override
        )
        return None

    async def set_enabled(
        self, server: Server, enabled: bool, ctx: Any, in_project: bool = False
    ) -> str | None:
        failed = self.save_config(server, {"enabled": enabled}, in_project)
        if failed:
            return failed
        if not enabled:
            connection, server.connection, server.attempt = server.connection, None, None
            self.tools.hide_tools(server.name)
            if connection is not None:
                await connection.close()
            return None
        await self.start_connection(server, ctx)
        self.ensure_discovery_active(ctx)
        return None

    def set_exposure(self, server: Server, exposure: str, ctx: Any) -> str | None:
        failed = self.save_config(server, {"exposure": exposure})
        if failed:
            return failed
        if server.connection is not None and server.connection.state == "connected":
            self.tools.register(server.connection)
        self.tools.sync_resource_tools()
        # Tools no longer exposed directly leave the declared set; direct tools activate on registration.
        indirect = {tool["name"] for tool in self.tau.get_all_tools() if tool.get("exposure") != "direct"}
        mine = self.tools.server_tools.get(server.name, set())
        self.tau.set_active_tools(
            [name for name in self.tau.get_active_tools() if name not in mine or name not in indirect]
        )
        self.ensure_discovery_active(ctx)
        return None

    async def reconnect(self, server: Server) -> str | None:
        connection = server.connection
        if connection is None:
            return f'MCP server "{server.name}" is disabled.'
        previous = server.ready

        async def run() -> None:
            if previous is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.shield(previous)
            await connection.reconnect()

        ready = asyncio.ensure_future(run())
        server.ready = ready
        try:
            await ready
        except Exception as exc:
            return str(exc)
        return None

    def register(self) -> None:
        """Subscribe the handlers and the ``/mcp`` command."""
        from tau.bundled.mcp.command import register_command

        self.tau.on("session_start", self.on_session_start)
        self.tau.on("before_agent_start", self.on_before_agent_start)
        self.tau.on("tool_call", self.on_tool_call)
        self.tau.on("turn_start", self.on_turn_start)
        self.tau.on("mcp_servers_change", self.on_mcp_servers_change)
        self.tau.on("session_shutdown", self.on_session_shutdown)
        # A resumed session draws its MCP calls before (or without) their server connecting.
        self.tau.register_tool_renderer(rows_before_connect)
        register_command(self)
