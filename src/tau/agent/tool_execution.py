"""Running the tool calls of one assistant message (pi-agent-core ``executeToolCalls``).

Parallel (default): for each call in source order ``tool_execution_start`` and preparation (look
the tool up, ``prepare_arguments``, schema validation with pi's coercions, ``before_tool_call``);
then the prepared calls run concurrently, each finishing with ``after_tool_call`` and
``tool_execution_end`` in completion order; finally the tool-result messages in source order.
Sequential (``tool_execution="sequential"``, or any called tool with ``execution_mode="sequential"``):
start → prepare → execute → end → message, one call at a time.

Every call gets a result. Immediate outcomes (tool not found, invalid arguments, blocked, aborted)
skip execution and ``after_tool_call``; a raised error becomes an error result the model reads.
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tau.agent import events
from tau.agent.hooks import (
    AfterToolCallContext,
    AgentContext,
    BeforeToolCallContext,
    LoopConfig,
    ToolCallOutcome,
    resolve,
)
from tau.common.dataclass import dataclass
from tau.common.jsstr import ms_now
from tau.llm.messages import plain, tool_calls
from tau.llm.stream import AbortSignal
from tau.llm.types import AssistantMessage, ToolCall, ToolResultMessage
from tau.tools.base import ToolContext, ToolDefinition, ToolResult

__all__ = [
    "ABORTED_TEXT",
    "ToolBatch",
    "execute_tool_calls",
    "fail_truncated_tool_calls",
    "run_tool_call",
    "tool_result_message",
]

ABORTED_TEXT = "Operation aborted"
BLOCKED_TEXT = "Tool execution was blocked"

Emit = Callable[[events.AgentEvent], Awaitable[None]]
UpdateSink = Callable[[ToolResult], None]


@dataclass
class ToolBatch:
    """The tool-result messages of one assistant message, and whether the run stops after them."""

    messages: list[ToolResultMessage]
    terminate: bool


@dataclass
class _Prepared:
    """A tool call ready to run: its tool and validated arguments."""

    tool_call: ToolCall
    tool: ToolDefinition
    args: Any


def _immediate(tool_call: ToolCall, text: str, terminate: bool = False) -> ToolCallOutcome:
    result = ToolResult.from_error(text)
    result.terminate = terminate
    return ToolCallOutcome(tool_call, result, is_error=True)


def _should_terminate(outcomes: list[ToolCallOutcome]) -> bool:
    return bool(outcomes) and all(outcome.result.terminate for outcome in outcomes)


async def execute_tool_calls(
    context: AgentContext,
    message: AssistantMessage,
    config: LoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> ToolBatch:
    """Run every tool call of ``message`` and emit their events; see the module docstring."""
    calls = tool_calls(message)
    sequential = config.tool_execution == "sequential" or any(
        (tool := context.find_tool(call["name"])) is not None and tool.execution_mode == "sequential"
        for call in calls
    )
    runner = _run_sequential if sequential else _run_parallel
    outcomes, messages = await runner(context, message, calls, config, signal, emit)
    return ToolBatch(messages, _should_terminate(outcomes))


async def fail_truncated_tool_calls(message: AssistantMessage, emit: Emit) -> ToolBatch:
    """A ``length`` stop may have cut any call's arguments: fail every call instead of running it."""
    results = []
    for call in tool_calls(message):
        await emit(events.tool_execution_start(call["id"], call["name"], call["arguments"]))
        outcome = _immediate(
            call,
            f'Tool call "{call["name"]}" was not executed: the response hit the output token limit, '
            "so its arguments may be truncated. Re-issue the tool call with complete arguments.",
        )
        await _emit_end(outcome, emit)
        results.append(await _emit_result_message(outcome, emit))
    return ToolBatch(results, terminate=False)


