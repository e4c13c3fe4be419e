"""The events extension handlers receive: one dataclass per pi 1.6 event (pi-host §5.4).

Attributes are snake_case (``event.tool_call_id``); everything that is data keeps pi's JSON shape
as plain dicts with camelCase keys (``event.messages[0]["toolCallId"]``). Mutable payloads are the
session's own objects: ``tool_call``'s ``input`` and ``before_agent_start``'s
``system_prompt_options`` are edited in place, ``context``'s ``messages`` are a deep copy that
handlers may edit in place.

``continue`` is a Python keyword: boundary events call it ``continue_``; results keep pi's key
(``{"continue": True}``).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from tau.extension.event_base import EVENT_TYPES, Event, event_class, event_from_payload
from tau.llm.stream import DeferredPayload

if TYPE_CHECKING:
    from tau.extension.tracked import ChangeLog

__all__ = [
    "EVENT_TYPES",
    "AfterProviderResponseEvent",
    "AgentBeforeSettleEvent",
    "AgentEndEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "CacheWarmingDecisionEvent",
    "ContextEvent",
    "ContextWithSystemEvent",
    "Event",
    "InputEvent",
    "McpServersChangeEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ProjectTrustEvent",
    "ProviderStreamEvent",
    "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionInfoChangedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ThinkingLevelSelectEvent",
    "ToolCallEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResultEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "UIPromptEndEvent",
    "UIPromptStartEvent",
    "UserBashEvent",
    "event_from_payload",
]


# -- startup and session -----------------------------------------------------------------------


@event_class
class ProjectTrustEvent(Event):
    """Whether to trust the project; handlers answer ``{"trusted": "yes"|"no"|"undecided"}``."""

    type: str = "project_trust"
    cwd: str = ""


@event_class
class ResourcesDiscoverEvent(Event):
    """After ``session_start``: handlers may add ``{"skillPaths", "promptPaths", "themePaths"}``."""

    type: str = "resources_discover"
    cwd: str = ""
    reason: str = "startup"


@event_class
class McpServersChangeEvent(Event):
    """An extension registered or unregistered an MCP server after the extensions were bound.

    ``servers`` is every registered server after the change (``{"name", "config",
    "extensionPath"}``). Handling this event marks an extension as the one that connects them.
    """

    type: str = "mcp_servers_change"
    servers: list[dict[str, Any]] = field(default_factory=list)


@event_class
class SessionStartEvent(Event):
    """``reason``: ``startup | reload | new | resume | fork``."""

    type: str = "session_start"
    reason: str = "startup"
    previous_session_file: str | None = None


@event_class
class SessionShutdownEvent(Event):
    """``reason``: ``quit | reload | new | resume | fork``."""

    type: str = "session_shutdown"
    reason: str = "quit"
    target_session_file: str | None = None


@event_class
class SessionInfoChangedEvent(Event):
    """pi's ``session_info_changed`` event."""

    type: str = "session_info_changed"
    name: str | None = None


@event_class
class SessionBeforeSwitchEvent(Event):
    """Answer ``{"cancel": True}`` to keep the current session."""

    type: str = "session_before_switch"
    reason: str = "new"
    target_session_file: str | None = None


@event_class
class SessionBeforeForkEvent(Event):
    """Answer ``{"cancel": True}`` or ``{"skipConversationRestore": True}``."""

    type: str = "session_before_fork"
    entry_id: str = ""
    position: str = "before"


@event_class
class SessionBeforeCompactEvent(Event):
    """Answer ``{"cancel": True}`` or ``{"compaction": {"summary", "firstKeptEntryId", "tokensBefore", ...}}``."""

    type: str = "session_before_compact"
    preparation: Any = None
    branch_entries: list[dict[str, Any]] = field(default_factory=list)
    custom_instructions: str | None = None
    reason: str = "manual"
    will_retry: bool = False
    signal: Any = None


@event_class
class SessionCompactEvent(Event):
    """pi's ``session_compact`` event."""

    type: str = "session_compact"
    compaction_entry: dict[str, Any] = field(default_factory=dict)
    from_extension: bool = False
    reason: str = "manual"
    will_retry: bool = False


@event_class
class SessionCompactFailedEvent(Event):
    """pi's ``session_compact_failed`` event."""

    type: str = "session_compact_failed"
    reason: str = "manual"
    error_message: str | None = None
    aborted: bool = False
    will_retry: bool = False
    from_extension: bool = False


