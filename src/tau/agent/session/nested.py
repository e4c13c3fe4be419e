"""Tool calls made by a running tool (pi ``ctx.executeTool``): ids ``<parent>/<n>``, no transcript entries.

The call goes through the same preparation, validation and ``tool_call`` / ``tool_result`` hooks as
a model's call, with ``parentToolCallId`` on its ``tool_execution_*`` events and hook payloads. The
calls below one model-issued call are recorded (bounded) and their usage summed; both land on that
call's tool-result message as ``nestedCalls`` and ``usage`` (pi ``nested-tool-calls.ts``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import field
from typing import Any, cast

from tau.agent import events
from tau.agent.agent import Agent
from tau.agent.hooks import AgentContext, LoopConfig
from tau.agent.session.bus import EventBus
from tau.agent.session.loadout import Loadout
from tau.agent.session.loop_hooks import LoopHooks
from tau.agent.session.user_input import last_assistant
from tau.agent.tool_execution import run_tool_call
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.llm.messages import message_text
from tau.llm.stream import AbortSignal, StreamFunction
from tau.llm.types import AssistantMessage, ToolCall

__all__ = ["NESTED_CALL_LIMITS", "NestedCallRunner", "combine_usage"]

NESTED_CALL_LIMITS = {
    "maxCalls": 256,
    "maxArgumentBytesPerCall": 8 * 1024,
    "maxArgumentBytesTotal": 32 * 1024,
}
MAX_ERROR_CHARS = 500


def combine_usage(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """pi's ``combineUsage``: field-wise sums; the cost is provider-reported only if both are."""
    combined = {key: first[key] + second[key] for key in ("input", "output", "cacheRead", "cacheWrite")}
    for optional in ("cacheWrite1h", "reasoning"):
        if optional in first or optional in second:
            combined[optional] = first.get(optional, 0) + second.get(optional, 0)
    combined["totalTokens"] = first["totalTokens"] + second["totalTokens"]
    cost = {
        key: first["cost"][key] + second["cost"][key]
        for key in ("input", "output", "cacheRead", "cacheWrite")
    }
    cost["total"] = first["cost"]["total"] + second["cost"]["total"]
    cost["totalFromProvider"] = bool(
        first["cost"].get("totalFromProvider") is True and second["cost"].get("totalFromProvider") is True
    )
    combined["cost"] = cost
    return combined