async def _run_sequential(
    context: AgentContext,
    message: AssistantMessage,
    calls: list[ToolCall],
    config: LoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> tuple[list[ToolCallOutcome], list[ToolResultMessage]]:
    outcomes, messages = [], []
    for call in calls:
        await emit(events.tool_execution_start(call["id"], call["name"], call["arguments"]))
        prepared = await _prepare(context, message, call, config, signal)
        if isinstance(prepared, ToolCallOutcome):
            outcome = prepared
        else:
            outcome = await _execute_and_finalize(context, message, prepared, config, signal, emit)
        await _emit_end(outcome, emit)
        messages.append(await _emit_result_message(outcome, emit))
        outcomes.append(outcome)
    return outcomes, messages


async def _run_parallel(
    context: AgentContext,
    message: AssistantMessage,
    calls: list[ToolCall],
    config: LoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> tuple[list[ToolCallOutcome], list[ToolResultMessage]]:
    slots: list[ToolCallOutcome | _Prepared] = []
    for call in calls:
        await emit(events.tool_execution_start(call["id"], call["name"], call["arguments"]))
        prepared = await _prepare(context, message, call, config, signal)
        if isinstance(prepared, ToolCallOutcome):
            await _emit_end(prepared, emit)
        slots.append(prepared)

    async def finish(slot: ToolCallOutcome | _Prepared) -> ToolCallOutcome:
        if isinstance(slot, ToolCallOutcome):
            return slot
        if signal is not None and signal.aborted:
            outcome = _immediate(slot.tool_call, ABORTED_TEXT)
        else:
            outcome = await _execute_and_finalize(context, message, slot, config, signal, emit)
        await _emit_end(outcome, emit)
        return outcome

    outcomes = list(await asyncio.gather(*(finish(slot) for slot in slots)))
    messages = [await _emit_result_message(outcome, emit) for outcome in outcomes]
    return outcomes, messages


async def _prepare(
    context: AgentContext,
    message: AssistantMessage,
    call: ToolCall,
    config: LoopConfig,
    signal: AbortSignal | None,
    tools: list[ToolDefinition] | None = None,
) -> ToolCallOutcome | _Prepared:
    # Once aborted, skip preparation and the hooks; the call still gets a result.
    if signal is not None and signal.aborted:
        return _immediate(call, ABORTED_TEXT)
    tool = next((t for t in (tools if tools is not None else context.tools) if t.name == call["name"]), None)
    if tool is None:
        return _immediate(call, f"Tool {call['name']} not found")
    try:
        args = validate_arguments(tool, _prepared_call(tool, call))
        if config.before_tool_call is not None:
            verdict = await resolve(
                config.before_tool_call(BeforeToolCallContext(message, call, args, context), signal)
            )
            if signal is not None and signal.aborted:
                return _immediate(call, ABORTED_TEXT)
            if verdict and verdict.get("block"):
                reason = verdict.get("reason") or BLOCKED_TEXT
                return _immediate(call, reason, terminate=verdict.get("terminate") is True)
    except Exception as exc:  # boundary: the model reads why its call was refused
        return _immediate(call, _error_text(exc))
    return _Prepared(call, tool, args)


def _prepared_call(tool: ToolDefinition, call: ToolCall) -> ToolCall:
    if tool.prepare_arguments is None:
        return call
    arguments = tool.prepare_arguments(call["arguments"])
    if arguments is call["arguments"]:
        return call
    return {**call, "arguments": arguments}


def validate_arguments(tool: ToolDefinition, call: ToolCall) -> Any:
    """The call's arguments checked against the tool's schema, with pi's coercions applied.

    Validation works on a copy, so a tool that changes its arguments never changes the transcript.
    """
    from tau.tools.arguments import validate_tool_arguments

    copied: ToolCall = {**call, "arguments": copy.deepcopy(call["arguments"])}
    return validate_tool_arguments(tool, copied)


def _error_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _tool_context(config: LoopConfig, call: ToolCall) -> ToolContext:
    if config.tool_context is not None:
        return config.tool_context(call)
    return ToolContext(cwd=os.getcwd())


async def _execute_and_finalize(
    context: AgentContext,
    message: AssistantMessage,
    prepared: _Prepared,
    config: LoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> ToolCallOutcome:
    call = prepared.tool_call

    def to_event(partial: ToolResult) -> events.AgentEvent:
        return events.tool_execution_update(call["id"], call["name"], call["arguments"], _as_json(partial))

    outcome = await _execute(prepared, _tool_context(config, call), signal, _UpdateEmitter(emit, to_event))
    return await _finalize(context, message, prepared, outcome, config, signal)


class _UpdateEmitter:
    """The ``on_update`` callback of one execution: emits ``tool_execution_update`` in call order
    and stops accepting updates once ``execute`` has returned."""

    def __init__(self, emit: Emit, to_event: Callable[[ToolResult], events.AgentEvent]) -> None:
        self._emit = emit
        self._to_event = to_event
        self._loop = asyncio.get_running_loop()
        self._previous: asyncio.Future[None] | None = None
        self.accepting = True

    def __call__(self, partial: ToolResult) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # called from a worker thread: hand over to the agent's event loop
            self._loop.call_soon_threadsafe(self, partial)
            return
        if not self.accepting:
            return
        self._previous = asyncio.ensure_future(self._send(self._previous, self._to_event(partial)))

    async def _send(self, previous: asyncio.Future[None] | None, event: events.AgentEvent) -> None:
        if previous is not None:
            await previous
        await self._emit(event)

    async def flush(self) -> None:
        self.accepting = False
        if self._previous is not None:
            await self._previous


async def _execute(
    prepared: _Prepared,
    ctx: ToolContext,
    signal: AbortSignal | None,
    updates: _UpdateEmitter | _CallbackUpdates,
) -> ToolCallOutcome:
    started = time.perf_counter()
    try:
        result = _as_result(
            await resolve(
                prepared.tool.execute(prepared.tool_call["id"], prepared.args, signal, updates, ctx)
            )
        )
        is_error = result.is_error
    except Exception as exc:  # boundary: the model sees the error and can correct itself
        result, is_error = ToolResult.from_error(_error_text(exc)), True
    duration_ms = _js_round((time.perf_counter() - started) * 1000)
    await updates.flush()
    return ToolCallOutcome(prepared.tool_call, result, is_error, duration_ms)


async def _finalize(
    context: AgentContext,
    message: AssistantMessage,
    prepared: _Prepared,
    executed: ToolCallOutcome,
    config: LoopConfig,
    signal: AbortSignal | None,
) -> ToolCallOutcome:
    if config.after_tool_call is None:
        return executed
    hook_context = AfterToolCallContext(
        message, prepared.tool_call, prepared.args, executed.result, executed.is_error, context
    )
    try:
        override = await resolve(config.after_tool_call(hook_context, signal))
    except Exception as exc:
        return ToolCallOutcome(
            prepared.tool_call, ToolResult.from_error(_error_text(exc)), True, executed.duration_ms
        )
    if not override:
        return executed
    result, is_error = _merge_override(executed.result, executed.is_error, override)
    return ToolCallOutcome(prepared.tool_call, result, is_error, executed.duration_ms)


def _merge_override(result: ToolResult, is_error: bool, override: dict[str, Any]) -> tuple[ToolResult, bool]:
    """pi's field-by-field merge: given fields replace, omitted ones stay; new ``content`` without
    ``structuredContent`` drops the old structured content, which may no longer match it."""
    merged = ToolResult(
        content=content if (content := override.get("content")) is not None else result.content,
        details=override.get("details") if override.get("details") is not None else result.details,
        is_error=result.is_error,
        usage=override.get("usage") if override.get("usage") is not None else result.usage,
        terminate=override["terminate"] if override.get("terminate") is not None else result.terminate,
    )
    if override.get("structuredContent") is not None:
        merged.structured_content = override["structuredContent"]
    elif override.get("content") is None and result.has_structured_content:
        merged.structured_content = result.structured_content
    if override.get("isError") is not None:
        is_error = bool(override["isError"])
    return merged, is_error


def _as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, dict):
        return ToolResult.from_json(value)
    raise TypeError(f"a tool returned {type(value).__name__}; return a ToolResult (or raise on failure)")


def _as_json(partial: Any) -> Any:
    return partial.to_json() if isinstance(partial, ToolResult) else partial


def _js_round(value: float) -> int:
    return int(value + 0.5)


async def _emit_end(outcome: ToolCallOutcome, emit: Emit) -> None:
    call = outcome.tool_call
    await emit(
        events.tool_execution_end(
            call["id"], call["name"], outcome.result.to_json(), outcome.is_error, outcome.duration_ms
        )
    )


def tool_result_message(outcome: ToolCallOutcome) -> ToolResultMessage:
    """The transcript message of a finished call (``details``/``usage`` only when the tool gave them)."""
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": outcome.tool_call["id"],
        "toolName": outcome.tool_call["name"],
        "content": list(outcome.result.content or []),
    }
    if outcome.result.details is not None:
        message["details"] = outcome.result.details
    if outcome.result.usage is not None:
        message["usage"] = outcome.result.usage
    message["isError"] = outcome.is_error
    if outcome.duration_ms is not None:
        message["durationMs"] = outcome.duration_ms
    message["timestamp"] = ms_now()
    return message  # type: ignore[return-value]


async def _emit_result_message(outcome: ToolCallOutcome, emit: Emit) -> ToolResultMessage:
    message = tool_result_message(outcome)
    await emit(events.message_start(plain(message)))
    await emit(events.message_end(plain(message)))
    return message


async def run_tool_call(
    call: ToolCall,
    *,
    tools: list[ToolDefinition],
    assistant_message: AssistantMessage,
    context: AgentContext,
    config: LoopConfig,
    signal: AbortSignal | None = None,
    on_update: UpdateSink | None = None,
) -> ToolCallOutcome:
    """Run one call through the model's path (prepare, validate, hooks, execute) without events.

    For tools that call other tools (pi ``runToolCall``), so permission hooks apply to them too.
    Never raises for a tool failure: every failure comes back as an error outcome.
    """
    prepared = await _prepare(context, assistant_message, call, config, signal, tools)
    if isinstance(prepared, ToolCallOutcome):
        return prepared

    updates = _CallbackUpdates(on_update)
    outcome = await _execute(prepared, _tool_context(config, call), signal, updates)
    return await _finalize(context, assistant_message, prepared, outcome, config, signal)


class _CallbackUpdates:
    """``on_update`` for a call run without events: forwards partial results until ``execute`` returns."""

    def __init__(self, callback: UpdateSink | None) -> None:
        self._callback = callback
        self.accepting = True

    def __call__(self, partial: ToolResult) -> None:
        if self.accepting and self._callback is not None:
            self._callback(partial)

    async def flush(self) -> None:
        self.accepting = False