@event_class
class SessionBeforeTreeEvent(Event):
    """``preparation``: ``{targetId, oldLeafId, commonAncestorId, entriesToSummarize, userWantsSummary, ...}``."""

    type: str = "session_before_tree"
    preparation: dict[str, Any] = field(default_factory=dict)
    signal: Any = None


@event_class
class SessionTreeEvent(Event):
    """pi's ``session_tree`` event."""

    type: str = "session_tree"
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    summary_entry: dict[str, Any] | None = None
    from_extension: bool | None = None


# -- input and runs ----------------------------------------------------------------------------


@event_class
class InputEvent(Event):
    """Answer ``{"action": "continue"}``, ``{"action": "transform", "text", "images"?}`` or ``{"action": "handled"}``."""

    type: str = "input"
    text: str = ""
    images: list[dict[str, Any]] | None = None
    source: str = "interactive"
    streaming_behavior: str | None = None


@event_class
class BeforeAgentStartEvent(Event):
    """Before a run: ``message_type`` ``"user"`` (``prompt``, ``images``) or ``"custom"`` (``message``).

    ``system_prompt`` is the prompt as rendered so far (an earlier handler's override included);
    ``system_prompt_options`` may be edited in place. Answer ``{"message": {...}}`` to add a custom
    message to the run's starting messages and/or ``{"systemPrompt": str}`` to replace the prompt
    for this run.
    """

    type: str = "before_agent_start"
    message_type: str = "user"
    prompt: str | None = None
    images: list[dict[str, Any]] | None = None
    message: dict[str, Any] | None = None
    system_prompt: str = ""
    system_prompt_options: dict[str, Any] = field(default_factory=dict)


@event_class
class AgentStartEvent(Event):
    """pi's ``agent_start`` event."""

    type: str = "agent_start"


@event_class
class AgentEndEvent(Event):
    """pi's ``agent_end`` event."""

    type: str = "agent_end"
    messages: list[dict[str, Any]] = field(default_factory=list)


@event_class
class _BoundaryEvent(Event):
    """A boundary (pi-host §4.7): handlers see the drafts and ``continue_`` proposed so far.

    Answer ``{"entries": [...drafts...]}`` and/or ``{"continue": bool}`` to replace those fields.
    ``context`` is the preview rebuilt from the drafts: ``{"contextEntries", "contextMessages",
    "llmMessages", "pendingMessages", "canContinue"}``.
    """

    outcome: str = "completed"
    entries: list[dict[str, Any]] = field(default_factory=list)
    continue_: bool = False
    context: dict[str, Any] = field(default_factory=dict)


@event_class
class AgentBeforeSettleEvent(_BoundaryEvent):
    """pi's ``agent_before_settle`` event."""

    type: str = "agent_before_settle"


@event_class
class AgentSettledEvent(Event):
    """Work requested here (``send_message`` with ``trigger_turn``) starts after every handler returned."""

    type: str = "agent_settled"
    aborted: bool = False


@event_class
class TurnStartEvent(Event):
    """pi's ``turn_start`` event."""

    type: str = "turn_start"
    turn_index: int = 0
    timestamp: int = 0


@event_class
class TurnEndEvent(_BoundaryEvent):
    """pi's ``turn_end`` event."""

    type: str = "turn_end"
    turn_index: int = 0
    message: dict[str, Any] = field(default_factory=dict)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    message_entry_id: str = ""
    tool_result_entry_ids: list[str] = field(default_factory=list)


@event_class
class MessageStartEvent(Event):
    """pi's ``message_start`` event."""

    type: str = "message_start"
    message: dict[str, Any] = field(default_factory=dict)


@event_class
class MessageUpdateEvent(Event):
    """pi's ``message_update`` event."""

    type: str = "message_update"
    message: dict[str, Any] = field(default_factory=dict)
    assistant_message_event: dict[str, Any] = field(default_factory=dict)


@event_class
class MessageEndEvent(Event):
    """Answer ``{"message": replacement}`` (same ``role``) to replace the message before it is saved."""

    type: str = "message_end"
    message: dict[str, Any] = field(default_factory=dict)


# -- tools -------------------------------------------------------------------------------------


@event_class
class ToolExecutionStartEvent(Event):
    """pi's ``tool_execution_start`` event."""

    type: str = "tool_execution_start"
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    parent_tool_call_id: str | None = None


@event_class
class ToolExecutionUpdateEvent(Event):
    """pi's ``tool_execution_update`` event."""

    type: str = "tool_execution_update"
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    partial_result: Any = None
    parent_tool_call_id: str | None = None