@dataclass
class _Recorder:
    """The nested calls below one model-issued call."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    started: dict[int, float] = field(default_factory=dict)
    complete: bool = True
    argument_bytes: int = 0
    usage: dict[str, Any] | None = None

    def start(self, call: ToolCall) -> dict[str, Any] | None:
        if len(self.calls) >= NESTED_CALL_LIMITS["maxCalls"]:
            self.complete = False
            return None
        record: dict[str, Any] = {"id": call["id"], "name": call["name"], "status": "unfinished"}
        data = jsjson.dumps(call.get("arguments") or {})
        size = len(data)
        if (
            size > NESTED_CALL_LIMITS["maxArgumentBytesPerCall"]
            or self.argument_bytes + size > NESTED_CALL_LIMITS["maxArgumentBytesTotal"]
        ):
            record["argumentsBytes"] = size
            self.complete = False
        else:
            record["arguments"] = jsjson.loads(data)
            self.argument_bytes += size
        self.calls.append(record)
        self.started[id(record)] = time.perf_counter()
        return record

    def finish(self, record: dict[str, Any] | None, is_error: bool, error_text: str) -> None:
        if record is None:
            return
        record["status"] = "error" if is_error else "ok"
        started = self.started.pop(id(record), time.perf_counter())
        record["durationMs"] = round((time.perf_counter() - started) * 1000)
        if is_error and error_text:
            record["error"] = error_text[:MAX_ERROR_CHARS]

    def add_usage(self, usage: dict[str, Any]) -> None:
        self.usage = combine_usage(self.usage, usage) if self.usage else usage

    def snapshot(self) -> dict[str, Any] | None:
        if not self.calls and self.complete:
            return None
        calls = [dict(call) for call in self.calls]
        return {"calls": calls, "complete": self.complete and all(c["status"] != "unfinished" for c in calls)}


@dataclass
class _Scope:
    """One ``ctx.execute_tool`` scope: its recorder, the next nested call id, whether it holds the queue."""

    recorder: _Recorder
    next_id: int = 1
    holds_queue: bool = False


class NestedCallRunner:
    """Runs ``ctx.execute_tool`` calls for one session (pi ``NestedToolCallRunner``).

    Args:
        agent: the agent (model, transcript, signal, tool execution mode).
        bus: the ``tool_execution_*`` events and their extension handlers.
        loop: the session's loop hooks (``tool_call`` / ``tool_result`` handlers, tool context).
        loadout: the tools a call may reach.
        stream_fn: the provider entry point.
    """

    def __init__(
        self, agent: Agent, bus: EventBus, loop: LoopHooks, loadout: Loadout, stream_fn: StreamFunction
    ) -> None:
        self._agent = agent
        self._bus = bus
        self._loop = loop
        self._loadout = loadout
        self._stream_fn = stream_fn
        self._scopes: dict[str, _Scope] = {}
        self._exclusive = asyncio.Lock()

    def clear(self) -> None:
        self._scopes.clear()

    def take_record(
        self, tool_call_id: str | None
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None] | None:
        """``(nestedCalls, usage)`` of the calls ``tool_call_id`` made, removed; ``None`` if it made none."""
        scope = self._scopes.pop(tool_call_id, None) if tool_call_id is not None else None
        if scope is None:
            return None
        return scope.recorder.snapshot(), scope.recorder.usage

    async def execute(
        self,
        caller_id: str,
        name: str,
        args: Any,
        *,
        signal: AbortSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        scope = self._scopes.setdefault(caller_id, _Scope(_Recorder()))
        call: ToolCall = {
            "type": "toolCall",
            "id": f"{caller_id}/{scope.next_id}",
            "name": name,
            "arguments": args or {},
        }
        scope.next_id += 1
        record = scope.recorder.start(call)
        await self._emit(events.tool_execution_start(call["id"], name, call["arguments"], caller_id))
        # Updates the caller reported before this call reach listeners before the call's own (pi).
        await asyncio.sleep(0)
        tool = next((t for t in self._loadout.tools.callable_definitions() if t.name == name), None)
        exclusive = not scope.holds_queue and (
            self._agent.tool_execution == "sequential"
            or (tool is not None and tool.execution_mode == "sequential")
        )
        if exclusive:
            await self._exclusive.acquire()
        self._scopes[call["id"]] = _Scope(scope.recorder, 1, scope.holds_queue or exclusive)
        try:
            outcome = await self._run(call, caller_id, signal, on_update)
        finally:
            self._scopes.pop(call["id"], None)
            if exclusive:
                self._exclusive.release()
        result = outcome.result.to_json()
        text = message_text(result)
        scope.recorder.finish(record, outcome.is_error, text)
        if outcome.result.usage:
            scope.recorder.add_usage(outcome.result.usage)
        end = events.tool_execution_end(
            call["id"], name, result, outcome.is_error, outcome.duration_ms, caller_id
        )
        await self._emit(end)
        answer: dict[str, Any] = {"toolCall": call, "result": result, "isError": outcome.is_error}
        if outcome.duration_ms is not None:
            answer["durationMs"] = outcome.duration_ms
        return answer

    async def _run(self, call: ToolCall, caller_id: str, signal: Any, on_update: Any) -> Any:
        agent, hooks = self._agent, self._loop
        assistant = last_assistant(agent.state.messages)
        tools = self._loadout.tools.callable_definitions()
        if assistant is None:
            from tau.agent.hooks import ToolCallOutcome
            from tau.tools.base import ToolResult

            return ToolCallOutcome(call, ToolResult.from_error("No assistant message issued this call"), True)

        async def before(context: Any, sig: Any) -> Any:
            return await hooks.tool_call_hook(context.tool_call, context.args, caller_id)

        async def after(context: Any, sig: Any) -> Any:
            return await hooks.tool_result_hook(context, caller_id)

        config = LoopConfig(
            model=agent.state.model,
            stream_fn=self._stream_fn,
            convert_to_llm=hooks.convert_to_llm,
            before_tool_call=before,
            after_tool_call=after,
            tool_context=hooks.tool_context,
            tool_execution=agent.tool_execution,
        )
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def updated(partial: Any) -> None:
            if on_update is not None:
                on_update(partial)
            payload = partial.to_json() if hasattr(partial, "to_json") else partial
            event = events.tool_execution_update(
                call["id"], call["name"], call["arguments"], payload, caller_id
            )
            if threading.get_ident() == loop_thread:
                self._emit_soon(event)
            else:  # a tool reporting from a worker thread
                loop.call_soon_threadsafe(self._emit_soon, event)

        return await run_tool_call(
            call,
            tools=tools,
            assistant_message=cast(AssistantMessage, assistant),
            context=AgentContext(list(agent.state.messages), tools),
            config=config,
            signal=signal or agent.signal,
            on_update=updated,
        )

    def _emit_soon(self, event: events.AgentEvent) -> None:
        """Listeners now (keeping the order of updates), extension handlers as a task."""
        self._bus.emit(cast(dict[str, Any], event))
        if self._bus.hooks.has_handlers(event["type"]):
            self._bus.spawn(self._bus.hooks.emit(dict(event)))

    async def _emit(self, event: events.AgentEvent) -> None:
        if self._bus.hooks.has_handlers(event["type"]):
            await self._bus.hooks.emit(dict(event))
        self._bus.emit(cast(dict[str, Any], event))
