"""The Anthropic Messages request body, built as pi 1.6 builds it (``buildParams``/``convertMessages``).

Model compat switches (``models.json`` ``compat`` or the catalogue):

- ``supportsMidConvoSystemMessages``: later system messages go in place as ``role: "system"``
  messages (held until just before the next assistant message, since tool results must follow
  their call); otherwise they are folded into the leading ``system`` prompt.
- ``supportsMidConvoToolChanges`` (with the above and initial tools): the top-level tool list stays
  fixed (the first tools plus a never-used deferred placeholder that keeps Anthropic's hidden tool
  scaffolding in the cached prefix); later tools travel in those system messages as
  ``tool_addition`` / ``tool_removal`` blocks (``inline-tools`` beta).
- ``supportsMidConvoEffort``: the thinking level travels as effort-only system messages (one before
  each earlier reply, with the level it was made at, one at the end), so changing it keeps the
  cache; the top-level effort stays ``low`` and thinking is adaptive with block binding.
- ``forceAdaptiveThinking``, ``supportsStrictTools``, ``supportsEagerToolInputStreaming``,
  ``supportsLongCacheRetention``, ``supportsCacheControlOnTools``, ``supportsTemperature``,
  ``allowEmptySignature``, ``thinkingLevelMap``.

Prompt-cache breakpoints, as pi places them: the system block, the last top-level tool, and the last
block of the last message when that message is a user or system message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.llm.providers._common import (
    adjust_max_tokens_for_thinking,
    clamp_max_tokens_to_context,
    clamp_thinking_level,
    has_header,
)
from tau.llm.providers._strict import prefers_strict, resolve_strict, tool_parameters
from tau.llm.stream import StreamOptions
from tau.llm.transcript import (
    current_tools,
    initial_system_message,
    render_system_message_update,
    resolve_transcript,
    system_message_text,
)
from tau.llm.transform import sanitize_surrogates, split_error_tool_result_images, transform_messages
from tau.llm.types import Model, TranscriptContext

__all__ = ["BuiltRequest", "build_request", "compat_of"]

INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
_EFFORTS = ("low", "medium", "high", "xhigh", "max")

DEFERRED_TOOL_PLACEHOLDER = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}

# Keywords Anthropic's strict tool use rejects for the whole request.
_STRICT_UNSUPPORTED = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
}
_STRICT_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
}
_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _strict_unsupported(key: str, value: Any) -> bool:
    if key in _STRICT_UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1)
    if key == "format":
        return not isinstance(value, str) or value not in _STRICT_FORMATS
    return False


def compat_of(model: Model) -> dict[str, Any]:
    """The Anthropic compat switches with pi's defaults."""
    compat = model.compat
    return {
        "eager": compat.get("supportsEagerToolInputStreaming", True),
        "long_cache": compat.get("supportsLongCacheRetention", True),
        "cache_tools": compat.get("supportsCacheControlOnTools", True),
        "temperature": compat.get("supportsTemperature", True),
        "empty_signature": compat.get("allowEmptySignature", False),
        "strict": compat.get("supportsStrictTools", False),
        "adaptive": compat.get("forceAdaptiveThinking", False),
        "mid_system": compat.get("supportsMidConvoSystemMessages", False),
        "mid_tools": compat.get("supportsMidConvoToolChanges", False),
        "mid_effort": compat.get("supportsMidConvoEffort", False),
    }


@dataclass
class BuiltRequest:
    """The body, and what the adapter needs to know about it."""

    params: dict[str, Any]
    has_preferred_strict_tools: bool = False
    provider_thinking_level: str | None = None


@dataclass
class _Thinking:
    """The thinking settings of one request (pi's ``thinkingEnabled``/``effort``/budget options)."""

    enabled: bool
    max_tokens: int
    effort: str | None = None
    budget: int | None = None


