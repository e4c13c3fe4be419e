"""What extensions registered: their handlers, tools, commands and renderers, and the shared event bus."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from tau.agent.hooks import resolve
from tau.common.dataclass import dataclass
from tau.tools.base import ToolDefinition

if TYPE_CHECKING:
    from tau.extension.context import ExtensionCommandContext

__all__ = ["EventBus", "Extension", "RegisteredCommand", "resolve_commands"]

Handler = Callable[[Any, Any], Any]


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
    tool_renderers: list[Callable[[str, Callable[[], Any]], Any]] = field(default_factory=list)


class EventBus:
    """``tau.events``: a channel bus shared by all extensions (``on(channel, handler)``, ``emit(channel, data)``)."""

    def __init__(self, report: Callable[[str, str, str], None]) -> None:
        self._report = report
        self._handlers: dict[str, list[tuple[str, Callable[[Any], Any]]]] = {}

    def on(self, channel: str, handler: Callable[[Any], Any], *, owner: str = "") -> Callable[[], None]:
        entry = (owner, handler)
        self._handlers.setdefault(channel, []).append(entry)

        def unsubscribe() -> None:
            handlers = self._handlers.get(channel, [])
            if entry in handlers:
                handlers.remove(entry)

        return unsubscribe

    def drop_owner(self, owner: str) -> None:
        """Forget every subscription of ``owner`` (an extension whose factory failed)."""
        for handlers in self._handlers.values():
            handlers[:] = [entry for entry in handlers if entry[0] != owner]

    async def emit(self, channel: str, data: Any = None) -> None:
        """Call every handler of ``channel`` in subscription order; failures are reported, not raised."""
        for owner, handler in list(self._handlers.get(channel, ())):
            try:
                await resolve(handler(data))
            except Exception as exc:
                self._report(owner, f"events:{channel}", str(exc) or type(exc).__name__)


def resolve_commands(extensions: list[Extension]) -> list[RegisteredCommand]:
    """Every command in load order; a name registered more than once becomes ``name:1``, ``name:2``, ..."""
    commands = [command for ext in extensions for command in ext.commands.values()]
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
