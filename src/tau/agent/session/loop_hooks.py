"""The agent loop's hooks of a session: the request context, its conversion, the tool hooks, the provider hooks.

:class:`LoopHooks` is what the session gives the :class:`~tau.agent.agent.Agent` to call at pi's
points: every request starts from the session's projection (``prepare_request``), goes through the
``context`` handlers and the loadout's hidden declarations (``transform_context``), is converted
once per message (``convert_to_llm``), and reaches ``before_provider_request`` handlers
(``on_payload``); every tool call goes through ``tool_call`` / ``tool_result`` handlers.
"""

from __future__ import annotations

from typing import Any

from tau.agent.agent import Agent
from tau.agent.hooks import (
    AfterToolCallContext,
    AgentContext,
    BeforeToolCallContext,
    RequestContext,
    TurnUpdate,
)
from tau.agent.session.bus import EventBus
from tau.agent.session.hidden_declarations import HiddenDeclarations
from tau.agent.session.loadout import Loadout
from tau.agent.session.store import SessionStore
from tau.agent.settings import Settings
from tau.common.jsstr import ms_now
from tau.llm.stream import DEFAULT_IDLE_TIMEOUT_MS, AbortSignal, StreamOptions
from tau.llm.types import Model, ToolCall
from tau.tools.base import ToolContext

__all__ = ["LoopHooks"]


class LoopHooks:
    """The loop hooks and provider options of one session.

    Args:
        store: the session file and its projection.
        agent: the agent (model, tools, thinking level).
        settings: images and shell settings, provider retries.
        bus: the extension hooks.
        loadout: the hidden declarations and a run's forced system prompt.
    """

    def __init__(
        self, store: SessionStore, agent: Agent, settings: Settings, bus: EventBus, loadout: Loadout
    ) -> None:
        self._store = store
        self._agent = agent
        self._settings = settings
        self._bus = bus
        self._loadout = loadout
        self._declarations = HiddenDeclarations()

    def install(self) -> None:
        """Make these the agent's hooks and provider options."""
        agent = self._agent
        agent.convert_to_llm = self.convert_to_llm
        agent.transform_context = self.transform_context
        agent.prepare_request = self.prepare_request
        agent.before_tool_call = self.before_tool_call
        agent.after_tool_call = self.after_tool_call
        agent.tool_context = self.tool_context
        agent.stream_options = self.stream_options()

    def stream_options(self) -> StreamOptions:
        provider = self._settings.get("retry.provider") or {}
        idle = self._settings.get("httpIdleTimeoutMs", DEFAULT_IDLE_TIMEOUT_MS)
        return StreamOptions(
            session_id=self._store.manager.get_session_id(),
            on_payload=self.on_payload,
            on_response=self.on_response,
            idle_timeout_ms=idle if isinstance(idle, int) else 0,  # "disabled": no limit
            max_retries=int(provider.get("maxRetries", 0) or 0),
            max_retry_delay_ms=int(provider.get("maxRetryDelayMs", 60_000) or 60_000),
        )

    def convert_to_llm(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._store.projection.convert(messages, bool(self._settings.get("images.blockImages", False)))

    async def transform_context(self, messages: list[dict[str, Any]], signal: AbortSignal | None) -> Any:
        hooks = self._bus.hooks
        if hooks.has_handlers("context") or hooks.has_handlers("context_with_system"):
            messages = await hooks.emit_context(messages)
        hidden = self._loadout.tools.hidden
        if hidden:
            messages = self._declarations.apply(messages, hidden)
        if self._loadout.forced_prompt is None:
            return messages
        from tau.llm.transcript import current_system_message

        current = current_system_message(messages)
        head: dict[str, Any] = {"role": "system", "content": self._loadout.forced_prompt}
        if current and current.get("toolsAdded"):
            head["toolsAdded"] = current["toolsAdded"]
        head["timestamp"] = (current.get("timestamp") if current else None) or ms_now()
        return [head, *(message for message in messages if message.get("role") != "system")]

    async def prepare_request(self, request: RequestContext, signal: AbortSignal | None) -> TurnUpdate:
        projection = self._store.projection.get()
        context = AgentContext(list(projection["messages"]), list(self._agent.state.tools))
        return TurnUpdate(
            context=context, model=self._agent.state.model, thinking_level=self._agent.state.thinking_level
        )

    async def before_tool_call(self, context: BeforeToolCallContext, signal: AbortSignal | None) -> Any:
        return await self.tool_call_hook(context.tool_call, context.args, None)

    async def tool_call_hook(self, call: ToolCall, args: Any, parent: str | None) -> Any:
        if not self._bus.hooks.has_handlers("tool_call"):
            return None
        event: dict[str, Any] = {"type": "tool_call", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event["input"] = args
        return await self._bus.hooks.emit_tool_call(event)

    async def after_tool_call(self, context: AfterToolCallContext, signal: AbortSignal | None) -> Any:
        return await self.tool_result_hook(context, None)

    async def tool_result_hook(self, context: AfterToolCallContext, parent: str | None) -> Any:
        if not self._bus.hooks.has_handlers("tool_result"):
            return None
        result = context.result
        call = context.tool_call
        event: dict[str, Any] = {"type": "tool_result", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event.update(input=context.args, content=result.content, details=result.details)
        if result.has_structured_content:
            event["structuredContent"] = result.structured_content
        event["isError"] = context.is_error
        event["usage"] = result.usage
        return await self._bus.hooks.emit_tool_result(event)

    def tool_context(self, call: ToolCall) -> ToolContext:
        model = self._agent.state.model
        return ToolContext(
            cwd=self._store.cwd,
            shell_path=self._settings.get("shellPath"),
            shell_command_prefix=self._settings.get("shellCommandPrefix"),
            session_id=self._store.manager.get_session_id(),
            session_file=self._store.manager.get_session_file(),
            provider=model.provider if model else None,
            model=model.id if model else None,
            model_input=tuple(model.input) if model else None,
            reasoning_level=self._agent.state.thinking_level,
            auto_resize_images=bool(self._settings.get("images.autoResize", True)),
            block_images=bool(self._settings.get("images.blockImages", False)),
        )

    async def on_payload(self, payload: Any, model: Model) -> Any:
        if not self._bus.hooks.has_handlers("before_provider_request"):
            return payload
        return await self._bus.hooks.emit_before_provider_request(payload)

    async def on_response(self, status: int, headers: dict[str, str]) -> None:
        await self._bus.emit_hook({"type": "after_provider_response", "status": status, "headers": headers})
