"""The extension runner: runs handlers at the session's emit points (pi's ``ExtensionRunner``).

It implements :class:`tau.agent.session_hooks.SessionHooks`. Handlers run in extension load order,
then in registration order; each may be ``def`` or ``async def``. Each event's result semantics
follow pi 1.6 (pi-host §5.4): chains (``context``, ``tool_result``, ``input``,
``before_provider_request``, ``message_end``), the first block (``tool_call``), cancellation
(``session_before_*``), boundaries (``turn_end``, ``agent_before_settle``).

A raising handler is reported through :meth:`ExtensionRunner.emit_error` (extension, event, message)
and the others still run; a raising ``tool_call`` handler blocks the call with its message instead.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau.agent.hooks import resolve
from tau.extension.context import ExtensionCommandContext, ExtensionContext, ExtensionToolContext
from tau.extension.events import Event, event_from_payload
from tau.extension.ui import ExtensionUI, PromptTrackingUI, ui_for_mode
from tau.llm.transcript import current_system_message
from tau.tools.base import ToolDefinition

__all__ = ["EventBus", "Extension", "ExtensionRunner", "RegisteredCommand"]

Handler = Callable[[Any, Any], Any]
ErrorListener = Callable[[dict[str, Any]], None]

_SESSION_BEFORE = frozenset(
    {"session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"}
)
_STALE = (
    "This extension ctx is stale after session replacement or reload. Do not keep a tau or command ctx "
    "across ctx.new_session(), ctx.fork() or a reload."
)


@dataclass
class RegisteredCommand:
    """A ``/name`` command an extension registered; ``invocation_name`` carries a ``:n`` suffix on clashes."""

    name: str
    handler: Callable[[str, ExtensionCommandContext], Any]
    description: str = ""
    extension_path: str = ""
    get_argument_completions: Callable[[str], Any] | None = None
    invocation_name: str = ""


@dataclass
class Extension:
    """What one extension registered. ``path`` names it in errors (a file, ``entry-point:NAME``, ``bundled:NAME``)."""

    path: str
    name: str = ""
    source: str = "cli"
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    commands: dict[str, RegisteredCommand] = field(default_factory=dict)
    flags: dict[str, dict[str, Any]] = field(default_factory=dict)
    shortcuts: dict[str, dict[str, Any]] = field(default_factory=dict)
    message_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    entry_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)


class EventBus:
    """``tau.events``: a channel bus shared by all extensions (``on(channel, handler)``, ``emit(channel, data)``)."""

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner
        self._handlers: dict[str, list[tuple[str, Callable[[Any], Any]]]] = {}

    def on(self, channel: str, handler: Callable[[Any], Any], *, owner: str = "") -> Callable[[], None]:
        entry = (owner, handler)
        self._handlers.setdefault(channel, []).append(entry)

        def unsubscribe() -> None:
            handlers = self._handlers.get(channel, [])
            if entry in handlers:
                handlers.remove(entry)

        return unsubscribe

    async def emit(self, channel: str, data: Any = None) -> None:
        """Call every handler of ``channel`` in subscription order; failures are reported, not raised."""
        for owner, handler in list(self._handlers.get(channel, ())):
            try:
                await resolve(handler(data))
            except Exception as exc:
                self._runner.emit_error(owner, f"events:{channel}", _message(exc))


def _message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _same_messages(left: list[Any], right: list[Any]) -> bool:
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


class ExtensionRunner:
    """Holds the loaded extensions and dispatches the session's events to them.

    Args:
        cwd: The session's working directory (``ctx.cwd``).
        mode: ``"tui" | "rpc" | "json" | "print"`` (``ctx.mode``).
        ui: The mode's :class:`ExtensionUI`; the non-interactive one of ``mode`` by default.
        trusted: Whether the project is trusted (``ctx.is_project_trusted()``).
    """

    def __init__(
        self, *, cwd: str = ".", mode: str = "print", ui: ExtensionUI | None = None, trusted: bool = False
    ) -> None:
        self.extensions: list[Extension] = []
        self.cwd = cwd
        self.mode = mode
        self.ui: ExtensionUI = ui or ui_for_mode(mode)
        self.trusted = trusted
        self.flag_values: dict[str, Any] = {}
        self.load_errors: list[dict[str, str]] = []
        self._host: Any = None
        self._error_listeners: list[ErrorListener] = []
        self._stale: str | None = None
        self._shutdown_handler: Callable[[], Any] | None = None
        self.context_head_rebuilt = False
        self.event_bus = EventBus(self)

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

        It goes to the error listeners and to the session's event listeners (so the JSON and RPC
        modes can print it); with no error listener, print and JSON modes also write pi's
        ``Extension error (<path>): <error>`` line to stderr.
        """
        record = {"type": "extension_error", "extensionPath": extension, "event": event_type, "error": error}
        forward = getattr(self._host, "emit_event", None) or getattr(self._host, "_emit", None)
        if forward is not None:
            forward(dict(record))
        if not self._error_listeners and self.mode in ("print", "json"):
            sys.stderr.write(f"Extension error ({extension}): {error}\n")
        for listener in list(self._error_listeners):
            try:
                listener(record)
            except Exception as exc:  # a broken listener must not take the run down
                sys.stderr.write(f"extension error listener failed: {_message(exc)}\n")

    # -- contexts ------------------------------------------------------------------------------

    def create_context(self) -> ExtensionContext:
        return ExtensionContext(self)

    def create_tool_context(self, tool_call_id: str, signal: Any, tool_context: Any) -> ExtensionToolContext:
        return ExtensionToolContext(self, tool_call_id, signal, tool_context)

    def create_command_context(self) -> ExtensionCommandContext:
        return ExtensionCommandContext(self)

    # -- handlers ------------------------------------------------------------------------------

    def add_handler(self, extension: Extension, event_type: str, handler: Handler) -> Callable[[], None]:
        handlers = extension.handlers.setdefault(event_type, [])
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def has_handlers(self, event_type: str) -> bool:
        return any(ext.handlers.get(event_type) for ext in self.extensions)

    def _snapshot(self, event_type: str) -> list[tuple[Extension, list[Handler]]]:
        return [(ext, list(ext.handlers.get(event_type, ()))) for ext in self.extensions]

    async def _call(self, handler: Handler, event: Any, ctx: Any) -> Any:
        return await resolve(handler(event, ctx))

    # -- SessionHooks --------------------------------------------------------------------------

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Notification events, ``session_before_*`` (cancel short-circuits, last result wins),
        ``cache_warming_decision`` (``{"action"}``, last wins) and ``resources_discover`` (combined paths)."""
        event_type = event.get("type", "")
        if event_type == "resources_discover":
            return await self._emit_resources_discover(event)
        ctx = self.create_context()
        typed = event_from_payload(event)
        result: dict[str, Any] | None = None
        for ext, handlers in self._snapshot(event_type):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, event_type, _message(exc))
                    continue
                if event_type in _SESSION_BEFORE and answer:
                    result = answer
                    if answer.get("cancel"):
                        return answer
                elif event_type == "cache_warming_decision" and answer and answer.get("action") is not None:
                    result = {"action": answer["action"]}
        return result

    async def _emit_resources_discover(self, event: dict[str, Any]) -> dict[str, Any]:
        ctx = self.create_context()
        typed = event_from_payload(event)
        found: dict[str, list[dict[str, str]]] = {"skillPaths": [], "promptPaths": [], "themePaths": []}
        for ext, handlers in self._snapshot("resources_discover"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx) or {}
                except Exception as exc:
                    self.emit_error(ext.path, "resources_discover", _message(exc))
                    continue
                for key, paths in found.items():
                    paths.extend({"path": path, "extensionPath": ext.path} for path in answer.get(key) or ())
        return found

    async def emit_input(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Transforms chain; the first ``handled`` stops. Answers ``continue`` or the final ``transform``."""
        ctx = self.create_context()
        text, images = event.get("text", ""), event.get("images")
        for ext, handlers in self._snapshot("input"):
            for handler in handlers:
                typed = event_from_payload({**event, "text": text, "images": images})
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "input", _message(exc))
                    continue
                action = (answer or {}).get("action")
                if action == "handled":
                    return answer
                if action == "transform":
                    text = answer.get("text", text)
                    images = answer.get("images") or images
        if text != event.get("text", "") or images is not event.get("images"):
            return {"action": "transform", "text": text, "images": images}
        return {"action": "continue"}

    async def emit_before_agent_start(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Collects ``message`` results; a ``systemPrompt`` result replaces the prompt that later handlers see."""
        ctx = self.create_context()
        messages: list[dict[str, Any]] = []
        system_prompt: str | None = None
        current = dict(event)
        for ext, handlers in self._snapshot("before_agent_start"):
            for handler in handlers:
                typed = event_from_payload(current)
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "before_agent_start", _message(exc))
                    continue
                if not answer:
                    continue
                if answer.get("message"):
                    messages.append(answer["message"])
                if answer.get("systemPrompt") is not None:
                    system_prompt = answer["systemPrompt"]
                    current["systemPrompt"] = system_prompt
        result: dict[str, Any] = {"messages": messages}
        if system_prompt is not None:
            result["systemPrompt"] = system_prompt
        return result

    async def emit_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``context`` then ``context_with_system`` (pi's ``emitContext``); returns what the request sends.

        ``context`` handlers see a deep copy without system messages. When no handler replaced that
        list (in-place edits only), the system messages stay where they were; when one did, the
        request head is rebuilt: ``[current system message] + returned`` (pi-host §5.5). Without
        handlers the given list comes back as it is.
        """
        self.context_head_rebuilt = False
        if not self.has_handlers("context") and not self.has_handlers("context_with_system"):
            return messages
        ctx = self.create_context()
        current = copy.deepcopy(messages)
        for ext, handlers in self._snapshot("context"):
            for handler in handlers:
                visible = [message for message in current if message.get("role") != "system"]
                snapshot = list(visible)
                try:
                    answer = await self._call(
                        handler, event_from_payload({"type": "context", "messages": visible}), ctx
                    )
                except Exception as exc:
                    self.emit_error(ext.path, "context", _message(exc))
                    continue
                returned = (answer or {}).get("messages")
                if returned is None:
                    returned = None if _same_messages(visible, snapshot) else visible
                if returned is None or _same_messages(returned, snapshot):
                    continue
                head = current_system_message(current)
                current = [head, *returned] if head else list(returned)
                self.context_head_rebuilt = True
        return await self._emit_context_with_system(current, ctx)

    async def _emit_context_with_system(
        self, current: list[dict[str, Any]], ctx: Any
    ) -> list[dict[str, Any]]:
        for ext, handlers in self._snapshot("context_with_system"):
            for handler in handlers:
                had_head = bool(current) and current[0].get("role") == "system"
                event = event_from_payload({"type": "context_with_system", "messages": current})
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "context_with_system", _message(exc))
                    continue
                current = (answer or {}).get("messages") or current
                if had_head and (not current or current[0].get("role") != "system"):
                    self.emit_error(
                        ext.path,
                        "context_with_system",
                        "Handler removed the leading system message; the request has no prompt or initial "
                        "tool declarations. Keep it at index 0.",
                    )
        return current

    async def emit_before_provider_request(self, payload: Any) -> Any:
        """Any non-``None`` answer replaces the payload; later handlers see the replacement."""
        ctx = self.create_context()
        for ext, handlers in self._snapshot("before_provider_request"):
            for handler in handlers:
                event = event_from_payload({"type": "before_provider_request", "payload": payload})
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "before_provider_request", _message(exc))
                    continue
                if answer is not None:
                    payload = answer
        return payload

    async def emit_tool_call(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The first ``{"block": True}`` wins; a raising handler blocks the call with its message."""
        ctx = self.create_context()
        typed = event_from_payload(event)
        for _ext, handlers in self._snapshot("tool_call"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:  # pi: the error becomes the blocked call's result
                    return {"block": True, "reason": _message(exc)}
                if answer and answer.get("block"):
                    return answer
        return None

    async def emit_tool_result(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Partial patches chain; new ``content`` without ``structuredContent`` drops the structured content."""
        ctx = self.create_context()
        current = dict(event)
        modified = False
        for ext, handlers in self._snapshot("tool_result"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event_from_payload(current), ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "tool_result", _message(exc))
                    continue
                if answer:
                    modified = self._patch_tool_result(current, answer) or modified
        if not modified:
            return None
        keys = ("content", "details", "structuredContent", "isError", "usage")
        return {key: current[key] for key in keys if key in current}

    @staticmethod
    def _patch_tool_result(current: dict[str, Any], answer: dict[str, Any]) -> bool:
        changed = False
        if answer.get("content") is not None:
            current["content"] = answer["content"]
            if answer.get("structuredContent") is None:
                current.pop("structuredContent", None)
            changed = True
        for key in ("details", "structuredContent", "isError", "usage"):
            if answer.get(key) is not None:
                current[key] = answer[key]
                changed = True
        return changed

    async def emit_message_end(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Replacements chain; one with another ``role`` is reported and ignored."""
        ctx = self.create_context()
        message = event.get("message") or {}
        modified = False
        for ext, handlers in self._snapshot("message_end"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event_from_payload({**event, "message": message}), ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "message_end", _message(exc))
                    continue
                replacement = (answer or {}).get("message")
                if not replacement:
                    continue
                if replacement.get("role") != message.get("role"):
                    self.emit_error(
                        ext.path,
                        "message_end",
                        "message_end handlers must return a message with the same role",
                    )
                    continue
                message, modified = replacement, True
        return {"message": message} if modified else None

    async def emit_boundary(self, event: dict[str, Any], build_context: Any) -> dict[str, Any]:
        """``turn_end`` / ``agent_before_settle``: drafts and ``continue`` chain, the context is rebuilt after each handler."""
        event_type = event.get("type", "")
        ctx = self.create_context()
        entries: list[dict[str, Any]] = []
        should_continue = False
        context = await build_context(entries)
        valid = True
        for ext, handlers in self._snapshot(event_type):
            for handler in handlers:
                payload = {**event, "entries": entries, "continue": should_continue, "context": context}
                try:
                    answer = await self._call(handler, event_from_payload(payload), ctx) or {}
                    if answer.get("entries") is not None:
                        entries = list(answer["entries"])
                    if answer.get("continue") is not None:
                        should_continue = bool(answer["continue"])
                except Exception as exc:
                    self.emit_error(ext.path, event_type, _message(exc))
                try:
                    context = await build_context(entries)
                    valid = True
                except Exception as exc:
                    valid = False
                    self.emit_error(ext.path, event_type, f"Invalid boundary entries: {_message(exc)}")
        if not valid:
            return {"entries": [], "continue": False, "context": context, "valid": False}
        return {"entries": entries, "continue": should_continue, "context": context, "valid": True}

    # -- events outside the SessionHooks seam -----------------------------------------------

    async def emit_project_trust(self, cwd: str) -> dict[str, Any] | None:
        """``project_trust``: the first ``yes``/``no`` answer wins (``undecided`` falls through)."""
        ctx = self.create_context()
        event = event_from_payload({"type": "project_trust", "cwd": cwd})
        for ext, handlers in self._snapshot("project_trust"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "project_trust", _message(exc))
                    continue
                if answer and answer.get("trusted") in ("yes", "no"):
                    return answer
        return None

    async def emit_user_bash(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``user_bash``: the first ``{"operations"}`` or ``{"result"}`` wins; a handler error is reported and re-raised."""
        ctx = self.create_context()
        typed = event_from_payload(event)
        for ext, handlers in self._snapshot("user_bash"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                    if answer is None:
                        continue
                    if not isinstance(answer, dict) or ("operations" in answer) == ("result" in answer):
                        raise ValueError(
                            "Invalid user_bash handler result: return None for local execution or exactly one "
                            "valid {operations} or {result} dict"
                        )
                    return answer
                except Exception as exc:
                    self.emit_error(ext.path, "user_bash", _message(exc))
                    raise
        return None

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
        info["sourceInfo"] = {**source, "scope": scope, "origin": "top-level"}
        return info

    def wrap_tool(self, definition: ToolDefinition) -> ToolDefinition:
        """The definition with an ``execute`` that hands the extension's ``execute`` an extension tool ctx."""
        inner = definition.execute

        async def execute(
            tool_call_id: str, params: Any, signal: Any, on_update: Any, tool_context: Any
        ) -> Any:
            ctx = self.create_tool_context(tool_call_id, signal, tool_context)
            return await resolve(inner(tool_call_id, params, signal, on_update, ctx))

        return dataclasses.replace(definition, execute=execute)

    def apply_tool(self, extension: Extension, definition: ToolDefinition) -> None:
        """Hand a tool registered after :meth:`bind` to the session (unless an earlier extension owns the name)."""
        if self._host is None or self.tool_owner(definition.name) is not extension:
            return
        self._host.register_tool(self.wrap_tool(definition))

    # -- commands ------------------------------------------------------------------------------

    def resolved_commands(self) -> list[RegisteredCommand]:
        """Every command in load order; names registered more than once become ``name:1``, ``name:2``, ..."""
        commands = [command for ext in self.extensions for command in ext.commands.values()]
        counts: dict[str, int] = {}
        for command in commands:
            counts[command.name] = counts.get(command.name, 0) + 1
        seen: dict[str, int] = {}
        taken: set[str] = set()
        resolved = []
        for command in commands:
            occurrence = seen[command.name] = seen.get(command.name, 0) + 1
            name = f"{command.name}:{occurrence}" if counts[command.name] > 1 else command.name
            suffix = occurrence
            while name in taken:
                suffix += 1
                name = f"{command.name}:{suffix}"
            taken.add(name)
            resolved.append(dataclasses.replace(command, invocation_name=name))
        return resolved

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
            self.emit_error(f"command:{name}", "command", _message(exc))
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
