"""Message, content, usage and model types: pi-ai 1.6's JSON shapes as TypedDicts.

Everything that is data stays a plain dict with pi's camelCase keys, so messages go to the
session file, the JSON stream and the RPC protocol unchanged.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, NotRequired, TypedDict

from tau.common.dataclass import dataclass

__all__ = [
    "AssistantMessage",
    "AssistantMessageEvent",
    "Content",
    "Cost",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "TranscriptContext",
    "Usage",
    "UserMessage",
    "empty_usage",
]

StopReason = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]
    namespace: NotRequired[str]
    argumentsError: NotRequired[str]


Content = TextContent | ThinkingContent | ImageContent | ToolCall


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float
    totalFromProvider: NotRequired[bool]


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    cacheWrite1h: NotRequired[int]
    reasoning: NotRequired[int]
    totalTokens: int
    cost: Cost


class Tool(TypedDict):
    """A tool declaration as the model sees it: ``parameters`` is a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    constrainedSampling: NotRequired[Any]


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextContent]
    sections: NotRequired[dict[str, str | None]]
    toolsAdded: NotRequired[list[Tool]]
    toolsRemoved: NotRequired[list[dict[str, str]]]
    timestamp: int


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    timestamp: int
    errorMessage: NotRequired[str]
    responseModel: NotRequired[str]
    responseId: NotRequired[str]
    providerThinkingLevel: NotRequired[str]
    thinkingLevel: NotRequired[str]
    diagnostics: NotRequired[list[Any]]
    rawStopReason: NotRequired[str]
    endTurn: NotRequired[bool]
    durationMs: NotRequired[int]
    deferred: NotRequired[Any]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    details: NotRequired[Any]
    usage: NotRequired[Usage]
    nestedCalls: NotRequired[Any]
    isError: bool
    timestamp: int
    durationMs: NotRequired[int]


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class TranscriptContext(TypedDict):
    """What a provider receives: the transcript, system messages included (pi ≥ 0.86).

    The leading system message is the system prompt; later ones patch it (``sections``,
    ``toolsAdded``, ``toolsRemoved``). ``tau.llm.transcript`` replays them.
    """

    messages: list[Message]


# pi-ai's AssistantMessageEvent: plain dicts, ``type`` is one of
# start | text_start | text_delta | text_end | thinking_start | thinking_delta | thinking_end |
# toolcall_start | toolcall_delta | toolcall_end | done | error.
AssistantMessageEvent = dict[str, Any]


@dataclass(frozen=True)
class ModelCost:
    """Prices in USD per million tokens.

    ``tiers`` (pi's JSON shape, ``{"inputTokensAbove", "input", "output", "cacheRead", "cacheWrite"}``)
    replace the base prices when a request's input (input + cacheRead + cacheWrite) is above the
    tier's threshold; the highest matching threshold wins.
    """

    input: float = 0.0
    output: float = 0.0
    cacheRead: float = 0.0
    cacheWrite: float = 0.0
    tiers: tuple[dict[str, float], ...] = ()


@dataclass(frozen=True)
class Model:
    """A model the registry knows: where it lives, what it costs, how large its window is."""

    id: str
    provider: str
    api: str
    name: str = ""
    base_url: str | None = None
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The model as pi's JSON shape (RPC ``get_state``, ``set_model``)."""
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name or self.id,
            "api": self.api,
            "provider": self.provider,
        }
        if self.base_url:
            data["baseUrl"] = self.base_url
        data.update(
            reasoning=self.reasoning,
            input=list(self.input),
            cost={
                "input": self.cost.input,
                "output": self.cost.output,
                "cacheRead": self.cost.cacheRead,
                "cacheWrite": self.cost.cacheWrite,
                **({"tiers": [dict(tier) for tier in self.cost.tiers]} if self.cost.tiers else {}),
            },
            contextWindow=self.context_window,
            maxTokens=self.max_tokens,
        )
        return data


def empty_usage() -> Usage:
    """A zero usage record."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