@dataclass
class _Tools:
    """Converts tool declarations; remembers whether a ``strict: "prefer"`` tool went out strict."""

    model: Model
    cache_control: dict[str, Any] | None
    disable_preferred_strict: bool
    preferred_strict: bool = False
    compat: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.compat = compat_of(self.model)

    def convert(
        self, tools: Sequence[Mapping[str, Any]], cache_control: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        converted = []
        for position, tool in enumerate(tools):
            if self.disable_preferred_strict and prefers_strict(tool):
                strict = None
            else:
                strict = resolve_strict(tool, self.compat["strict"], _strict_unsupported)
            if strict and prefers_strict(tool):
                self.preferred_strict = True
            entry = self._tool(tool, strict)
            if cache_control is not None and position == len(tools) - 1:
                entry["cache_control"] = cache_control
            converted.append(entry)
        return converted

    def _tool(self, tool: Mapping[str, Any], strict: bool | None) -> dict[str, Any]:
        schema = tool_parameters(tool, strict)
        input_schema: dict[str, Any] = {
            "type": "object",
            "properties": schema.get("properties", {}),
            "required": schema.get("required", []),
        }
        # Anthropic rejects root anyOf/oneOf/allOf; keep only what property $refs and extras need.
        for key in ("additionalProperties", "$defs", "definitions"):
            if key in schema:
                input_schema[key] = schema[key]
        if strict:
            input_schema = {**schema, **input_schema}
        entry: dict[str, Any] = {"name": tool["name"], "description": tool["description"]}
        if self.compat["eager"]:
            entry["eager_input_streaming"] = True
        if strict:
            entry["strict"] = True
        entry["input_schema"] = input_schema
        return entry


# -- messages ----------------------------------------------------------------------------------


def _normalize_tool_call_id(call_id: str, _model: Model, _source: dict[str, Any]) -> str:
    return _TOOL_ID.sub("_", call_id)[:64]


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def _result_content(content: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A tool result's content: one string without images, else blocks (text first if none)."""
    if not any(block["type"] == "image" for block in content):
        return sanitize_surrogates("\n".join(block["text"] for block in content))
    blocks = [
        {"type": "text", "text": sanitize_surrogates(block["text"])}
        if block["type"] == "text"
        else _image(block)
        for block in content
    ]
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _user(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)} if content.strip() else None
    blocks = []
    for block in content:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        else:
            blocks.append(_image(block))
    return {"role": "user", "content": blocks} if blocks else None


def _thinking_block(block: dict[str, Any], allow_empty_signature: bool) -> dict[str, Any] | None:
    if block.get("redacted"):
        return {"type": "redacted_thinking", "data": block.get("thinkingSignature", "")}
    signature = block.get("thinkingSignature") or ""
    thinking = block.get("thinking", "")
    if not thinking.strip() and not signature.strip():
        return None
    if signature.strip():
        return {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": signature}
    # No signature (an aborted stream): replay as text, unless the server accepts empty ones.
    if allow_empty_signature:
        return {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": ""}
    return {"type": "text", "text": sanitize_surrogates(thinking)}


def _assistant(message: dict[str, Any], allow_empty_signature: bool) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block["type"]
        if kind == "text" and block["text"].strip():
            blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            converted = _thinking_block(block, allow_empty_signature)
            if converted is not None:
                blocks.append(converted)
        elif kind == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("arguments") or {},
                }
            )
    return {"role": "assistant", "content": blocks} if blocks else None


def _tool_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    error_images: list[dict[str, Any]] = []
    for result in results:
        split = split_error_tool_result_images(result)
        content = split[0] if split else result["content"]
        blocks.append(
            {
                "type": "tool_result",
                "tool_use_id": result["toolCallId"],
                "content": _result_content(content),
                "is_error": bool(result.get("isError")),
            }
        )
        if split:
            # Anthropic rejects images inside error results: they follow all results of the turn.
            error_images.append({"type": "text", "text": split[1]})
            error_images.extend(_image(image) for image in split[2])
    return {"role": "user", "content": blocks + error_images}


def _system_update(message: dict[str, Any], tools: _Tools | None) -> dict[str, Any] | None:
    """A later system message in place: its rendered update, then native tool changes."""
    blocks: list[dict[str, Any]] = []
    text = render_system_message_update(message)
    if text:
        blocks.append({"type": "text", "text": sanitize_surrogates(text)})
    if tools is not None:
        added = message.get("toolsAdded") or []
        redefined = {tool["name"] for tool in added}
        for removed in message.get("toolsRemoved") or []:
            if removed["name"] not in redefined:  # a new definition replaces the old one by itself
                blocks.append(
                    {"type": "tool_removal", "tool": {"type": "tool_reference", "name": removed["name"]}}
                )
        for definition in tools.convert(added):
            blocks.append(
                {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
            )
    return {"role": "system", "content": blocks} if blocks else None


def convert_messages(
    messages: list[dict[str, Any]],
    cache_control: dict[str, Any] | None,
    allow_empty_signature: bool = False,
    tools: _Tools | None = None,
    effort_provider: str | None = None,
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """Transcript messages (without the leading system message) as Anthropic ``messages``.

    Returns the messages and, for effort markers, the effort each earlier reply was made at.
    """
    params: list[dict[str, Any]] = []
    levels: dict[int, str] = {}
    # Later system messages wait for the next assistant message: tool results must directly
    # follow their tool_use, and an update must not land before a user message's reply.
    pending: list[dict[str, Any]] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message["role"]
        if role == "system":
            update = _system_update(message, tools)
            if update is not None:
                pending.append(update)
        elif role == "user":
            user = _user(message)
            if user is not None:
                params.append(user)
        elif role == "assistant":
            assistant = _assistant(message, allow_empty_signature)
            if assistant is not None:
                params.extend(pending)
                pending.clear()
                level = message.get("providerThinkingLevel")
                if effort_provider and _own_reply(message, effort_provider) and level in _EFFORTS:
                    levels[len(params)] = level
                params.append(assistant)
        elif role == "toolResult":
            end = index
            while end < len(messages) and messages[end]["role"] == "toolResult":
                end += 1
            params.append(_tool_results(messages[index:end]))
            index = end - 1
        index += 1
    params.extend(pending)
    if cache_control is not None:
        _mark_last_message(params, cache_control)
    return params, levels


def _own_reply(message: dict[str, Any], provider: str) -> bool:
    return message.get("api") == "anthropic-messages" and message.get("provider") == provider


def _mark_last_message(params: list[dict[str, Any]], cache_control: dict[str, Any]) -> None:
    """Cache the conversation so far: a breakpoint on the last block of a trailing user/system message."""
    if not params or params[-1]["role"] not in ("user", "system"):
        return
    last = params[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": cache_control}]
    elif last["content"] and last["content"][-1]["type"] in (
        "text",
        "image",
        "tool_result",
        "tool_addition",
        "tool_removal",
    ):
        last["content"][-1]["cache_control"] = cache_control


def _insert_effort_markers(
    messages: list[dict[str, Any]], levels: dict[int, str], active: str
) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if index in levels:
            result.append({"role": "system", "content": [], "output_config": {"effort": levels[index]}})
        result.append(message)
    result.append({"role": "system", "content": [], "output_config": {"effort": active}})
    return result


# -- the whole request -------------------------------------------------------------------------


def _cache_control(model: Model, retention: str | None) -> dict[str, Any] | None:
    if retention == "none":
        return None
    if retention == "long" and compat_of(model)["long_cache"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _effort_for(model: Model, level: str) -> str:
    mapped = (model.compat.get("thinkingLevelMap") or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


def _thinking(model: Model, messages: Sequence[Mapping[str, Any]], options: StreamOptions) -> _Thinking:
    """pi's ``streamSimple`` mapping of a thinking level to Anthropic options."""
    level = clamp_thinking_level(model, options.reasoning)
    base_max = clamp_max_tokens_to_context(model, messages, options.max_tokens or model.max_tokens)
    if level is None:
        return _Thinking(enabled=False, max_tokens=base_max)
    if compat_of(model)["adaptive"]:
        return _Thinking(enabled=True, max_tokens=base_max, effort=_effort_for(model, level))
    max_tokens, budget = adjust_max_tokens_for_thinking(base_max, model.max_tokens, level)
    max_tokens = clamp_max_tokens_to_context(model, messages, max_tokens)
    return _Thinking(enabled=True, max_tokens=max_tokens, budget=min(budget, max(0, max_tokens - 1024)))


def _configured_betas(model: Model, options: StreamOptions) -> list[str] | None:
    """An explicit ``anthropic-beta`` header wins over the betas pi would choose."""
    value = None
    for headers in (model.headers, options.headers):
        for key, header in (headers or {}).items():
            if key.lower() == "anthropic-beta":
                value = header
    if value is None:
        return None
    return list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))


def _betas(model: Model, thinking: _Thinking, tools_present: bool, native_tools: bool) -> list[str]:
    compat = compat_of(model)
    betas = []
    if tools_present and not compat["eager"]:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if model.reasoning and thinking.enabled and not compat["adaptive"]:
        betas.append(INTERLEAVED_THINKING_BETA)
    if compat["mid_effort"]:
        betas += [MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA]
    if native_tools:
        betas.append(INLINE_TOOLS_BETA)
    return list(dict.fromkeys(betas))


def build_request(
    model: Model,
    context: TranscriptContext,
    options: StreamOptions | None = None,
    *,
    disable_preferred_strict: bool = False,
) -> BuiltRequest:
    """The request body pi 1.6 would send for this transcript (``stream: true``, ``betas`` included)."""
    opts = options or StreamOptions()
    compat = compat_of(model)
    cache_control = _cache_control(model, opts.cache_retention)
    transcript = resolve_transcript(context, compat["mid_system"])["messages"]
    head = initial_system_message(transcript)
    transformed = transform_messages(transcript, model, _normalize_tool_call_id)
    conversation = transformed[1:] if head else transformed
    thinking = _thinking(model, transcript, opts)
    level_map = model.compat.get("thinkingLevelMap") or {}
    thinking_disabled = model.reasoning and not thinking.enabled and level_map.get("off", "") is not None
    effort_messages = compat["mid_effort"] and not thinking_disabled
    active_effort = thinking.effort or "high"

    initial_tools = list(head.get("toolsAdded") or []) if head else []
    native_tools = compat["mid_system"] and compat["mid_tools"] and bool(initial_tools)
    tools = _Tools(model, cache_control, disable_preferred_strict)
    tool_cache = cache_control if compat["cache_tools"] else None
    messages, levels = convert_messages(
        conversation,
        cache_control,
        compat["empty_signature"],
        tools if native_tools else None,
        model.provider if effort_messages else None,
    )
    params: dict[str, Any] = {
        "model": model.id,
        "messages": _insert_effort_markers(messages, levels, active_effort) if effort_messages else messages,
        "max_tokens": thinking.max_tokens,
        "stream": True,
    }
    current = current_tools(transcript)
    betas = _betas(model, thinking, bool(current), native_tools)
    if betas and _configured_betas(model, opts) is None:
        params["betas"] = betas
    system_text = system_message_text(head) if head else ""
    if system_text:
        block: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(system_text)}
        if cache_control is not None:
            block["cache_control"] = cache_control
        params["system"] = [block]
    if (
        opts.temperature is not None
        and not thinking.enabled
        and not compat["mid_effort"]
        and compat["temperature"]
    ):
        params["temperature"] = opts.temperature
    if native_tools:
        params["tools"] = [*tools.convert(initial_tools, tool_cache), DEFERRED_TOOL_PLACEHOLDER]
    elif current:
        params["tools"] = tools.convert(current, tool_cache)
    params.update(_thinking_params(model, thinking, thinking_disabled, effort_messages))
    return BuiltRequest(params, tools.preferred_strict, active_effort if effort_messages else None)


def _thinking_params(
    model: Model, thinking: _Thinking, disabled: bool, effort_messages: bool
) -> dict[str, Any]:
    if disabled:
        return {"thinking": {"type": "disabled"}}
    if effort_messages:
        # The effort markers set each reply's level; the top-level one is part of the cached
        # prompt, so it stays fixed, and low, since organizations may cap effort.
        return {
            "thinking": {
                "type": "adaptive",
                "display": "summarized",
                "block_binding": {"prefix_mismatch_behavior": "drop_block"},
            },
            "output_config": {"effort": "low"},
        }
    if not (model.reasoning and thinking.enabled):
        return {}
    if compat_of(model)["adaptive"]:
        extra: dict[str, Any] = {"thinking": {"type": "adaptive", "display": "summarized"}}
        if thinking.effort:
            extra["output_config"] = {"effort": thinking.effort}
        return extra
    return {
        "thinking": {"type": "enabled", "budget_tokens": thinking.budget or 1024, "display": "summarized"}
    }


def has_request_auth(api_key: str | None, headers: dict[str, str]) -> bool:
    return bool(api_key) or any(
        has_header(headers, name) for name in ("authorization", "x-api-key", "cf-aig-authorization")
    )
