"""The extension runner: the loaded extensions and everything the session and the modes ask of them.

It implements :class:`tau.agent.session_hooks.SessionHooks` (the emit methods live in
:mod:`tau.extension.dispatch`), hands registered tools to the session, resolves commands, and
reports extension failures (:meth:`ExtensionRunner.emit_error`).
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Callable
from typing import Any, cast

from tau.agent.hooks import resolve
from tau.extension.context import (
    ExtensionCommandContext,
    ExtensionContext,
    ExtensionToolContext,
    fire_and_forget,
)
from tau.extension.context_copies import ContextCopies
from tau.extension.dispatch import HookDispatch, error_text
from tau.extension.events import Event, event_from_payload
from tau.extension.mcp_servers import McpServerRegistry
from tau.extension.registry import EventBus, Extension, RegisteredCommand, resolve_commands
from tau.extension.ui import ExtensionUI, PromptTrackingUI, ui_for_mode
from tau.llm.stream import AbortSignal
from tau.tools.base import ToolContext, ToolDefinition, ToolResult, UpdateCallback

__all__ = ["EventBus", "Extension", "ExtensionRunner", "RegisteredCommand"]

ErrorListener = Callable[[dict[str, Any]], None]

_STALE = (
    "This extension ctx is stale after session replacement or reload. Do not keep a tau or command ctx "
    "across ctx.new_session(), ctx.fork() or a reload."
)


def _has_renderers(value: Any) -> bool:
    return value is not None and any(getattr(value, n, None) for n in ("render_call", "render_result"))


def _as_renderers(value: Any) -> Any:
    """A resolver's answer as an object with ``render_call``/``render_result`` (a dict is accepted)."""
    if isinstance(value, dict):
        value = types.SimpleNamespace(
            render_call=value.get("render_call"),
            render_result=value.get("render_result"),
            renders_collapsed=bool(value.get("renders_collapsed")),
        )
    return value if _has_renderers(value) else None