@event_class
class ToolExecutionEndEvent(Event):
    """pi's ``tool_execution_end`` event."""

    type: str = "tool_execution_end"
    tool_call_id: str = ""
    tool_name: str = ""
    result: Any = None
    is_error: bool = False
    duration_ms: int | None = None
    parent_tool_call_id: str | None = None


@event_class
class ToolCallEvent(Event):
    """Before a validated call runs. ``input`` is mutable (not re-validated); answer
    ``{"block": True, "reason": ...}`` to block it. The first block wins; a raising handler blocks."""

    type: str = "tool_call"
    tool_call_id: str = ""
    tool_name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    parent_tool_call_id: str | None = None


@event_class
class ToolResultEvent(Event):
    """After a call ran. Answer a partial patch ``{"content"?, "details"?, "structuredContent"?,
    "isError"?, "usage"?}``; later handlers see the patched result. New ``content`` without
    ``structuredContent`` drops the structured content. ``structured_content`` is ``None`` when absent."""

    type: str = "tool_result"
    tool_call_id: str = ""
    tool_name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    content: list[dict[str, Any]] = field(default_factory=list)
    details: Any = None
    structured_content: Any = None
    is_error: bool = False
    usage: dict[str, Any] | None = None
    parent_tool_call_id: str | None = None


@event_class
class UserBashEvent(Event):
    """``!cmd`` from the user; answer ``{"operations": BashOperations}`` or ``{"result": {...}}``."""

    type: str = "user_bash"
    command: str = ""
    exclude_from_context: bool = False
    cwd: str = ""


# -- requests ----------------------------------------------------------------------------------


@event_class
class ContextEvent(Event):
    """Before each request: a deep copy of the conversation without system messages.

    Edit the messages in place (the request keeps its cached head), or answer
    ``{"messages": new_list}`` (the request head is rebuilt as one leading system message).
    The copies are tracked: ``changes`` (a :class:`~tau.extension.tracked.ChangeLog`) tells an
    observer which of them changed since it last looked (``changes.mark``, ``changes.since(mark)``).
    """

    type: str = "context"
    messages: list[dict[str, Any]] = field(default_factory=list)
    changes: ChangeLog | None = field(default=None, repr=False, compare=False)


@event_class
class ContextWithSystemEvent(Event):
    """After every ``context`` handler: the full request transcript, system messages included."""

    type: str = "context_with_system"
    messages: list[dict[str, Any]] = field(default_factory=list)


@event_class
class BeforeProviderHeadersEvent(Event):
    """Edit ``headers`` in place (``None`` deletes a header); the result is ignored."""

    type: str = "before_provider_headers"
    headers: dict[str, Any] = field(default_factory=dict)


@event_class
class BeforeProviderRequestEvent(Event):
    """Any non-``None`` answer replaces the provider payload (chained)."""

    type: str = "before_provider_request"
    payload: Any = None


# (made when a handler first reads it; setattr: the type checker refuses a property over a field)
setattr(BeforeProviderRequestEvent, "payload", DeferredPayload.attribute("payload"))  # noqa: B010


@event_class
class AfterProviderResponseEvent(Event):
    """pi's ``after_provider_response`` event."""

    type: str = "after_provider_response"
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)


@event_class
class ProviderStreamEvent(Event):
    """pi's ``provider_stream_event`` event."""

    type: str = "provider_stream_event"
    provider: str = ""
    api: str = ""
    model: str = ""
    data: Any = None


@event_class
class CacheWarmingDecisionEvent(Event):
    """Answer ``{"action": "warm"|"stop"}``; the last answer wins."""

    type: str = "cache_warming_decision"
    warm_cost: float = 0.0
    miss_cost: float = 0.0
    continuation_probability: float = 0.0
    action: str = "stop"


@event_class
class ModelSelectEvent(Event):
    """pi's ``model_select`` event."""

    type: str = "model_select"
    model: Any = None
    previous_model: Any = None
    source: str = "set"


@event_class
class ThinkingLevelSelectEvent(Event):
    """pi's ``thinking_level_select`` event."""

    type: str = "thinking_level_select"
    level: str = ""
    previous_level: str = ""


@event_class
class UIPromptStartEvent(Event):
    """pi's ``ui_prompt_start`` event."""

    type: str = "ui_prompt_start"
    reason: str = "ui_prompt"
    kind: str = ""
    title: str | None = None


@event_class
class UIPromptEndEvent(Event):
    """pi's ``ui_prompt_end`` event."""

    type: str = "ui_prompt_end"
    reason: str = "ui_prompt"
    kind: str = ""
    title: str | None = None
