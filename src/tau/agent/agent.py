"""The stateful agent (pi-agent-core ``Agent``): a transcript, tools, queues, and runs of the loop.

``Agent`` keeps the state that outlives one run (messages, tools, model, thinking level), turns
loop events into state (``is_streaming``, ``streaming_message``, ``pending_tool_calls``,
``error_message``) and hands every event to its listeners, awaiting each in subscription order.
A run is idle only once the listeners of its ``agent_end`` have returned.

Steering messages are delivered after the current turn; follow-ups when the agent would stop.
``abort()`` aborts the run's signal: the streaming response ends with ``stopReason: "aborted"``
(``Request was aborted``), running tools get the signal, calls not started yet fail with
``Operation aborted``. Queued messages survive an abort; call :meth:`Agent.clear_queues` for that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from typing import Any

from tau.agent import events
from tau.agent.hooks import AgentContext, AgentMessage, LoopConfig, ToolExecution, resolve
from tau.agent.loop import run_loop, run_loop_continue
from tau.agent.queues import MessageQueue, QueueMode
from tau.common.dataclass import dataclass
from tau.common.jsstr import ms_now
from tau.llm.messages import MODEL_ROLES, plain
from tau.llm.stream import AbortSignal, StreamFunction, StreamOptions
from tau.llm.transcript import create_initial_system_message, current_system_message, current_system_prompt
from tau.llm.types import ImageContent, Model, empty_usage
from tau.tools.base import ToolContext, ToolDefinition, tool_declaration

__all__ = ["Agent", "AgentBusyError", "AgentState", "Listener", "default_convert_to_llm"]

Listener = Callable[[events.AgentEvent, AbortSignal], Awaitable[None] | None]


class AgentBusyError(RuntimeError):
    """A run was requested while another is in progress; queue with ``steer``/``follow_up`` or wait."""


def default_convert_to_llm(messages: list[AgentMessage]) -> list[AgentMessage]:
    """Keep the model messages; drop every other role (the session layer supplies a real converter)."""
    return [message for message in messages if message.get("role") in MODEL_ROLES]


@dataclass
class AgentState:
    """What the agent holds between runs, and what it is doing now.

    ``messages`` and ``tools`` are the agent's own lists; assigning copies the given sequence.
    """

    model: Model
    thinking_level: str = "off"
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[ToolDefinition] = field(default_factory=list)
    is_streaming: bool = False
    streaming_message: AgentMessage | None = None
    pending_tool_calls: frozenset[str] = frozenset()
    error_message: str | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("messages", "tools"):
            value = list(value)
        super().__setattr__(name, value)

    @property
    def system_prompt(self) -> str:
        """The current system prompt, replayed from the transcript's system messages."""
        return current_system_prompt(self.messages)


@dataclass
class _ActiveRun:
    """The run in progress: the signal that aborts it and the future it resolves when done."""

    signal: AbortSignal
    done: asyncio.Future[None]


