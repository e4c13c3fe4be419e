"""pi's message shapes, the agent-only roles included, and the accessors every layer above uses.

:mod:`tau.llm.types` declares what a provider sees (``system``, ``user``, ``assistant``,
``toolResult`` and their content blocks); this module adds the four roles a session projects besides
them (pi's ``CustomMessage``, ``BashExecutionMessage``, ``BranchSummaryMessage``,
``CompactionSummaryMessage``), their union :data:`AgentMessage`, and the questions code keeps asking
of a message: its text, its tool calls, its role, the message of a session entry.

Messages stay plain dicts with pi's camelCase keys (the session file, the JSON stream and the RPC
protocol carry them unchanged), so the shapes are TypedDicts: they describe, they never check. A
message read from a session file may hold anything, so every accessor accepts any value and answers
``""``, ``[]``, ``None`` or ``False`` where a field is missing or of the wrong type. Extensions
reach all of this through :mod:`tau.extension`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, TypeGuard, cast

from tau.llm.types import (
    AssistantMessage,
    Content,
    ImageContent,
    Message,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.session.messages import MODEL_ROLES, content_text

__all__ = [
    "MODEL_ROLES",
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "Content",
    "CustomMessage",
    "ImageContent",
    "Message",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolResultMessage",
    "UserMessage",
    "content_text",
    "entry_message",
    "has_tool_calls",
    "image_block",
    "is_assistant",
    "is_bash_execution",
    "is_custom",
    "is_system",
    "is_tool_result",
    "is_user",
    "message_key",
    "message_text",
    "plain",
    "role_of",
    "text_block",
    "tool_calls",
]


class CustomMessage(TypedDict):
    """A message an extension sent (``sendMessage``); the model sees it as a user message."""

    role: Literal["custom"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]
    timestamp: int


class BashExecutionMessage(TypedDict):
    """A ``!command`` the user ran; ``!!`` sets ``excludeFromContext`` (the model never sees it)."""

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]
    timestamp: int


class BranchSummaryMessage(TypedDict):
    """The summary of a branch the conversation came back from (``/tree``)."""

    role: Literal["branchSummary"]
    summary: str
    fromId: str | None
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    """The summary that stands for the messages a compaction left out."""

    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


AgentMessage = (
    Message | CustomMessage | BashExecutionMessage | BranchSummaryMessage | CompactionSummaryMessage
)
"""Any message of a session's context: the model roles and the four agent-only ones."""


def text_block(text: str) -> TextContent:
    """A text content block."""
    return {"type": "text", "text": text}


def image_block(data: str, mime_type: str) -> ImageContent:
    """An image content block: ``data`` is the image, base64-encoded."""
    return {"type": "image", "data": data, "mimeType": mime_type}


def plain(message: AgentMessage) -> dict[str, Any]:
    """A typed message as the plain dict it is (the same object).

    The agent and session layers keep messages as a session file holds them, as ``dict[str, Any]``;
    a message built with its shape (an assistant reply, a tool result) joins them through this.
    """
    return cast("dict[str, Any]", message)


def role_of(message: object) -> str | None:
    """The role of a message, or ``None`` when it is not an object or its role is not a string."""
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    return role if isinstance(role, str) else None


def is_system(message: object) -> TypeGuard[SystemMessage]:
    return isinstance(message, dict) and message.get("role") == "system"


def is_user(message: object) -> TypeGuard[UserMessage]:
    return isinstance(message, dict) and message.get("role") == "user"


def is_assistant(message: object) -> TypeGuard[AssistantMessage]:
    return isinstance(message, dict) and message.get("role") == "assistant"


def is_tool_result(message: object) -> TypeGuard[ToolResultMessage]:
    return isinstance(message, dict) and message.get("role") == "toolResult"


def is_custom(message: object, custom_type: str | None = None) -> TypeGuard[CustomMessage]:
    """A ``custom`` message (of ``custom_type``, when given)."""
    return (
        isinstance(message, dict)
        and message.get("role") == "custom"
        and (custom_type is None or message.get("customType") == custom_type)
    )


def is_bash_execution(message: object) -> TypeGuard[BashExecutionMessage]:
    return isinstance(message, dict) and message.get("role") == "bashExecution"


def message_text(message: object, separator: str = "\n") -> str:
    """The text of a message's content (any message with ``content``, a tool result's included).

    See :func:`content_text`; ``""`` when ``message`` is not an object.
    """
    return content_text(message.get("content"), separator) if isinstance(message, dict) else ""


def tool_calls(message: object) -> list[ToolCall]:
    """The ``toolCall`` blocks of an assistant message, in order (``[]`` for anything else)."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if _is_tool_call(block)]


def has_tool_calls(message: object) -> bool:
    """Whether a message's content holds a ``toolCall`` block."""
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(_is_tool_call(block) for block in content)


def _is_tool_call(block: object) -> TypeGuard[ToolCall]:
    return isinstance(block, dict) and block.get("type") == "toolCall"


def message_key(message: object) -> tuple[Any, Any, Any, Any]:
    """What identifies a message from one request to the next, when each request gets new copies.

    Its role, timestamp, ``toolCallId`` and ``customType`` (``None`` where absent; all four ``None``
    for a value that is not an object).
    """
    if not isinstance(message, dict):
        return (None, None, None, None)
    return (
        message.get("role"),
        message.get("timestamp"),
        message.get("toolCallId"),
        message.get("customType"),
    )


def entry_message(entry: object, role: str | None = None) -> dict[str, Any] | None:
    """The message of a session ``message`` entry (only of ``role``, when given), else ``None``."""
    if not isinstance(entry, dict) or entry.get("type") != "message":
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or (role is not None and message.get("role") != role):
        return None
    return message
