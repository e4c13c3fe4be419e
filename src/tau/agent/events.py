"""The agent events of one low-level run, as the plain dicts pi's JSON stream writes.

Each constructor returns a dict whose keys (camelCase) and key order are pi 1.6's, so the JSON
and RPC modes can write the event as it is, after :func:`to_json_event` has reduced a
``message_update`` the way pi's JSON mode does.

Order of one run (``run_loop``)::

    agent_start, turn_start,
      message_start/message_end        for each starting message
      message_start (assistant, stopReason "pending"), message_update x N, message_end
      tool_execution_start / _update / _end, then message_start/message_end per tool result
    turn_end, [turn_start ...], agent_end

Session-level events (``agent_settled``, ``queue_update``, ``entry_appended``, compaction and
retry events) belong to the session layer, which also adds ``willRetry`` to ``agent_end``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from tau.llm.types import AssistantMessageEvent, ToolResultMessage

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentEventType",
    "AgentStart",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
    "agent_end",
    "agent_start",
    "message_end",
    "message_start",
    "message_update",
    "to_json_event",
    "tool_execution_end",
    "tool_execution_start",
    "tool_execution_update",
    "turn_end",
    "turn_start",
]

# An agent message: a model message or a session-level one (custom, bashExecution, summaries).
AgentMessage = dict[str, Any]

AgentEventType = Literal[
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
]


class AgentStart(TypedDict):
    type: Literal["agent_start"]


class AgentEnd(TypedDict):
    type: Literal["agent_end"]
    messages: list[AgentMessage]
    willRetry: NotRequired[bool]  # added by the session layer


class TurnStart(TypedDict):
    type: Literal["turn_start"]


class TurnEnd(TypedDict):
    type: Literal["turn_end"]
    message: AgentMessage
    toolResults: list[ToolResultMessage]


class MessageStart(TypedDict):
    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdate(TypedDict):
    type: Literal["message_update"]
    assistantMessageEvent: AssistantMessageEvent
    message: AgentMessage


class MessageEnd(TypedDict):
    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStart(TypedDict):
    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: Any
    parentToolCallId: NotRequired[str]


class ToolExecutionUpdate(TypedDict):
    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: Any
    partialResult: Any
    parentToolCallId: NotRequired[str]


class ToolExecutionEnd(TypedDict):
    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: dict[str, Any]
    isError: bool
    durationMs: NotRequired[int]
    parentToolCallId: NotRequired[str]


AgentEvent = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
)


def agent_start() -> AgentStart:
    return {"type": "agent_start"}


def agent_end(messages: list[AgentMessage]) -> AgentEnd:
    return {"type": "agent_end", "messages": messages}


def turn_start() -> TurnStart:
    return {"type": "turn_start"}


def turn_end(message: AgentMessage, tool_results: list[ToolResultMessage]) -> TurnEnd:
    return {"type": "turn_end", "message": message, "toolResults": tool_results}


def message_start(message: AgentMessage) -> MessageStart:
    return {"type": "message_start", "message": message}


def message_update(message: AgentMessage, event: AssistantMessageEvent) -> MessageUpdate:
    return {"type": "message_update", "assistantMessageEvent": event, "message": message}


def message_end(message: AgentMessage) -> MessageEnd:
    return {"type": "message_end", "message": message}


def _with_parent(event: dict[str, Any], parent_tool_call_id: str | None) -> Any:
    if parent_tool_call_id is not None:
        event["parentToolCallId"] = parent_tool_call_id
    return event


def tool_execution_start(
    tool_call_id: str, tool_name: str, args: Any, parent_tool_call_id: str | None = None
) -> ToolExecutionStart:
    event = {"type": "tool_execution_start", "toolCallId": tool_call_id, "toolName": tool_name, "args": args}
    return _with_parent(event, parent_tool_call_id)


def tool_execution_update(
    tool_call_id: str,
    tool_name: str,
    args: Any,
    partial_result: Any,
    parent_tool_call_id: str | None = None,
) -> ToolExecutionUpdate:
    event = {
        "type": "tool_execution_update",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "args": args,
        "partialResult": partial_result,
    }
    return _with_parent(event, parent_tool_call_id)


def tool_execution_end(
    tool_call_id: str,
    tool_name: str,
    result: dict[str, Any],
    is_error: bool,
    duration_ms: int | None = None,
    parent_tool_call_id: str | None = None,
) -> ToolExecutionEnd:
    event: dict[str, Any] = {
        "type": "tool_execution_end",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "result": result,
        "isError": is_error,
    }
    if duration_ms is not None:
        event["durationMs"] = duration_ms
    return _with_parent(event, parent_tool_call_id)


def to_json_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event as pi's JSON and RPC modes write it.

    Only ``message_update`` changes: the cumulative snapshots go (``message``, and ``partial`` in
    the stream event), the message's ``usage`` comes first, and ``toolcall_start`` gains the
    call's ``id`` and ``toolName``, which the later deltas no longer carry.
    """
    if event["type"] != "message_update":
        return event
    message = event["message"]
    if message.get("role") != "assistant":
        raise ValueError(
            f"message_update carries a {message.get('role')!r} message; expected an assistant message"
        )
    return {
        "type": "message_update",
        "usage": message.get("usage"),
        "assistantMessageEvent": _without_partial(event["assistantMessageEvent"]),
    }


def _without_partial(event: AssistantMessageEvent) -> AssistantMessageEvent:
    reduced = {key: value for key, value in event.items() if key != "partial"}
    if event["type"] == "toolcall_start":
        block = event["partial"]["content"][event["contentIndex"]]
        if block.get("type") != "toolCall":
            raise ValueError(f"toolcall_start at content index {event['contentIndex']} is not a tool call")
        reduced["id"] = block["id"]
        reduced["toolName"] = block["name"]
    return reduced
