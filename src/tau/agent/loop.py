"""One low-level run of the agent (pi-agent-core ``runAgentLoop`` / ``runAgentLoopContinue``).

A run is ``agent_start`` … ``agent_end``. Per turn (exact order, pi 1.6):

1. (not before the first turn) ``prepare_next_turn``, a second steering poll if the first found
   nothing, ``turn_start``;
2. the pending messages (starting, prepared, steering or follow-up), each with
   ``message_start``/``message_end``, after a system message declaring tool changes if needed;
3. ``prepare_request``, ``transform_context``, ``convert_to_llm``, the provider call;
4. ``message_start`` (the assistant partial), ``message_update`` × N, ``message_end``;
5. an ``error`` or ``aborted`` response: ``finish_turn``, ``turn_end``, ``agent_end`` (hard exit);
6. the tool calls (:mod:`tau.agent.tool_execution`; all failed after a ``length`` stop);
7. ``finish_turn``, ``turn_end``; ``{"action": "end"}`` → ``agent_end``; else poll steering.

The turns go on while there were tool calls (and the batch did not terminate) or steering is
pending. When the run would stop, queued follow-ups start the next turn; failing those, a
``finish_turn`` ``continue`` decision that nothing satisfied gets one context-only turn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from tau.agent import events
from tau.agent.hooks import (
    AgentContext,
    AgentMessage,
    LoopConfig,
    RequestContext,
    TurnContext,
    TurnUpdate,
    resolve,
)
from tau.agent.tool_execution import ToolBatch, execute_tool_calls, fail_truncated_tool_calls
from tau.common.jsstr import ms_now
from tau.llm.messages import has_tool_calls, plain
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.transcript import current_tools, normalize_context, tool_state_changes
from tau.llm.types import AssistantMessage, ToolResultMessage
from tau.tools.base import tool_declaration

__all__ = ["EventSink", "declare_tool_changes", "run_loop", "run_loop_continue"]

EventSink = Callable[[events.AgentEvent], Awaitable[None] | None]

_UPDATE_EVENTS = frozenset(
    {
        "text_start",
        "text_delta",
        "text_end",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    }
)


async def run_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: LoopConfig,
    emit: EventSink,
    signal: AbortSignal | None = None,
) -> list[AgentMessage]:
    """Run from new starting messages; returns the messages the run added (the starting ones included).

    ``context`` and ``config`` are copied, never changed.
    """
    starting = declare_tool_changes(context, prompts)
    run = _Run(context.copy(), dataclasses.replace(config), _sink(emit), signal, list(starting))
    run.context.messages.extend(starting)
    await run.emit(events.agent_start())
    await run.emit(events.turn_start())
    for message in starting:
        await run.emit(events.message_start(message))
        await run.emit(events.message_end(message))
    await run.loop()
    return run.new_messages


async def run_loop_continue(
    context: AgentContext,
    config: LoopConfig,
    emit: EventSink,
    signal: AbortSignal | None = None,
) -> list[AgentMessage]:
    """Run from the transcript as it is (a retry, or after tool results); returns the added messages.

    The last message must not be an assistant message: the model would be asked to answer itself.
    """
    if not context.messages:
        raise ValueError("Cannot continue: no messages in context")
    if context.messages[-1].get("role") == "assistant":
        raise ValueError("Cannot continue from message role: assistant")
    run = _Run(context.copy(), dataclasses.replace(config), _sink(emit), signal, [])
    await run.emit(events.agent_start())
    await run.emit(events.turn_start())
    await run.loop()
    return run.new_messages


def _sink(emit: EventSink) -> Callable[[events.AgentEvent], Awaitable[None]]:
    async def send(event: events.AgentEvent) -> None:
        await resolve(emit(event))

    return send


class _Run:
    """The state of one run: its context (replaceable by hooks), config, and the messages it added."""

    def __init__(
        self,
        context: AgentContext,
        config: LoopConfig,
        emit: Callable[[events.AgentEvent], Awaitable[None]],
        signal: AbortSignal | None,
        new_messages: list[AgentMessage],
    ) -> None:
        self.context = context
        self.config = config
        self.emit = emit
        self.signal = signal
        self.new_messages = new_messages
        self.last_turn: TurnContext | None = None
        self.pending: list[AgentMessage] = []
        self.explicit_continuation = False

    async def loop(self) -> None:
        self.pending = await self._poll(self.config.get_steering_messages)
        while True:
            more_tool_calls = True
            while more_tool_calls or self.pending:
                outcome = await self._turn()
                if outcome is None:
                    return
                more_tool_calls = outcome
            follow_ups = await self._poll(self.config.get_follow_up_messages)
            if follow_ups:
                self.explicit_continuation = False
                self.pending = follow_ups
                continue
            if self.explicit_continuation:
                # Nothing natural asked for a request, so the continue decision gets a context-only turn.
                self.explicit_continuation = False
                continue
            break
        await self.emit(events.agent_end(self.new_messages))

    async def _turn(self) -> bool | None:
        """One turn; ``None`` when the run has ended, else whether tool calls want another turn."""
        prepared = await self._start_next_turn()
        await self._append_pending([*prepared, *self.pending])
        self.pending = []
        await self._prepare_request()
        message = await stream_assistant_response(self.context, self.config, self.signal, self.emit)
        self.new_messages.append(plain(message))
        if message["stopReason"] in ("error", "aborted"):
            await self._finish_turn(message, [])
            await self.emit(events.agent_end(self.new_messages))
            return None
        batch = await self._run_tools(message)
        decision = await self._finish_turn(message, batch.messages)
        if decision and decision.get("action") == "end":
            await self.emit(events.agent_end(self.new_messages))
            return None
        more_tool_calls = bool(batch.messages) and not batch.terminate
        self.explicit_continuation = bool(decision) and decision.get("action") == "continue"
        self.pending = await self._poll(self.config.get_steering_messages)
        if more_tool_calls or self.pending:
            self.explicit_continuation = False
        return more_tool_calls

    async def _start_next_turn(self) -> list[AgentMessage]:
        if self.last_turn is None:
            return []
        prepared: list[AgentMessage] = []
        if self.config.prepare_next_turn is not None:
            update = await resolve(self.config.prepare_next_turn(self.last_turn, self.signal))
            if update:
                prepared = list(update.messages or [])
                self._apply(update)
        # Preparation may take long (compaction): pick up steering queued meanwhile, but only if the
        # earlier poll found nothing, or one-at-a-time mode would deliver two messages this turn.
        if not self.pending:
            self.pending = await self._poll(self.config.get_steering_messages)
        await self.emit(events.turn_start())
        return prepared

    async def _append_pending(self, messages: list[AgentMessage]) -> None:
        for message in declare_tool_changes(self.context, messages):
            await self.emit(events.message_start(message))
            await self.emit(events.message_end(message))
            self.context.messages.append(message)
            self.new_messages.append(message)

    async def _prepare_request(self) -> None:
        if self.config.prepare_request is None:
            return
        request = RequestContext(self.context, self.config.model, self.config.thinking_level)
        update = await resolve(self.config.prepare_request(request, self.signal))
        if update:
            self._apply(update)

    def _apply(self, update: TurnUpdate) -> None:
        if update.context is not None:
            self.context = update.context
        self.config.apply(update)

    async def _run_tools(self, message: AssistantMessage) -> ToolBatch:
        if not has_tool_calls(message):
            return ToolBatch([], terminate=False)
        if message["stopReason"] == "length":
            batch = await fail_truncated_tool_calls(message, self.emit)
        else:
            batch = await execute_tool_calls(self.context, message, self.config, self.signal, self.emit)
        results = [plain(result) for result in batch.messages]
        self.context.messages.extend(results)
        self.new_messages.extend(results)
        return batch

    async def _finish_turn(self, message: AssistantMessage, results: list[ToolResultMessage]) -> Any:
        self.last_turn = TurnContext(message, results, self.context, self.new_messages)
        decision = None
        if self.config.finish_turn is not None:
            decision = await resolve(self.config.finish_turn(self.last_turn, self.signal))
        await self.emit(events.turn_end(plain(message), results))
        return decision

    async def _poll(self, getter: Callable[[], Any] | None) -> list[AgentMessage]:
        if getter is None:
            return []
        return list(await resolve(getter()) or [])


async def stream_assistant_response(
    context: AgentContext,
    config: LoopConfig,
    signal: AbortSignal | None,
    emit: Callable[[events.AgentEvent], Awaitable[None]],
) -> AssistantMessage:
    """Ask the model once and emit the assistant message's events; returns the final message.

    The partial message sits at the end of ``context.messages`` while it streams and is replaced
    by the final one. The final message records the requested ``thinkingLevel``.
    """
    messages = context.messages
    if config.transform_context is not None:
        messages = await resolve(config.transform_context(messages, signal))
    llm_messages = await resolve(config.convert_to_llm(messages))
    options = await _stream_options(config, signal)
    stream = await resolve(
        config.stream_fn(config.model, normalize_context({"messages": llm_messages}), options)
    )
    streamed = False
    async for event in stream:
        kind = event["type"]
        if kind == "start":
            context.messages.append(event["partial"])
            streamed = True
            await emit(events.message_start(dict(event["partial"])))
        elif kind in _UPDATE_EVENTS and streamed:
            context.messages[-1] = event["partial"]
            await emit(events.message_update(dict(event["partial"]), event))
        elif kind in ("done", "error"):
            break
    return await _finish_response(context, config, await stream.result(), streamed, emit)


async def _finish_response(
    context: AgentContext,
    config: LoopConfig,
    final: AssistantMessage,
    streamed: bool,
    emit: Callable[[events.AgentEvent], Awaitable[None]],
) -> AssistantMessage:
    final["thinkingLevel"] = config.thinking_level
    if streamed:
        context.messages[-1] = plain(final)
    else:
        context.messages.append(plain(final))
        await emit(events.message_start(dict(final)))
    await emit(events.message_end(plain(final)))
    return final


async def _stream_options(config: LoopConfig, signal: AbortSignal | None) -> StreamOptions:
    base = config.stream_options or StreamOptions()
    api_key = None
    if config.get_api_key is not None:
        api_key = await resolve(config.get_api_key(config.model.provider))
    reasoning = None if config.thinking_level == "off" else config.thinking_level
    return dataclasses.replace(base, signal=signal, api_key=api_key or base.api_key, reasoning=reasoning)


def declare_tool_changes(context: AgentContext, pending: list[AgentMessage]) -> list[AgentMessage]:
    """Announce a change of executable tools to the model before the pending messages.

    ``context.tools`` is what can run; the transcript's system messages declare what the model may
    call. The difference becomes ``toolsAdded``/``toolsRemoved`` on the last pending system message
    (its own tool fields are treated as intent and replaced by the real delta), or on a new system
    message inserted before the first non-system pending message.
    """
    index = next((i for i in range(len(pending) - 1, -1, -1) if pending[i].get("role") == "system"), -1)
    system = pending[index] if index >= 0 else None
    baseline = list(pending)
    if system is not None:
        baseline[index] = _with_tool_changes(system, [], [])
    # Compared, not kept: tool_state_changes copies the declarations it adds.
    added, removed = tool_state_changes(
        current_tools([*context.messages, *baseline]),
        [tool_declaration(tool, copied=False) for tool in context.tools],
    )
    if system is not None:
        if not added and not removed and not system.get("toolsAdded") and not system.get("toolsRemoved"):
            return pending
        baseline[index] = _with_tool_changes(system, added, removed)
        return baseline
    if not added and not removed:
        return pending
    update = _with_tool_changes({"role": "system", "content": "", "timestamp": ms_now()}, added, removed)
    at = next((i for i, message in enumerate(pending) if message.get("role") != "system"), len(pending))
    return [*pending[:at], update, *pending[at:]]


def _with_tool_changes(
    message: AgentMessage, added: list[Any], removed: list[dict[str, str]]
) -> AgentMessage:
    copy = {key: value for key, value in message.items() if key not in ("toolsAdded", "toolsRemoved")}
    if added:
        copy["toolsAdded"] = added
    if removed:
        copy["toolsRemoved"] = removed
    return copy
