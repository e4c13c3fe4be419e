"""The agent's events in a session: extensions first, then listeners, then the session file.

Every ``message_end`` (system, user, assistant, toolResult, custom) is appended to the session at
once. A tool result carries the calls its tool made through ``execute_tool`` (``nestedCalls``); a
delivered steer or follow-up leaves the queue; a response that is not an error ends a retry.
"""

from __future__ import annotations

from typing import Any, cast

from tau.agent.agent import Agent
from tau.agent.events import AgentEvent
from tau.agent.session.bus import EventBus
from tau.agent.session.compaction import Compactor
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.nested import NestedCallRunner, combine_usage
from tau.agent.session.retry import Retrier
from tau.agent.session.run_state import RunState
from tau.agent.session.store import SessionStore
from tau.common.jsstr import ms_now
from tau.llm.messages import content_text
from tau.llm.stream import AbortSignal

__all__ = ["AgentEvents"]


class AgentEvents:
    """Hears the agent's events for one session (``agent.subscribe(events.on_agent_event)``).

    Args:
        store: the session file the messages are appended to.
        agent: the agent (its model decides whether a failed run will be retried).
        bus: the extension hooks and the listeners.
        run: the run state (turn index, the last assistant message, an abort requested).
        queues: the queued texts a delivered message leaves.
        retrier: ``willRetry`` and the end of a retry.
        compactor: the overflow recovery a new prompt or a good response resets.
        nested: the calls tools made through ``execute_tool``.
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        bus: EventBus,
        run: RunState,
        queues: InputQueues,
        retrier: Retrier,
        compactor: Compactor,
        nested: NestedCallRunner,
    ) -> None:
        self._store = store
        self._agent = agent
        self._bus = bus
        self._run = run
        self._queues = queues
        self._retrier = retrier
        self._compactor = compactor
        self._nested = nested

    async def on_agent_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        if event["type"] == "agent_start" and self._run.abort_requested:
            self._agent.abort()
        if event["type"] == "message_start" and event["message"].get("role") == "toolResult":
            self._attach_nested_calls(event["message"])
        elif event["type"] == "agent_end":
            self._nested.clear()
        if event["type"] == "message_start" and event["message"].get("role") == "user":
            self._compactor.overflow_recovery_attempted = False
            self._queues.remove_text(content_text(event["message"].get("content") or "", ""))
        await self._emit_extension_event(cast(dict[str, Any], event))
        if event["type"] == "agent_end":
            will_retry = self._retrier.will_retry_after(event["messages"], self._agent.state.model)
            self._bus.emit({**event, "willRetry": will_retry})
        else:
            self._bus.emit(cast(dict[str, Any], event))
        if event["type"] == "message_end":
            self._persist(event["message"])
        elif event["type"] == "turn_end":
            self._store.append_custom_messages(self._queues.take_custom())

    def _attach_nested_calls(self, message: dict[str, Any]) -> None:
        """Record the calls the tool made through ``execute_tool`` on its result (pi: at ``message_start``)."""
        taken = self._nested.take_record(message.get("toolCallId"))
        if taken is None:
            return
        calls, usage = taken
        if calls:
            message["nestedCalls"] = calls
        if usage:
            message["usage"] = combine_usage(message["usage"], usage) if message.get("usage") else usage

    def _persist(self, message: dict[str, Any]) -> None:
        self._store.save_message(message)
        if message.get("role") == "assistant":
            self._run.last_assistant = message
            if message.get("stopReason") not in ("error", "length"):
                self._compactor.overflow_recovery_attempted = False
            if message.get("stopReason") != "error":
                self._retrier.succeeded()

    async def _emit_extension_event(self, event: dict[str, Any]) -> None:
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


def _replace_in_place(target: dict[str, Any], replacement: dict[str, Any]) -> None:
    if target is replacement:
        return
    if replacement.get("role") != target.get("role"):
        return  # message_end replacements must keep the role (pi)
    if replacement.get("content") is None:
        replacement = {**replacement, "content": []}
    target.clear()
    target.update(replacement)
