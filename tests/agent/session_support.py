"""A faux-driven AgentSession harness for tests (pi's ``test/suite/harness.ts`` in spirit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.session.manager import SessionManager


class Harness:
    """A session over a faux script of its own (:class:`faux_model.FauxModel`), recording every public event."""

    def __init__(
        self,
        cwd: Path,
        steps: list[dict[str, Any]],
        *,
        settings: dict[str, Any] | None = None,
        hooks: Any = None,
        persist: bool = True,
        model_overrides: dict[str, Any] | None = None,
        manager: SessionManager | None = None,
        **options: Any,
    ) -> None:
        scripted = FauxModel(steps, record=None, model_overrides=model_overrides)
        self.provider, self.registry, model = scripted.provider, scripted.registry, scripted.model
        values = {"retry": {"enabled": False}, "compaction": {"enabled": False}}
        values.update(settings or {})
        if manager is None:
            manager = (
                SessionManager.create(cwd, cwd / "sessions") if persist else SessionManager.in_memory(cwd)
            )
        self.manager = manager
        self.session = AgentSession(
            manager, Settings.in_memory(values), self.registry, model, cwd=cwd, hooks=hooks, **options
        )
        self.events: list[dict[str, Any]] = []
        self.session.subscribe(self.events.append)

    def types(self, *, updates: bool = False) -> list[str]:
        skip = () if updates else ("message_update", "tool_execution_update")
        return [event["type"] for event in self.events if event["type"] not in skip]

    def roles(self) -> list[str]:
        return [message["role"] for message in self.session.messages]

    def entry_types(self) -> list[str]:
        out = []
        for entry in self.manager.get_entries():
            kind = entry["type"]
            if kind == "message":
                kind = f"message:{entry['message']['role']}"
            out.append(kind)
        return out

    def file_lines(self) -> list[str]:
        path = self.manager.get_session_file()
        return Path(path).read_text().splitlines() if path and Path(path).exists() else []


class ScriptedHooks:
    """A :class:`~tau.agent.session_hooks.SessionHooks` whose handlers are plain functions by event type.

    ``handlers[type](event)`` returns the handler result; boundaries get ``(event, context)`` and
    return ``{"entries"?, "continue"?}``. Every event seen and every error are recorded.
    """

    def __init__(self, **handlers: Any) -> None:
        self.handlers = handlers
        self.seen: list[str] = []
        self.errors: list[tuple[str, str, str]] = []

    def has_handlers(self, event_type: str) -> bool:
        return event_type in self.handlers

    async def _call(self, event: dict[str, Any], *extra: Any) -> Any:
        self.seen.append(event["type"])
        result = self.handlers[event["type"]](event, *extra)
        if hasattr(result, "__await__"):
            result = await result
        return result

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event) if event["type"] in self.handlers else None

    async def emit_input(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event)

    async def emit_before_agent_start(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event)

    async def emit_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        result = await self._call({"type": "context", "messages": messages})
        return result if result is not None else messages

    async def emit_before_provider_request(self, payload: Any) -> Any:
        result = await self._call({"type": "before_provider_request", "payload": payload})
        return payload if result is None else result

    async def emit_tool_call(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event)

    async def emit_tool_result(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event)

    async def emit_message_end(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return await self._call(event)

    async def emit_boundary(self, event: dict[str, Any], build_context: Any) -> dict[str, Any]:
        self.seen.append(event["type"])
        entries: list[dict[str, Any]] = []
        proceed = False
        context = await build_context(entries)
        result = (
            self.handlers[event["type"]]({**event, "entries": entries, "continue": proceed}, context) or {}
        )
        if "entries" in result:
            entries = list(result["entries"])
        if "continue" in result:
            proceed = bool(result["continue"])
        try:
            context = await build_context(entries)
        except ValueError:
            return {"entries": [], "continue": False, "context": None, "valid": False}
        return {"entries": entries, "continue": proceed, "context": context, "valid": True}

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        self.errors.append((extension, event_type, error))
