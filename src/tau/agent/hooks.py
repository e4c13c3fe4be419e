"""What one low-level run works on (:class:`AgentContext`, :class:`LoopConfig`) and what its hooks receive.

Every hook may be a plain function or an ``async def``; the loop awaits either. Hooks that stand
for an extension event return plain dicts with pi's keys (``{"block": True, "reason": ...}``,
``{"action": "continue"}``, ``{"content": [...], "isError": True}``); ``None`` means "no change".
The two hooks that replace run-time state (``prepare_request``, ``prepare_next_turn``) return a
:class:`TurnUpdate`, because a context, a tool list and a model are objects, not JSON.

Contracts (pi-agent-core ``AgentLoopConfig``): ``convert_to_llm``, ``transform_context``,
``get_api_key`` and the queue getters must not raise; a raise from them ends the run without the
normal event sequence (the :class:`~tau.agent.agent.Agent` then reports a failed turn). Tool hooks
may raise: the error becomes the call's error result.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import Any, Literal, TypeVar

from tau.common.dataclass import dataclass
from tau.llm.stream import AbortSignal, StreamFunction, StreamOptions
from tau.llm.types import AssistantMessage, Model, ToolCall, ToolResultMessage
from tau.tools.base import ToolContext, ToolDefinition, ToolResult

__all__ = [
    "AfterToolCallContext",
    "AgentContext",
    "AgentMessage",
    "BeforeToolCallContext",
    "LoopConfig",
    "RequestContext",
    "ToolCallOutcome",
    "ToolExecution",
    "TurnContext",
    "TurnUpdate",
    "resolve",
]

# A message of the agent's transcript: a model message or a session-level one (custom, bashExecution,
# compactionSummary, branchSummary), which ``convert_to_llm`` turns into model messages.
AgentMessage = dict[str, Any]
ToolExecution = Literal["parallel", "sequential"]
MaybeAwaitable = Any  # T | Awaitable[T]

T = TypeVar("T")


async def resolve(value: T | Awaitable[T]) -> T:
    """The value, awaited if a hook returned an awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass
class AgentContext:
    """The transcript the model sees and the tools it may call, for one run."""

    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[ToolDefinition] = field(default_factory=list)

    def copy(self) -> AgentContext:
        return AgentContext(list(self.messages), list(self.tools))

    def find_tool(self, name: str) -> ToolDefinition | None:
        return next((tool for tool in self.tools if tool.name == name), None)


@dataclass
class TurnContext:
    """A finished turn (pi ``AgentTurnContext``), given to ``finish_turn`` and ``prepare_next_turn``.

    Attributes:
        message: The assistant message of the turn.
        tool_results: Its tool-result messages, in source order.
        context: The run's context, with the message and results appended.
        new_messages: What the run returns if it ends here (prompt runs include the starting messages).
    """

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


@dataclass
class RequestContext:
    """The state right before a provider request (pi ``PrepareRequestContext``)."""

    context: AgentContext
    model: Model
    thinking_level: str


@dataclass
class TurnUpdate:
    """Replacement state for the next request; ``None`` fields keep the current value.

    ``messages`` (``prepare_next_turn`` only) are appended before the next request with the usual
    ``message_start``/``message_end`` events.
    """

    context: AgentContext | None = None
    messages: list[AgentMessage] | None = None
    model: Model | None = None
    thinking_level: str | None = None


@dataclass
class BeforeToolCallContext:
    """Given to ``before_tool_call`` once the arguments are valid (the extension ``tool_call`` event)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    context: AgentContext


@dataclass
class AfterToolCallContext:
    """Given to ``after_tool_call`` with the executed result (the extension ``tool_result`` event)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: ToolResult
    is_error: bool
    context: AgentContext


@dataclass
class ToolCallOutcome:
    """The final outcome of one tool call (pi ``AgentToolCallOutcome``).

    ``duration_ms`` is how long ``execute`` took; ``None`` when the tool never ran.
    """

    tool_call: ToolCall
    result: ToolResult
    is_error: bool
    duration_ms: int | None = None


@dataclass
class LoopConfig:
    """Everything one low-level run needs besides its context.

    Attributes:
        model: The model of the next request.
        stream_fn: The provider entry point (:class:`~tau.llm.stream.StreamFunction`).
        convert_to_llm: Agent messages → model messages, once per request.
        thinking_level: ``off`` … ``max``; recorded as the assistant message's ``thinkingLevel``.
        stream_options: Template of the per-request options; the loop fills ``signal``,
            ``api_key`` and ``reasoning``.
        get_api_key: ``(provider) -> key | None``, asked before every request.
        transform_context: ``(messages, signal) -> messages`` before ``convert_to_llm``.
        prepare_request: ``(RequestContext, signal) -> TurnUpdate | None`` before every request.
        prepare_next_turn: ``(TurnContext, signal) -> TurnUpdate | None`` between turns.
        finish_turn: ``(TurnContext, signal) -> {"action": "continue" | "end"} | None`` before
            each ``turn_end``.
        before_tool_call: ``(BeforeToolCallContext, signal) -> {"block", "reason", "terminate"} | None``.
        after_tool_call: ``(AfterToolCallContext, signal) -> {"content", "details",
            "structuredContent", "isError", "usage", "terminate"} | None``.
        get_steering_messages: ``() -> messages`` polled before the first request and after each turn.
        get_follow_up_messages: ``() -> messages`` polled when the run would stop.
        tool_execution: ``"parallel"`` (default) or ``"sequential"``.
        tool_context: ``(tool_call) -> ToolContext`` handed to ``execute``; the current
            directory by default.
    """

    model: Model
    stream_fn: StreamFunction
    convert_to_llm: Callable[[list[AgentMessage]], MaybeAwaitable]
    thinking_level: str = "off"
    stream_options: StreamOptions | None = None
    get_api_key: Callable[[str], MaybeAwaitable] | None = None
    transform_context: Callable[[list[AgentMessage], AbortSignal | None], MaybeAwaitable] | None = None
    prepare_request: Callable[[RequestContext, AbortSignal | None], MaybeAwaitable] | None = None
    prepare_next_turn: Callable[[TurnContext, AbortSignal | None], MaybeAwaitable] | None = None
    finish_turn: Callable[[TurnContext, AbortSignal | None], MaybeAwaitable] | None = None
    before_tool_call: Callable[[BeforeToolCallContext, AbortSignal | None], MaybeAwaitable] | None = None
    after_tool_call: Callable[[AfterToolCallContext, AbortSignal | None], MaybeAwaitable] | None = None
    get_steering_messages: Callable[[], MaybeAwaitable] | None = None
    get_follow_up_messages: Callable[[], MaybeAwaitable] | None = None
    tool_execution: ToolExecution = "parallel"
    tool_context: Callable[[ToolCall], ToolContext] | None = None

    def apply(self, update: TurnUpdate) -> None:
        """Take the model and thinking level of ``update`` for this and later requests."""
        if update.model is not None:
            self.model = update.model
        if update.thinking_level is not None:
            self.thinking_level = update.thinking_level
