"""Agent events and loop hooks of the session: extensions first, then listeners, then persistence.

Every ``message_end`` (system, user, assistant, toolResult, custom) is appended to the session at
once; the request context is always the session's projection (:class:`ProjectionCache` extends it
with appended entries instead of rebuilding it for every request).
"""

from __future__ import annotations

from typing import Any

from tau.agent.hooks import (
    AfterToolCallContext,
    AgentContext,
    BeforeToolCallContext,
    RequestContext,
    TurnContext,
    TurnUpdate,
)
from tau.common.jsstr import ms_now
from tau.llm.stream import AbortSignal
from tau.llm.transcript import content_text
from tau.llm.types import Model
from tau.session.messages import convert_to_llm
from tau.tools.base import ToolContext

__all__ = ["EventsMixin"]

_PERSISTED_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


class EventsMixin:
    """Event handling, persistence and loop hooks of :class:`~tau.agent.session.AgentSession`."""

    # -- agent events: extensions, listeners, persistence -------------------------------------

    async def _on_agent_event(self: Any, event: dict[str, Any], signal: AbortSignal) -> None:
        kind = event["type"]
        if kind == "agent_start" and self._abort_requested:
            self.agent.abort()
        if kind == "message_start" and event["message"].get("role") == "user":
            self._overflow_recovery_attempted = False
            self._dequeue_text(content_text(event["message"].get("content") or "", ""))
        await self._emit_extension_event(event)
        if kind == "agent_end":
            self._emit({**event, "willRetry": self._will_retry_after(event)})
        else:
            self._emit(event)
        if kind == "message_end":
            self._persist(event["message"])
        elif kind == "turn_end":
            self._flush_pending_custom()

    def _dequeue_text(self: Any, text: str) -> None:
        for texts in (self._steering_texts, self._follow_up_texts):
            if text in texts:
                texts.remove(text)
                self._emit_queue_update()
                return

    def _persist(self: Any, message: dict[str, Any]) -> None:
        role = message.get("role")
        entry_id = None
        if role == "custom":
            entry_id = self._session_manager.append_custom_message_entry(
                message["customType"],
                message["content"],
                message.get("display", True),
                message.get("details"),
            )
        elif role in _PERSISTED_ROLES:
            entry_id = self._session_manager.append_message(message)
        if entry_id is not None:
            self._remember_entry(message, entry_id)
        if role == "assistant":
            self._last_assistant = message
            if message.get("stopReason") not in ("error", "length"):
                self._overflow_recovery_attempted = False
            if message.get("stopReason") != "error" and self._retry_attempt > 0:
                self._emit({"type": "auto_retry_end", "success": True, "attempt": self._retry_attempt})
                self._retry_attempt = 0

    def _remember_entry(self: Any, message: Any, entry_id: str) -> None:
        self._entry_ids[id(message)] = entry_id
        self._entry_refs.append(message)  # keeps id() unique while it is mapped

    def _entry_id_of(self: Any, message: Any) -> str | None:
        found = self._entry_ids.get(id(message))
        if found is not None:
            return found
        for entry in reversed(self._session_manager.get_branch()):
            if entry.get("type") == "message" and entry.get("message") is message:
                return entry["id"]
        return None

    async def _emit_extension_event(self: Any, event: dict[str, Any]) -> None:
        kind = event["type"]
        hooks = self._hooks
        if kind == "agent_start":
            self._turn_index = 0
        if kind == "turn_end":
            self._turn_index += 1
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
            await hooks.emit({"type": "turn_start", "turnIndex": self._turn_index, "timestamp": ms_now()})
        elif kind == "agent_end":
            await hooks.emit({"type": "agent_end", "messages": event["messages"]})
        else:
            await hooks.emit(dict(event))

    def _refresh_context(self: Any) -> dict[str, Any]:
        projection = self._session_manager.build_session_projection()
        for item in projection["entries"]:
            for message in item["messages"]:
                self._remember_entry(message, item["sourceEntry"]["id"])
        self.agent.state.messages = projection["messages"]
        return projection

    def refresh_context(self: Any) -> None:
        """Rebuild the transcript from the session (after an extension changed entries)."""
        self._refresh_context()

    # -- loop hooks --------------------------------------------------------------------------

    def _convert_to_llm(self: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return convert_to_llm(messages, block_images=bool(self._settings.get("images.blockImages", False)))

    async def _transform_context(
        self: Any, messages: list[dict[str, Any]], signal: AbortSignal | None
    ) -> Any:
        hooks = self._hooks
        if hooks.has_handlers("context") or hooks.has_handlers("context_with_system"):
            messages = await hooks.emit_context(messages)
        if self._forced_prompt is None:
            return messages
        from tau.llm.transcript import current_system_message

        current = current_system_message(messages)
        head: dict[str, Any] = {"role": "system", "content": self._forced_prompt}
        if current and current.get("toolsAdded"):
            head["toolsAdded"] = current["toolsAdded"]
        head["timestamp"] = (current or {}).get("timestamp") or ms_now()
        return [head, *(message for message in messages if message.get("role") != "system")]

    async def _prepare_request(self: Any, request: RequestContext, signal: AbortSignal | None) -> TurnUpdate:
        self._failed_response = None
        projection = self._session_manager.build_session_projection()
        context = AgentContext(list(projection["messages"]), list(self.agent.state.tools))
        return TurnUpdate(
            context=context, model=self.agent.state.model, thinking_level=self.agent.state.thinking_level
        )

    async def _prepare_next_turn(self: Any, turn: TurnContext, signal: AbortSignal | None) -> TurnUpdate:
        messages = await self._compact_before_next_response()
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
        if not self._hooks.has_handlers("tool_call"):
            return None
        event: dict[str, Any] = {"type": "tool_call", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event["input"] = args
        return await self._hooks.emit_tool_call(event)

    async def _after_tool_call(self: Any, context: AfterToolCallContext, signal: AbortSignal | None) -> Any:
        return await self._tool_result_hook(context, None)

    async def _tool_result_hook(self: Any, context: AfterToolCallContext, parent: str | None) -> Any:
        if not self._hooks.has_handlers("tool_result"):
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
        return await self._hooks.emit_tool_result(event)

    def _tool_context(self: Any, call: dict[str, Any]) -> ToolContext:
        model = self.agent.state.model
        return ToolContext(
            cwd=self._cwd,
            shell_path=self._settings.get("shellPath"),
            shell_command_prefix=self._settings.get("shellCommandPrefix"),
            session_id=self._session_manager.get_session_id(),
            session_file=self._session_manager.get_session_file(),
            provider=model.provider if model else None,
            model=model.id if model else None,
            model_input=tuple(model.input) if model else None,
            reasoning_level=self.agent.state.thinking_level,
            auto_resize_images=bool(self._settings.get("images.autoResize", True)),
            block_images=bool(self._settings.get("images.blockImages", False)),
        )

    async def _on_payload(self: Any, payload: Any, model: Model) -> Any:
        if not self._hooks.has_handlers("before_provider_request"):
            return payload
        return await self._hooks.emit_before_provider_request(payload)

    async def _on_response(self: Any, status: int, headers: dict[str, str]) -> None:
        await self._emit_hook({"type": "after_provider_response", "status": status, "headers": headers})


def _replace_in_place(target: dict[str, Any], replacement: dict[str, Any]) -> None:
    if target is replacement:
        return
    if replacement.get("role") != target.get("role"):
        return  # message_end replacements must keep the role (pi)
    if replacement.get("content") is None:
        replacement = {**replacement, "content": []}
    target.clear()
    target.update(replacement)
