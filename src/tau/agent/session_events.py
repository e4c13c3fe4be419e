"""Agent events and loop hooks of the session: extensions first, then listeners, then persistence.

Every ``message_end`` (system, user, assistant, toolResult, custom) is appended to the session at
once; the request context is always the session's projection (:class:`ProjectionCache` extends it
with appended entries instead of rebuilding it for every request).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
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
from tau.session.messages import convert_to_llm
from tau.session.projection import APPENDABLE, append_to_projection, extend_projection, unchanged_prefix
from tau.tools.base import ToolContext

__all__ = ["Conversion", "EventsMixin", "ProjectionCache", "append_to_projection"]

_PERSISTED_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


class ProjectionCache:
    """The session's projection, extended in place while entries are only appended to the leaf.

    A request needs the canonical projection of the session (pi's ``buildSessionProjection``);
    between two requests of a run only messages are appended, so rebuilding it from the whole
    branch each time would cost O(session) per request. Anything else (a moved leaf, a compaction,
    a context edit, a branch summary) rebuilds it. The model messages of the projection are
    converted once too. Callers must not change the returned lists.
    """

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self._projection: dict[str, Any] | None = None
        self._leaf: Any = None
        self._count = 0
        self._conversion = Conversion()
        self._edits: tuple[Any, bool] = (None, False)  # (projection, whether it holds a context edit)

    def invalidate(self) -> None:
        self._projection = None

    def has_context_edit(self, projection: dict[str, Any]) -> bool:
        """Whether ``projection`` has a ``context_edit`` entry (kept per projection: appends add none)."""
        seen, found = self._edits
        if seen is not projection:
            found = any(item["sourceEntry"].get("type") == "context_edit" for item in projection["entries"])
            self._edits = (projection, found)
        return found

    def get(self) -> dict[str, Any]:
        manager = self.manager
        leaf, count = manager.get_leaf_id(), manager.get_entry_count()
        projection = self._projection
        if projection is not None and leaf == self._leaf and count == self._count:
            return projection
        if projection is not None and count > self._count and self._extend(projection, leaf, count):
            return projection
        projection = manager.build_session_projection()
        self._projection, self._leaf, self._count = projection, leaf, count
        return projection

    def _extend(self, projection: dict[str, Any], leaf: Any, count: int) -> bool:
        added: list[dict[str, Any]] = []
        current = leaf
        while current != self._leaf:
            entry = self.manager.get_entry(current)
            if entry is None or entry.get("type") not in APPENDABLE or len(added) >= count - self._count:
                return False
            added.append(entry)
            current = entry.get("parentId")
        if len(added) != count - self._count:
            return False  # entries were appended elsewhere in the tree
        extend_projection(projection, added[::-1])
        self._leaf, self._count = leaf, count
        return True

    def convert(self, messages: list[dict[str, Any]], block_images: bool) -> list[dict[str, Any]]:
        """``convert_to_llm(messages)``, reusing the conversion of the leading messages seen last time."""
        if block_images:
            return convert_to_llm(messages, block_images=True)
        return self._conversion.convert(messages)


class Conversion:
    """``convert_to_llm`` of the request messages, extended while they are only appended to.

    ``system``, ``user``, ``assistant`` and ``toolResult`` messages are their own conversion, so
    for the leading messages that are the same objects as last time (a C-level identity check)
    their converted list is reused as it is. The other roles (custom, bash executions, summaries)
    build new messages from their fields, which a ``context`` handler may have edited in place:
    they are converted again on every request, and the last conversion is kept when it is equal,
    so what follows (a provider's per-message memo, passes that check how far the request is the
    same objects as last time) does not start over at a compaction's summary on every request. A
    message's role is never changed in place.
    """

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._out: list[Any] = []
        self._before: list[int] = []  # len(converted) before each given message
        self._built: list[int] = []  # indices of given messages not passed through as they are

    def convert(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        same = unchanged_prefix(messages, self._given)
        before = self._before[:same]
        out = self._out[: self._before[same] if same < len(self._before) else len(self._out)]
        built = self._built[: bisect_left(self._built, same)]
        for index in built:
            fresh = convert_to_llm([messages[index]])
            at = before[index]
            present = (before[index + 1] if index + 1 < same else len(out)) - at
            if len(fresh) != present:
                self._given = []  # dropped then, kept now (or the reverse): start over
                return self.convert(messages)
            if fresh and fresh[0] != out[at]:
                out[at] = fresh[0]  # unchanged, the last conversion stays: the same object as before
        tail = messages[same:]
        if _passed_through(tail):  # the common tail: no message is built, one C-level pass
            before += range(len(out), len(out) + len(tail))
            out += tail
        else:
            for index in range(same, len(messages)):
                message = messages[index]
                before.append(len(out))
                converted = convert_to_llm([message])
                if not converted or converted[0] is not message:
                    built.append(index)
                out.extend(converted)
        self._given, self._out, self._before, self._built = list(messages), out, before, built
        return list(out)


_PASSED_THROUGH = frozenset(("system", "user", "assistant", "toolResult"))


def _passed_through(messages: list[Any]) -> bool:
    """Whether every message is a dict of a role ``convert_to_llm`` passes through as it is."""
    try:
        return _PASSED_THROUGH.issuperset(map(dict.get, messages, repeat("role")))
    except TypeError:  # not a dict, or an unhashable role: item by item
        return False


class EventsMixin:
    """Event handling, persistence and loop hooks of :class:`~tau.agent.session.AgentSession`."""

    # state of the session these methods set (declared with its type in AgentSession.__init__)
    _failed_response: dict[str, Any] | None
    _last_assistant: dict[str, Any] | None
    _unremembered: dict[str, Any] | None
    _remembered_late: set[int]

    # -- agent events: extensions, listeners, persistence -------------------------------------

    async def _on_agent_event(self: Any, event: AgentEvent, signal: AbortSignal) -> None:
        if event["type"] == "agent_start" and self._abort_requested:
            self.agent.abort()
        if event["type"] == "message_start" and event["message"].get("role") == "toolResult":
            self._attach_nested_calls(event["message"])
        elif event["type"] == "agent_end":
            self._nested.clear()
        if event["type"] == "message_start" and event["message"].get("role") == "user":
            self._overflow_recovery_attempted = False
            self._dequeue_text(content_text(event["message"].get("content") or "", ""))
        await self._emit_extension_event(event)
        if event["type"] == "agent_end":
            self._emit({**event, "willRetry": self._will_retry_after(event)})
        else:
            self._emit(event)
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
        for texts in (self._steering_texts, self._follow_up_texts):
            if text in texts:
                texts.remove(text)
                self._emit_queue_update()
                return

    def _persist(self: Any, message: dict[str, Any]) -> None:
        role = message.get("role")
        entry_id = None
        manager = self._session_manager
        if role == "custom":
            entry_id = self._save(
                manager.append_custom_message_entry,
                message["customType"],
                message["content"],
                message.get("display", True),
                message.get("details"),
            )
        elif role in _PERSISTED_ROLES:
            entry_id = self._save(manager.append_message, message)
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
        self._entry_ids[id(message)] = (message, entry_id)
        if self._unremembered is not None:
            self._remembered_late.add(id(message))

    def _entry_id_of(self: Any, message: Any) -> str | None:
        found = self._entry_ids.get(id(message))
        if found is None and self._unremembered is not None:
            self._remember_projection()
            found = self._entry_ids.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
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
        projection = self._projection.get()
        # The entry id of each projected message is remembered when one is first asked for that the
        # messages appended since (remembered as they were saved) do not answer: a resumed session's
        # run asks only about its own messages.
        if self._unremembered is not None and self._unremembered is not projection:
            self._remember_projection()
        self._unremembered = projection
        self.agent.state.messages = projection["messages"]
        return projection

    def _remember_projection(self: Any) -> None:
        """Remember the entry ids of the projection the context was last refreshed from; an id
        remembered since that refresh (a message saved) is newer and stays."""
        projection, late = self._unremembered, self._remembered_late
        self._unremembered, self._remembered_late = None, set()
        entries = projection["entries"]
        # A projection only grows at its end while it is the same object (ProjectionCache): the
        # entries remembered last time are still there.
        remembered = self._remembered
        start = remembered[1] if remembered[0] is projection and remembered[1] <= len(entries) else 0
        entry_ids = self._entry_ids
        for index in range(start, len(entries)):
            item = entries[index]
            for message in item["messages"]:
                if id(message) not in late:
                    entry_ids[id(message)] = (message, item["sourceEntry"]["id"])
        self._remembered = (projection, len(entries))

    def refresh_context(self: Any) -> None:
        """Rebuild the transcript from the session (after an extension changed entries)."""
        self._refresh_context()

    # -- loop hooks --------------------------------------------------------------------------

    def _convert_to_llm(self: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._projection.convert(messages, bool(self._settings.get("images.blockImages", False)))

    async def _transform_context(
        self: Any, messages: list[dict[str, Any]], signal: AbortSignal | None
    ) -> Any:
        hooks = self._hooks
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
        self._failed_response = None
        projection = self._projection.get()
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
