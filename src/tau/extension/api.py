"""The object an extension's factory receives: ``def extension(tau): ...`` (pi's ``ExtensionAPI``).

Registrations (``on``, ``register_tool``, ``register_command``, ...) work while the extension loads
and at any time later; tools registered before the session is bound are handed to it on bind.
Actions (``send_message``, ``append_entry``, ``set_active_tools``, ...) need the running session:
call them from handlers, commands and tools.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.agent.hooks import resolve
from tau.common.paths import agent_dir
from tau.extension.context import fire_and_forget
from tau.extension.exec import DEFAULT_MAX_BUFFER, ExecResult, exec_command
from tau.extension.runner import EventBus, Extension, RegisteredCommand
from tau.tools.base import ToolDefinition

if TYPE_CHECKING:
    from tau.extension.runner import ExtensionRunner

__all__ = ["ExtensionAPI"]


class _ExtensionEvents:
    """``tau.events``: the bus shared by all extensions, with failures reported under this extension."""

    def __init__(self, bus: EventBus, owner: str) -> None:
        self._bus = bus
        self._owner = owner

    def on(self, channel: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        return self._bus.on(channel, handler, owner=self._owner)

    async def emit(self, channel: str, data: Any = None) -> None:
        await self._bus.emit(channel, data)


class ExtensionAPI:
    """What ``extension(tau)`` is given. One per extension; ``tau.path`` names it in error reports."""

    def __init__(self, runner: ExtensionRunner, extension: Extension) -> None:
        self._runner = runner
        self._extension = extension
        self.events = _ExtensionEvents(runner.event_bus, extension.path)

    # -- identity and places -----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The extension's path or name as error reports show it."""
        return self._extension.path

    @property
    def cwd(self) -> str:
        """The session's working directory."""
        return self._runner.cwd

    @property
    def agent_dir(self) -> Path:
        """tau's agent dir (``$TAU_AGENT_DIR`` or ``~/.tau/agent``)."""
        return agent_dir()

    def _host(self) -> Any:
        return self._runner.require_host()

    # -- events ------------------------------------------------------------------------------

    def on(self, event: str, handler: Callable[[Any, Any], Any]) -> Callable[[], None]:
        """Call ``handler(event, ctx)`` (``def`` or ``async def``) on ``event``; returns an unsubscriber."""
        self._runner.assert_active()
        if not callable(handler):
            raise TypeError(f"tau.on({event!r}, handler): handler must be callable, got {handler!r}")
        return self._runner.add_handler(self._extension, event, handler)

    # -- registration ------------------------------------------------------------------------

    def register_tool(self, definition: ToolDefinition) -> None:
        """Offer a tool to the model. A built-in name (``bash``, ``edit``, ...) replaces the built-in."""
        self._runner.assert_active()
        if not isinstance(definition, ToolDefinition):
            raise TypeError(
                f"register_tool takes a tau.extension.ToolDefinition, got {type(definition).__name__}"
            )
        if not isinstance(definition.parameters, dict):
            raise ValueError(
                f'Tool "{definition.name}" registered by extension "{self.path}" must define an object '
                "parameter schema (a JSON Schema dict)."
            )
        self._extension.tools[definition.name] = definition
        self._runner.apply_tool(self._extension, definition)

    def register_command(
        self,
        name: str,
        description: str = "",
        handler: Callable[[str, Any], Any] | None = None,
        *,
        get_argument_completions: Callable[[str], Any] | None = None,
    ) -> None:
        """Add ``/name``; ``handler(args, ctx)`` gets the text after the name and a command ctx.

        The same name from two extensions becomes ``/name:1`` and ``/name:2``.
        """
        self._runner.assert_active()
        if not isinstance(name, str) or not name:
            raise ValueError(
                f'Command registered by extension "{self.path}" must have a non-empty string name: '
                'tau.register_command("name", "description", handler).'
            )
        if not callable(handler):
            raise ValueError(f'Command "/{name}" registered by extension "{self.path}" must have a handler.')
        self._extension.commands[name] = RegisteredCommand(
            name, handler, description, self.path, get_argument_completions
        )

    def register_shortcut(self, key: str, handler: Callable[[Any], Any], description: str = "") -> None:
        """Bind a key in the interactive mode; ``handler(ctx)`` runs when it is pressed."""
        self._runner.assert_active()
        self._extension.shortcuts[key] = {
            "description": description,
            "handler": handler,
            "extensionPath": self.path,
        }

    def register_flag(
        self, name: str, *, type: str = "boolean", default: Any = None, description: str = ""
    ) -> None:
        """Declare a command-line flag ``--name`` (``type``: ``"boolean"`` or ``"string"``)."""
        self._runner.assert_active()
        expected = bool if type == "boolean" else str
        if default is not None and not isinstance(default, expected):
            raise ValueError(f'Invalid default for flag "{name}": expected {type}, got {default!r}')
        self._extension.flags[name] = {
            "name": name,
            "type": type,
            "default": default,
            "description": description,
            "extensionPath": self.path,
        }
        if default is not None:
            self._runner.flag_values.setdefault(name, default)

    def get_flag(self, name: str) -> Any:
        """The flag's value (its default unless given on the command line); ``None`` for flags of other extensions."""
        if name not in self._extension.flags:
            return None
        return self._runner.flag_values.get(name)

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """Render ``custom_message`` entries of ``custom_type`` in the interactive mode."""
        self._extension.message_renderers[custom_type] = renderer

    def register_entry_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """Render ``custom`` entries of ``custom_type`` in the interactive mode."""
        self._extension.entry_renderers[custom_type] = renderer

    def register_tool_renderer(self, resolver: Callable[[str, Callable[[], Any]], Any]) -> None:
        """Choose how calls to any tool are drawn in the interactive mode, also tools not registered
        (yet), such as MCP tools in a resumed session before their server connected (pi
        ``registerToolRenderer``).

        ``resolver(tool_name, next)`` returns an object (or dict) with ``render_call`` and/or
        ``render_result``, or ``None``; ``next()`` returns what the later resolvers (in load order),
        then the registered tool, would use, so ``next() or mine`` only fills in.
        """
        self._extension.tool_renderers.append(resolver)

    # -- MCP servers ---------------------------------------------------------------------------

    def register_mcp_server(self, name: str, config: dict[str, Any]) -> None:
        """Add an MCP server for this session, shaped like an ``mcpServers`` entry of ``mcp.json``.

        Registered while loading, it connects on ``session_start`` with the configured servers;
        later, at once. Registering the name again replaces this extension's registration; a server
        of the same name in ``mcp.json`` wins. Raises ``ValueError`` for invalid configs and for names
        another extension registered.
        """
        self._runner.assert_active()
        self._runner.mcp_servers.register(name, config, self.path)

    def unregister_mcp_server(self, name: str) -> None:
        """Remove a server this extension registered (its connection closes, its tools become unreachable)."""
        self._runner.assert_active()
        self._runner.mcp_servers.unregister(name, self.path)

    def get_mcp_servers(self) -> list[dict[str, Any]]:
        """Every server extensions registered: ``{"name", "config", "extensionPath"}`` (copies)."""
        self._runner.assert_active()
        return self._runner.mcp_servers.list()

    # -- actions -----------------------------------------------------------------------------

    def _run_reported(self, value: Any, event: str) -> None:
        """Start the session's work; a failure is reported as pi does (``<runtime>``, ``event``)."""
        fire_and_forget(
            value, lambda exc: self._runner.emit_error("<runtime>", event, str(exc) or type(exc).__name__)
        )

    def send_message(
        self, message: dict[str, Any], *, trigger_turn: bool | None = None, deliver_as: str | None = None
    ) -> None:
        """Add a custom message ``{"customType", "content", "display", "details"?}`` (pi-host §4.4).

        ``deliver_as``: ``"steer"``, ``"followUp"`` or ``"nextTurn"``. While a run streams it is
        steered in unless ``trigger_turn=False`` (then it is appended after the current turn); when
        idle it is appended, and with ``trigger_turn=True`` starts a run. The default (``None``) is
        pi's ``undefined``.
        """
        host = self._host()
        self._run_reported(
            host.send_custom_message(message, trigger_turn=trigger_turn, deliver_as=deliver_as),
            "send_message",
        )

    def send_user_message(
        self, content: str | list[dict[str, Any]], *, deliver_as: str | None = None
    ) -> None:
        """Send a user message as if typed (``deliver_as`` ``"steer"``/``"followUp"`` while streaming)."""
        host = self._host()
        self._run_reported(host.send_user_message(content, deliver_as=deliver_as), "send_user_message")

    def append_entry(self, custom_type: str, data: Any = None) -> str | None:
        """Persist a ``custom`` entry (never sent to the model); returns its id."""
        return self._host().append_custom_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._host().set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._host().get_session_name()

    def set_label(self, entry_id: str, label: str | None = None) -> None:
        """Label an entry (``None`` clears the label)."""
        self._host().set_label(entry_id, label)

    async def exec(
        self,
        command: str,
        args: list[str] | tuple[str, ...] = (),
        *,
        cwd: str | None = None,
        timeout: float | None = None,
        signal: Any = None,
        max_buffer: int = DEFAULT_MAX_BUFFER,
    ) -> ExecResult:
        """Run a program without a shell (``timeout`` in seconds); see :func:`tau.extension.exec_command`."""
        return await exec_command(
            command, args, cwd=cwd or self._runner.cwd, timeout=timeout, signal=signal, max_buffer=max_buffer
        )

    # -- tools, settings, commands -------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        """The names of the tools declared to the model."""
        return list(self._host().get_active_tool_names())

    def set_active_tools(self, names: list[str]) -> None:
        """Declare exactly these tools from the next request on (unknown names are ignored)."""
        self._host().set_active_tools(list(names))

    def get_all_tools(self) -> list[dict[str, Any]]:
        """Every registered tool as pi's ``ToolInfo``: ``{"name", "description", "parameters",
        "promptGuidelines", "exposure", "namespace"?, "sourceInfo": {"path", "source", "scope", "origin"}}``.

        ``sourceInfo.source`` is ``builtin`` for tau's own tools, else the loading extension's source
        (``cli``, ``project``, ``user``, ``package``, ``bundled``, ``inline``) with its ``path``.
        """
        return [self._runner.tool_info(definition) for definition in self._host().get_all_tools()]

    def get_settings(self) -> dict[str, Any]:
        """A copy of the effective settings (user file, then a trusted project's file, then CLI overrides)."""
        settings = self._host().settings
        if hasattr(settings, "as_dict"):
            return settings.as_dict()
        return copy.deepcopy(dict(settings or {}))

    def get_commands(self) -> list[dict[str, Any]]:
        """The extension commands as ``{"name", "description", "source", "path"}`` (suffixed names included)."""
        return self._runner.get_commands()

    # -- model -------------------------------------------------------------------------------

    async def set_model(self, model: Any) -> bool:
        """Switch the model (recorded as ``model_change``); ``False`` when it has no credentials."""
        host = self._host()
        registry = getattr(host, "model_registry", None)
        if (
            registry is not None
            and hasattr(registry, "has_configured_auth")
            and not registry.has_configured_auth(model)
        ):
            return False
        await resolve(host.set_model(model))
        return True

    def get_thinking_level(self) -> str:
        return self._host().get_thinking_level()

    def set_thinking_level(self, level: str) -> None:
        """Set the thinking level (clamped to what the model supports)."""
        self._host().set_thinking_level(level)
