"""Agent events and loop hooks of the session: extensions first, then listeners, then persistence.

Every ``message_end`` (system, user, assistant, toolResult, custom) is appended to the session at
once; the request context is always the session's projection (:class:`ProjectionCache` extends it
with appended entries instead of rebuilding it for every request).
"""

from __future__ import annotations

from typing import Any

from tau.agent.events import AgentEvent
from tau.agent.hooks import (
    AfterToolCallContext,
    AgentContext,
    BeforeToolCallContext,
    RequestContext,
    TurnContext,
    TurnUpdate,
)
from tau.agent.session_nested import combine_usage
from tau.common.jsstr import ms_now
from tau.llm.messages import content_text
from tau.llm.stream import AbortSignal
from tau.llm.types import Model
from tau.tools.base import ToolContext

__all__ = ["EventsMixin"]

class EventsMixin:
    """Event handling, persistence and loop hooks of :class:`~tau.agent.session.AgentSession`."""

    # state of the session these methods set (declared with its type in AgentSession.__init__)
    _last_assistant: dict[str, Any] | None

    # -- agent events: extensions, listeners, persistence -------------------------------------

    async def _on_agent_event(self: Any, event: AgentEvent, signal: AbortSignal) -> None:
        if event["type"] == "agent_start" and self._run.abort_requested:
            self.agent.abort()
        if event["type"] == "message_start" and event["message"].get("role") == "toolResult":
            self._attach_nested_calls(event["message"])
        elif event["type"] == "agent_end":
            self._nested.clear()
        if event["type"] == "message_start" and event["message"].get("role") == "user":
            self._compactor.overflow_recovery_attempted = False
            self._dequeue_text(content_text(event["message"].get("content") or "", ""))
        await self._emit_extension_event(event)
        if event["type"] == "agent_end":
            self._bus.emit({**event, "willRetry": self._retrier.will_retry_after(event, self.agent.state.model)})
        else:
            self._bus.emit(event)
        if event["type"] == "message_end":
            self._persist(event["message"])
        elif event["type"] == "turn_end":
            self._flush_pending_custom()

    def _attach_nested_calls(self: Any, message: dict[str, Any]) -> None:
        """Record the calls the tool made through ``execute_tool`` on its result (pi: at ``message_start``)."""
        taken = self._nested.take_record(message.get("toolCallId"))
        if taken is None:
            return
        calls, usage = taken
        if calls:
            message["nestedCalls"] = calls
        if usage:
            message["usage"] = combine_usage(message["usage"], usage) if message.get("usage") else usage

    def _dequeue_text(self: Any, text: str) -> None:
        self._queues.remove_text(text)

    def _persist(self: Any, message: dict[str, Any]) -> None:
        self._store.save_message(message)
        if message.get("role") == "assistant":
            self._run.last_assistant = message
            if message.get("stopReason") not in ("error", "length"):
                self._compactor.overflow_recovery_attempted = False
            if message.get("stopReason") != "error":
                self._retrier.succeeded()

    async def _emit_extension_event(self: Any, event: dict[str, Any]) -> None:
        kind = event["type"]
        hooks = self._bus.hooks
        if kind == "agent_start":
            self._run.turn_index = 0
        if kind == "turn_end":
            self._run.turn_index += 1
            return
        if kind == "message_end":
            if hooks.has_handlers("message_end"):
                replacement = await hooks.emit_message_end(
                    {"type": "message_end", "message": event["message"]}
                )
                if replacement and replacement.get("message") is not None:
                    _replace_in_place(event["message"], replacement["message"])
            return
        if not hooks.has_handlers(kind):
            return
        if kind == "turn_start":
            await hooks.emit({"type": "turn_start", "turnIndex": self._run.turn_index, "timestamp": ms_now()})
        elif kind == "agent_end":
            await hooks.emit({"type": "agent_end", "messages": event["messages"]})
        else:
            await hooks.emit(dict(event))

    def refresh_context(self: Any) -> None:
        """Rebuild the transcript from the session (after an extension changed entries)."""
        self._store.refresh()

    # -- loop hooks --------------------------------------------------------------------------

    def _convert_to_llm(self: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._store.projection.convert(messages, bool(self._settings.get("images.blockImages", False)))

    async def _transform_context(
        self: Any, messages: list[dict[str, Any]], signal: AbortSignal | None
    ) -> Any:
        hooks = self._bus.hooks
        if hooks.has_handlers("context") or hooks.has_handlers("context_with_system"):
            messages = await hooks.emit_context(messages)
        hidden = self._tools.hidden
        if hidden:
            messages = _without_declarations(messages, hidden)
        if self._forced_prompt is None:
            return messages
        from tau.llm.transcript import current_system_message

        current = current_system_message(messages)
        head: dict[str, Any] = {"role": "system", "content": self._forced_prompt}
        if current and current.get("toolsAdded"):
            head["toolsAdded"] = current["toolsAdded"]
        head["timestamp"] = (current.get("timestamp") if current else None) or ms_now()
        return [head, *(message for message in messages if message.get("role") != "system")]

    async def _prepare_request(self: Any, request: RequestContext, signal: AbortSignal | None) -> TurnUpdate:
        projection = self._store.projection.get()
        context = AgentContext(list(projection["messages"]), list(self.agent.state.tools))
        return TurnUpdate(
            context=context, model=self.agent.state.model, thinking_level=self.agent.state.thinking_level
        )

    async def _prepare_next_turn(self: Any, turn: TurnContext, signal: AbortSignal | None) -> TurnUpdate:
        messages = await self._compactor.compact_before_next_response()
        patch = self._system_patch(messages)
        return TurnUpdate(
            context=AgentContext(list(messages), list(self.agent.state.tools)),
            messages=[patch] if patch else None,
            model=self.agent.state.model,
            thinking_level=self.agent.state.thinking_level,
        )

    async def _before_tool_call(self: Any, context: BeforeToolCallContext, signal: AbortSignal | None) -> Any:
        return await self._tool_call_hook(context.tool_call, context.args, None)

    async def _tool_call_hook(self: Any, call: dict[str, Any], args: Any, parent: str | None) -> Any:
        if not self._bus.hooks.has_handlers("tool_call"):
            return None
        event: dict[str, Any] = {"type": "tool_call", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event["input"] = args
        return await self._bus.hooks.emit_tool_call(event)

    async def _after_tool_call(self: Any, context: AfterToolCallContext, signal: AbortSignal | None) -> Any:
        return await self._tool_result_hook(context, None)

    async def _tool_result_hook(self: Any, context: AfterToolCallContext, parent: str | None) -> Any:
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

    def _tool_context(self: Any, call: dict[str, Any]) -> ToolContext:
        model = self.agent.state.model
        return ToolContext(
            cwd=self._store.cwd,
            shell_path=self._settings.get("shellPath"),
            shell_command_prefix=self._settings.get("shellCommandPrefix"),
            session_id=self._store.manager.get_session_id(),
            session_file=self._store.manager.get_session_file(),
            provider=model.provider if model else None,
            model=model.id if model else None,
            model_input=tuple(model.input) if model else None,
            reasoning_level=self.agent.state.thinking_level,
            auto_resize_images=bool(self._settings.get("images.autoResize", True)),
            block_images=bool(self._settings.get("images.blockImages", False)),
        )

    async def _on_payload(self: Any, payload: Any, model: Model) -> Any:
        if not self._bus.hooks.has_handlers("before_provider_request"):
            return payload
        return await self._bus.hooks.emit_before_provider_request(payload)

    async def _on_response(self: Any, status: int, headers: dict[str, str]) -> None:
        await self._bus.emit_hook({"type": "after_provider_response", "status": status, "headers": headers})


def _replace_in_place(target: dict[str, Any], replacement: dict[str, Any]) -> None:
    if target is replacement:
        return
    if replacement.get("role") != target.get("role"):
        return  # message_end replacements must keep the role (pi)
    if replacement.get("content") is None:
        replacement = {**replacement, "content": []}
    target.clear()
    target.update(replacement)


def _without_declarations(messages: list[dict[str, Any]], hidden: set[str]) -> list[dict[str, Any]]:
    """The transcript as requests see it when ``prepare_loadout`` hides declarations (pi): every
    system message loses the hidden tools from ``toolsAdded``/``toolsRemoved``; the stored
    transcript keeps them."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "system" or not (message.get("toolsAdded") or message.get("toolsRemoved")):
            out.append(message)
            continue
        copy = {key: value for key, value in message.items() if key not in ("toolsAdded", "toolsRemoved")}
        added = [tool for tool in message.get("toolsAdded") or [] if tool.get("name") not in hidden]
        removed = [tool for tool in message.get("toolsRemoved") or [] if tool.get("name") not in hidden]
        if added:
            copy["toolsAdded"] = added
        if removed:
            copy["toolsRemoved"] = removed
        out.append(copy)
    return out