class ExtensionRunner(HookDispatch):
    """Holds the loaded extensions and dispatches the session's events to them.

    Args:
        cwd: The session's working directory (``ctx.cwd``).
        mode: ``"tui" | "rpc" | "json" | "print" | "sdk"`` (``ctx.mode``).
        ui: The mode's :class:`ExtensionUI`; the non-interactive one of ``mode`` by default.
        trusted: Whether the project is trusted (``ctx.is_project_trusted()``).
    """

    def __init__(
        self, *, cwd: str = ".", mode: str = "print", ui: ExtensionUI | None = None, trusted: bool = False
    ) -> None:
        self.extensions: list[Extension] = []
        self.context_copies = ContextCopies()
        self.cwd = cwd
        self.mode = mode
        self.ui: ExtensionUI = ui or ui_for_mode(mode)
        self.trusted = trusted
        self.flag_values: dict[str, Any] = {}
        self.load_errors: list[dict[str, str]] = []
        self.load_warnings: list[str] = []  # startup warnings (a replaced built-in, an unknown name)
        self._host: Any = None
        self._error_listeners: list[ErrorListener] = []
        self._stale: str | None = None
        self._shutdown_handler: Callable[[], Any] | None = None
        self.context_head_rebuilt = False
        self.event_bus = EventBus(self.emit_error)
        self.mcp_servers = McpServerRegistry()
        self._reported_mcp_servers: set[str] = set()

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def host(self) -> Any:
        """The bound session, or ``None`` before :meth:`bind`."""
        return self._host

    def bind(self, host: Any) -> None:
        """Attach to the session: install the runner as its hooks and hand it the registered tools."""
        self._host = host
        if getattr(host, "hooks", None) is not self and hasattr(host, "set_hooks"):
            host.set_hooks(self)
        for definition in self.registered_tools():
            host.register_tool(definition)
        # Servers registered from now on reach the extension that connects them at once; those
        # registered while loading are read on session_start (pi).
        self.mcp_servers.on_change = self._mcp_servers_changed

    # -- MCP servers -----------------------------------------------------------------------------

    def _mcp_servers_changed(self) -> None:
        fire_and_forget(self.emit({"type": "mcp_servers_change", "servers": self.mcp_servers.list()}))
        self.report_unhandled_mcp_servers()

    def report_unhandled_mcp_servers(self) -> None:
        """Report registered servers once when no extension handles ``mcp_servers_change``: nothing
        connects them (the bundled ``mcp`` extension is off or replaced)."""
        if self.has_handlers("mcp_servers_change"):
            return
        for server in self.mcp_servers.list():
            if server["name"] in self._reported_mcp_servers:
                continue
            self._reported_mcp_servers.add(server["name"])
            self.emit_error(
                server["extensionPath"],
                "register_mcp_server",
                f'MCP server "{server["name"]}" is registered, but no loaded extension connects MCP servers; '
                "another extension may have replaced the built-in MCP support",
            )

    def set_ui(self, ui: ExtensionUI, mode: str | None = None) -> None:
        """Install the UI of the running mode (the interactive and RPC modes bring their own).

        Its dialogs are announced to handlers as ``ui_prompt_start`` / ``ui_prompt_end``.
        """
        self.ui = PromptTrackingUI(ui, self)
        if mode is not None:
            self.mode = mode

    def set_shutdown_handler(self, handler: Callable[[], Any] | None) -> None:
        """What ``ctx.shutdown()`` calls; the mode installs it."""
        self._shutdown_handler = handler

    def request_shutdown(self) -> None:
        if self._shutdown_handler is not None:
            self._shutdown_handler()

    def invalidate(self, message: str = _STALE) -> None:
        """Mark every ctx and API object of these extensions stale (after a reload or session switch)."""
        self._stale = self._stale or message

    def assert_active(self) -> None:
        if self._stale:
            raise RuntimeError(self._stale)

    def require_host(self) -> Any:
        self.assert_active()
        if self._host is None:
            raise RuntimeError(
                "The session is not running yet: use ctx and session actions from handlers "
                "(for example session_start), not while the extension loads."
            )
        return self._host

    # -- errors --------------------------------------------------------------------------------

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Receive every ``{"type": "extension_error", "extensionPath", "event", "error"}``; returns an unsubscriber."""
        self._error_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._error_listeners:
                self._error_listeners.remove(listener)

        return unsubscribe

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        """Report a failure as ``{"type": "extension_error", "extensionPath", "event", "error"}``.

        It goes to the error listeners and to the session's event listeners (the JSON, RPC and
        interactive modes print it from there); with no error listener, pi's ``Extension error
        (<path>): <error>`` line goes to stderr in print mode (which does not listen), and in JSON
        mode for load failures (reported before the mode listens).
        """
        record = {"type": "extension_error", "extensionPath": extension, "event": event_type, "error": error}
        forward = getattr(self._host, "emit_event", None) or getattr(self._host, "_emit", None)
        if forward is not None:
            forward(dict(record))
        to_stderr = self.mode == "print" or (self.mode == "json" and event_type == "load")
        if to_stderr and not self._error_listeners:
            sys.stderr.write(f"Extension error ({extension}): {error}\n")
        for listener in list(self._error_listeners):
            try:
                listener(record)
            except Exception as exc:  # a broken listener must not take the run down
                sys.stderr.write(f"extension error listener failed: {error_text(exc)}\n")

    # -- contexts ------------------------------------------------------------------------------

    def create_context(self) -> ExtensionContext:
        return ExtensionContext(self)

    def create_tool_context(self, tool_call_id: str, signal: Any, tool_context: Any) -> ExtensionToolContext:
        return ExtensionToolContext(self, tool_call_id, signal, tool_context)

    def create_command_context(self) -> ExtensionCommandContext:
        return ExtensionCommandContext(self)

    # -- tools ---------------------------------------------------------------------------------

    def registered_tools(self) -> list[ToolDefinition]:
        """The extension tools, wrapped to receive an :class:`ExtensionToolContext`; first registration per name wins."""
        seen: dict[str, ToolDefinition] = {}
        for ext in self.extensions:
            for name, definition in ext.tools.items():
                if name not in seen:
                    seen[name] = self.wrap_tool(definition)
        return list(seen.values())

    def tool_owner(self, name: str) -> Extension | None:
        return next((ext for ext in self.extensions if name in ext.tools), None)

    def tool_info(self, definition: ToolDefinition) -> dict[str, Any]:
        """pi's ``ToolInfo`` for a registered definition, with the ``sourceInfo`` of whoever registered it."""
        owner = self.tool_owner(definition.name)
        if owner is None:
            source = {"path": f"builtin:{definition.name}", "source": "builtin"}
        else:
            source = {"path": owner.path, "source": owner.source}
        scope = {"project": "project", "user": "user", "package": "user"}.get(source["source"], "temporary")
        info: dict[str, Any] = {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
            "promptGuidelines": list(definition.prompt_guidelines),
            "exposure": definition.exposure,
        }
        if definition.namespace is not None:
            info["namespace"] = definition.namespace
        if definition.annotations:
            info["annotations"] = dict(definition.annotations)
        if definition.reaches_tools is not None:
            info["reachesTools"] = definition.reaches_tools
        info["sourceInfo"] = {**source, "scope": scope, "origin": "top-level"}
        return info

    def wrap_tool(self, definition: ToolDefinition) -> ToolDefinition:
        """The definition with an ``execute`` that hands the extension's ``execute`` an extension tool ctx."""
        inner = definition.execute

        async def execute(
            tool_call_id: str,
            params: dict[str, Any],
            signal: AbortSignal | None,
            on_update: UpdateCallback | None,
            ctx: ToolContext,
        ) -> ToolResult:
            # the extension ctx stands in for the tool context: what it lacks it takes from that one
            stand_in = cast("ToolContext", self.create_tool_context(tool_call_id, signal, ctx))
            result: ToolResult = await resolve(inner(tool_call_id, params, signal, on_update, stand_in))
            return result

        return dataclasses.replace(definition, execute=execute)

    def apply_tool(self, extension: Extension, definition: ToolDefinition) -> None:
        """Hand a tool registered after :meth:`bind` to the session (unless an earlier extension owns the name)."""
        if self._host is None or self.tool_owner(definition.name) is not extension:
            return
        self._host.register_tool(self.wrap_tool(definition))

    # -- commands ------------------------------------------------------------------------------

    def resolved_commands(self) -> list[RegisteredCommand]:
        """Every command in load order; names registered more than once become ``name:1``, ``name:2``, ..."""
        return resolve_commands(self.extensions)

    def get_command(self, name: str) -> RegisteredCommand | None:
        return next((c for c in self.resolved_commands() if c.invocation_name == name), None)

    def get_commands(self) -> list[dict[str, Any]]:
        """pi's ``SlashCommandInfo`` for the extension commands: ``{"name", "description", "source", "path"}``."""
        return [
            {
                "name": c.invocation_name,
                "description": c.description,
                "source": "extension",
                "path": c.extension_path,
            }
            for c in self.resolved_commands()
        ]

    async def execute_command(self, text: str) -> bool:
        """Run ``/name args`` if ``name`` is an extension command; ``False`` when it is not one.

        A failing handler is reported (``extensionPath: "command:<name>"``, event ``command``) and
        still counts as handled.
        """
        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        command = self.get_command(name)
        if command is None:
            return False
        try:
            await resolve(command.handler(args, self.create_command_context()))
        except Exception as exc:
            self.emit_error(f"command:{name}", "command", error_text(exc))
        return True

    # -- renderers and flags -----------------------------------------------------------------

    def get_message_renderer(self, custom_type: str) -> Callable[..., Any] | None:
        return next(
            (e.message_renderers[custom_type] for e in self.extensions if custom_type in e.message_renderers),
            None,
        )

    def get_entry_renderer(self, custom_type: str) -> Callable[..., Any] | None:
        return next(
            (e.entry_renderers[custom_type] for e in self.extensions if custom_type in e.entry_renderers),
            None,
        )

    def get_tool_renderer(self, name: str, definition: Any = None) -> Any:
        """What draws calls to tool ``name``: an object with ``render_call``/``render_result`` from the
        extensions' tool renderer resolvers (load order; each may defer to the rest with ``next()``),
        else ``definition`` when it has renderers of its own, else ``None``."""
        own = definition if _has_renderers(definition) else None
        resolvers = [(ext, r) for ext in self.extensions for r in ext.tool_renderers]

        def resolve_from(index: int) -> Any:
            if index == len(resolvers):
                return own
            extension, resolver = resolvers[index]
            try:
                found = resolver(name, lambda: resolve_from(index + 1))
            except Exception as exc:  # a broken resolver must not break the screen; the rest still draw
                self.emit_error(extension.path, "tool_renderer", error_text(exc))
                return resolve_from(index + 1)
            return _as_renderers(found)

        return resolve_from(0)

    def set_flag_value(self, name: str, value: Any) -> None:
        """The value given on the command line for an extension flag (``--name``)."""
        self.flag_values[name] = value

    def get_flags(self) -> dict[str, dict[str, Any]]:
        flags: dict[str, dict[str, Any]] = {}
        for ext in self.extensions:
            for name, flag in ext.flags.items():
                flags.setdefault(name, flag)
        return flags

    def get_shortcuts(self) -> dict[str, dict[str, Any]]:
        """Key → ``{"description", "handler", "extensionPath"}``; a later extension wins a clash, as in pi."""
        shortcuts: dict[str, dict[str, Any]] = {}
        for ext in self.extensions:
            for key, shortcut in ext.shortcuts.items():
                shortcuts[key.lower()] = shortcut
        return shortcuts

    def get_event(self, payload: dict[str, Any]) -> Event:
        """The dataclass a handler would receive for ``payload`` (for modes that run handlers themselves)."""
        return event_from_payload(payload)