class Agent:
    """A transcript plus the machinery to extend it with model turns.

    Args:
        model: The model to call.
        stream_fn: The provider entry point.
        system_prompt: Seeds the leading system message (with the tools) unless ``messages``
            already starts with a system message.
        tools: The executable tools.
        messages: An existing transcript.
        thinking_level: ``off`` … ``max``.
        convert_to_llm, transform_context, get_api_key, before_tool_call, after_tool_call,
            finish_turn, prepare_request, prepare_next_turn, tool_context: the hooks of
            :class:`~tau.agent.hooks.LoopConfig`; they may be replaced later as attributes.
        steering_mode, follow_up_mode: ``"one-at-a-time"`` (default) or ``"all"``.
        tool_execution: ``"parallel"`` (default) or ``"sequential"``.
        stream_options: Template of the per-request provider options (session id, cache, ...).
    """

    def __init__(
        self,
        *,
        model: Model,
        stream_fn: StreamFunction,
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        messages: Sequence[AgentMessage] = (),
        thinking_level: str = "off",
        convert_to_llm: Callable[..., Any] | None = None,
        transform_context: Callable[..., Any] | None = None,
        get_api_key: Callable[..., Any] | None = None,
        before_tool_call: Callable[..., Any] | None = None,
        after_tool_call: Callable[..., Any] | None = None,
        finish_turn: Callable[..., Any] | None = None,
        prepare_request: Callable[..., Any] | None = None,
        prepare_next_turn: Callable[..., Any] | None = None,
        tool_context: Callable[..., ToolContext] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: ToolExecution = "parallel",
        stream_options: StreamOptions | None = None,
    ) -> None:
        self.state = AgentState(
            model=model, thinking_level=thinking_level, messages=list(messages), tools=list(tools)
        )
        if not (self.state.messages and self.state.messages[0].get("role") == "system"):
            head = create_initial_system_message(
                system_prompt, [tool_declaration(t) for t in self.state.tools]
            )
            if head is not None:
                self.state.messages.insert(0, plain(head))
        self.stream_fn = stream_fn
        self.convert_to_llm = convert_to_llm or default_convert_to_llm
        self.transform_context = transform_context
        self.get_api_key = get_api_key
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.finish_turn = finish_turn
        self.prepare_request = prepare_request
        self.prepare_next_turn = prepare_next_turn
        self.tool_context = tool_context
        self.tool_execution: ToolExecution = tool_execution
        self.stream_options = stream_options
        self._steering = MessageQueue(steering_mode)
        self._follow_up = MessageQueue(follow_up_mode)
        self._listeners: list[Listener] = []
        self._active: _ActiveRun | None = None

    # -- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, signal)`` for every event (awaited in order); returns an unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # -- queues ------------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    @property
    def steering_messages(self) -> list[AgentMessage]:
        return self._steering.messages

    @property
    def follow_up_messages(self) -> list[AgentMessage]:
        return self._follow_up.messages

    def steer(self, message: AgentMessage | str) -> None:
        """Queue a message to deliver after the current turn (its tool calls still run)."""
        self._steering.enqueue(_as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        """Queue a message to deliver only when the agent would otherwise stop."""
        self._follow_up.enqueue(_as_message(message))

    def clear_steering_queue(self) -> list[AgentMessage]:
        return self._steering.clear()

    def clear_follow_up_queue(self) -> list[AgentMessage]:
        return self._follow_up.clear()

    def clear_queues(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Empty both queues; returns ``(steering, follow_up)`` as they were."""
        return self._steering.clear(), self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return self._steering.has_items() or self._follow_up.has_items()

    def peek_queued_messages(self) -> list[AgentMessage]:
        """The messages the next drain point would deliver, without taking them."""
        return self._steering.peek() or self._follow_up.peek()

    # -- runs --------------------------------------------------------------------------------

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the current run, if one is active."""
        return self._active.signal if self._active else None

    @property
    def is_idle(self) -> bool:
        return self._active is None

    def abort(self) -> None:
        """Abort the current run, if any; :meth:`wait_for_idle` waits for it to wind down."""
        if self._active is not None:
            self._active.signal.abort()

    async def abort_and_wait(self) -> None:
        """Abort the current run and return once it is idle (what a user's Esc or ``abort`` does)."""
        self.abort()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        """Return once the current run and its ``agent_end`` listeners have finished."""
        if self._active is not None:
            await asyncio.shield(self._active.done)

    def reset(self) -> None:
        """Forget the conversation and the queues, keeping the current system prompt and tools."""
        if self._active is not None:
            raise AgentBusyError("Agent is already processing. Wait for completion before resetting.")
        head = current_system_message(self.state.messages)
        self.state.messages = [plain(head)] if head else []
        self.state.streaming_message = None
        self.state.pending_tool_calls = frozenset()
        self.state.error_message = None
        self.clear_queues()

    async def prompt(
        self, message: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent] = ()
    ) -> None:
        """Start a run from a text (with optional images), a message, or several messages."""
        if self._active is not None:
            raise AgentBusyError(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
                "or wait for completion."
            )
        await self._run_prompt(_prompt_messages(message, images))

    async def continue_run(self) -> None:
        """Start a run from the transcript as it is (pi ``continue()``).

        After an assistant message only queued messages can continue: steering first, else
        follow-ups, become the starting messages.
        """
        if self._active is not None:
            raise AgentBusyError("Agent is already processing. Wait for completion before continuing.")
        messages = self.state.messages
        if not messages or all(message.get("role") == "system" for message in messages):
            raise ValueError("No messages to continue from")
        if messages[-1].get("role") != "assistant":
            await self._run(
                lambda signal: run_loop_continue(self._context(), self._config(), self._process, signal)
            )
            return
        steering = self._steering.drain()
        if steering:
            await self._run_prompt(steering, skip_initial_steering_poll=True)
            return
        follow_ups = self._follow_up.drain()
        if follow_ups:
            await self._run_prompt(follow_ups)
            return
        raise ValueError("Cannot continue from message role: assistant")

    async def _run_prompt(
        self, messages: list[AgentMessage], skip_initial_steering_poll: bool = False
    ) -> None:
        await self._run(
            lambda signal: run_loop(
                messages, self._context(), self._config(skip_initial_steering_poll), self._process, signal
            )
        )

    def _context(self) -> AgentContext:
        return AgentContext(list(self.state.messages), list(self.state.tools))

    def _config(self, skip_initial_steering_poll: bool = False) -> LoopConfig:
        skip = [skip_initial_steering_poll]

        def steering() -> list[AgentMessage]:
            if skip[0]:
                skip[0] = False
                return []
            return self._steering.drain()

        return LoopConfig(
            model=self.state.model,
            stream_fn=self.stream_fn,
            convert_to_llm=self.convert_to_llm,
            thinking_level=self.state.thinking_level,
            stream_options=self.stream_options,
            get_api_key=self.get_api_key,
            transform_context=self.transform_context,
            prepare_request=self.prepare_request,
            prepare_next_turn=self.prepare_next_turn,
            finish_turn=self.finish_turn,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            get_steering_messages=steering,
            get_follow_up_messages=self._follow_up.drain,
            tool_execution=self.tool_execution,
            tool_context=self.tool_context,
        )

    async def _run(self, start: Callable[[AbortSignal], Awaitable[Any]]) -> None:
        if self._active is not None:
            raise AgentBusyError("Agent is already processing.")
        self._active = _ActiveRun(AbortSignal(), asyncio.get_running_loop().create_future())
        self.state.is_streaming = True
        self.state.streaming_message = None
        self.state.error_message = None
        try:
            await start(self._active.signal)
        except Exception as exc:  # a hook broke its no-raise contract: report a failed turn
            await self._report_failure(exc, self._active.signal.aborted)
        finally:
            self._finish_run()

    async def _report_failure(self, exc: Exception, aborted: bool) -> None:
        model = self.state.model
        failure: AgentMessage = {
            "role": "assistant",
            "content": [{"type": "text", "text": ""}],
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "aborted" if aborted else "error",
            "errorMessage": str(exc) or type(exc).__name__,
            "timestamp": ms_now(),
        }
        await self._process(events.message_start(failure))
        await self._process(events.message_end(failure))
        await self._process(events.turn_end(failure, []))
        await self._process(events.agent_end([failure]))

    def _finish_run(self) -> None:
        self.state.is_streaming = False
        self.state.streaming_message = None
        self.state.pending_tool_calls = frozenset()
        active, self._active = self._active, None
        if active is not None and not active.done.done():
            active.done.set_result(None)

    async def _process(self, event: events.AgentEvent) -> None:
        """Fold the event into the state, then await every listener in subscription order."""
        self._reduce(event)
        if self._active is None:
            raise RuntimeError("Agent listener invoked outside an active run")
        signal = self._active.signal
        for listener in list(self._listeners):
            await resolve(listener(event, signal))

    def _reduce(self, event: events.AgentEvent) -> None:
        state = self.state
        if event["type"] == "message_start" or event["type"] == "message_update":
            state.streaming_message = event["message"]
        elif event["type"] == "message_end":
            state.streaming_message = None
            state.messages.append(event["message"])
        elif event["type"] == "tool_execution_start":
            state.pending_tool_calls = state.pending_tool_calls | {event["toolCallId"]}
        elif event["type"] == "tool_execution_end":
            state.pending_tool_calls = state.pending_tool_calls - {event["toolCallId"]}
        elif event["type"] == "turn_end":
            message = event["message"]
            if message.get("role") == "assistant" and message.get("errorMessage"):
                state.error_message = message["errorMessage"]
        elif event["type"] == "agent_end":
            state.streaming_message = None


def _as_message(message: AgentMessage | str) -> AgentMessage:
    if isinstance(message, str):
        return {"role": "user", "content": [{"type": "text", "text": message}], "timestamp": ms_now()}
    return message


def _prompt_messages(
    message: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent]
) -> list[AgentMessage]:
    if isinstance(message, str):
        content: list[Any] = [{"type": "text", "text": message}, *images]
        return [{"role": "user", "content": content, "timestamp": ms_now()}]
    if isinstance(message, dict):
        return [message]
    return list(message)
