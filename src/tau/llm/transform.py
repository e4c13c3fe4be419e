"""Provider-side normalization of a transcript before it is serialized (pi-ai ``transformMessages``).

Every adapter runs the transcript through :func:`transform_messages` first, so the three wire
formats agree on what a replayed conversation means:

- assistant messages that ended in ``error`` or ``aborted`` are dropped (they may hold half a
  tool call or reasoning without its reply, which APIs reject);
- a tool call left without a result gets a synthetic error result ``No result provided`` before
  the next user or assistant message (or at the end);
- a system message that lands between a tool call and its results is held back until after the
  results, so tool results still follow their call;
- thinking produced by another provider, API or model is dropped (signatures and encrypted
  reasoning are only valid for the model that made them); text signatures and tool-call
  ``thoughtSignature`` are stripped for another model; tool-call ids may be rewritten by the
  adapter (``normalize_tool_call_id``) and the matching results follow;
- images sent to a model without image input become a short text note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tau.common.jsstr import ms_now
from tau.llm.messages import tool_calls
from tau.llm.types import Message, Model, ToolCall

__all__ = [
    "NO_RESULT_TEXT",
    "sanitize_surrogates",
    "split_error_tool_result_images",
    "transform_messages",
]

NO_RESULT_TEXT = "No result provided"
_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_ERROR_TOOL_IMAGE_PLACEHOLDER = "(image attached after the tool results)"

# A surrogate code point that is not half of a high+low pair (JS strings may hold them; most
# APIs reject them in JSON).
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")

NormalizeToolCallId = Callable[[str, Model, dict[str, Any]], str]


def sanitize_surrogates(text: str) -> str:
    """Remove unpaired UTF-16 surrogates; join paired ones into their code point."""
    if not _SURROGATE.search(text):
        return text
    text = _LONE_SURROGATE.sub("", text)
    if _SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return text


def _replace_images(content: list[dict[str, Any]], placeholder: str) -> list[dict[str, Any]]:
    """Replace each run of images with one ``placeholder`` text block."""
    result: list[dict[str, Any]] = []
    previous_was_placeholder = False
    for block in content:
        if block.get("type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.get("text") == placeholder
    return result


def split_error_tool_result_images(
    message: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]] | None:
    """Split the images out of an error tool result, for APIs that reject images there.

    Returns ``(text_content, caption, images)``: send ``text_content`` as the result, then the
    caption and the images after all tool results of the turn. ``None`` when nothing to split.
    """
    if not message.get("isError"):
        return None
    images = [block for block in message["content"] if block.get("type") == "image"]
    if not images:
        return None
    caption = f"Images from the error result of tool call {message['toolCallId']} ({message['toolName']}):"
    return _replace_images(message["content"], _ERROR_TOOL_IMAGE_PLACEHOLDER), caption, images


def _downgrade_images(messages: list[dict[str, Any]], model: Model) -> list[dict[str, Any]]:
    if "image" in model.input:
        return messages
    result = []
    for msg in messages:
        if msg["role"] == "user" and isinstance(msg["content"], list):
            msg = {**msg, "content": _replace_images(msg["content"], _USER_IMAGE_PLACEHOLDER)}
        elif msg["role"] == "toolResult":
            msg = {**msg, "content": _replace_images(msg["content"], _TOOL_IMAGE_PLACEHOLDER)}
        result.append(msg)
    return result


def _is_same_model(message: dict[str, Any], model: Model) -> bool:
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.id
    )


def _transform_assistant(
    message: dict[str, Any],
    model: Model,
    normalize: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> dict[str, Any]:
    same_model = _is_same_model(message, model)
    content: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            if not same_model:
                continue
            # Signed and redacted blocks are replayed even when their text is empty.
            if block.get("redacted") or block.get("thinkingSignature") or block.get("thinking", "").strip():
                content.append(block)
        elif kind == "text":
            content.append(block if same_model else {"type": "text", "text": block["text"]})
        elif kind == "toolCall":
            content.append(_transform_tool_call(block, message, model, same_model, normalize, id_map))
        else:
            content.append(block)
    return {**message, "content": content}


def _transform_tool_call(
    block: dict[str, Any],
    message: dict[str, Any],
    model: Model,
    same_model: bool,
    normalize: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> dict[str, Any]:
    if same_model:
        return block
    call = {key: value for key, value in block.items() if key != "thoughtSignature"}
    if normalize is not None:
        new_id = normalize(block["id"], model, message)
        if new_id != block["id"]:
            id_map[block["id"]] = new_id
            call["id"] = new_id
    return call


def _first_pass(
    messages: list[dict[str, Any]], model: Model, normalize: NormalizeToolCallId | None
) -> list[dict[str, Any]]:
    id_map: dict[str, str] = {}
    result = []
    for msg in messages:
        role = msg["role"]
        if role == "assistant":
            msg = _transform_assistant(msg, model, normalize, id_map)
        elif role == "toolResult":
            new_id = id_map.get(msg["toolCallId"])
            if new_id and new_id != msg["toolCallId"]:
                msg = {**msg, "toolCallId": new_id}
        result.append(msg)
    return result


class _ToolFlow:
    """Second pass: pairs tool calls with results, synthesizing the missing ones."""

    def __init__(self) -> None:
        self.result: list[dict[str, Any]] = []
        self.pending: list[ToolCall] = []
        self.answered: set[str] = set()
        self.held_system: list[dict[str, Any]] = []

    def close_pending(self) -> None:
        for call in self.pending:
            if call["id"] not in self.answered:
                self.result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
                        "isError": True,
                        "timestamp": ms_now(),
                    }
                )
        self.pending = []
        self.answered = set()
        self.result.extend(self.held_system)
        self.held_system = []

    def add(self, msg: dict[str, Any]) -> None:
        role = msg["role"]
        if role == "assistant":
            self.close_pending()
            if msg.get("stopReason") in ("error", "aborted"):
                return
            calls = tool_calls(msg)
            if calls:
                self.pending = calls
                self.answered = set()
            self.result.append(msg)
        elif role == "toolResult":
            self.answered.add(msg["toolCallId"])
            self.result.append(msg)
        elif role == "system" and self.pending:
            self.held_system.append(msg)
        elif role == "user":
            self.close_pending()
            self.result.append(msg)
        else:
            self.result.append(msg)


def transform_messages(
    messages: list[Message] | list[dict[str, Any]],
    model: Model,
    normalize_tool_call_id: NormalizeToolCallId | None = None,
) -> list[dict[str, Any]]:
    """Normalize a transcript for ``model`` (see the module docstring). Inputs are not mutated.

    ``normalize_tool_call_id(id, model, source_assistant)`` rewrites the ids of tool calls made by
    another model (Anthropic requires ``^[a-zA-Z0-9_-]{1,64}$``); results follow the new id.
    """
    repaired: list[dict[str, Any]] = [
        {**msg, "content": []} if msg.get("content") is None else dict(msg) for msg in messages
    ]
    transformed = _first_pass(_downgrade_images(repaired, model), model, normalize_tool_call_id)
    flow = _ToolFlow()
    for msg in transformed:
        flow.add(msg)
    flow.close_pending()
    return flow.result
