"""Anthropic Messages API over the official ``anthropic`` SDK (pi-ai ``anthropic-messages``).

What goes out (``POST /v1/messages?beta=true``, streaming):

- ``system``: the replayed system prompt as one text block; later system messages are folded into
  it (Anthropic has no mid-conversation system role).
- ``tools``: the current tools, ``input_schema`` reduced to ``type/properties/required`` (plus
  ``additionalProperties``, ``$defs``, ``definitions``), ``eager_input_streaming: true``.
- ``messages``: pi's transcript after :func:`tau.llm.transform.transform_messages`; consecutive
  tool results become one user message of ``tool_result`` blocks (images of error results follow
  them, Anthropic rejects images inside error results); thinking replays with its signature,
  redacted thinking as ``redacted_thinking``, unsigned thinking as text.
- Prompt caching, as pi 1.6 places it: ``cache_control`` on the system block, on the last tool,
  and on the last block of the last message when it is a user message. Retention ``short`` is
  ``{"type": "ephemeral"}``, ``long`` adds ``"ttl": "1h"``, ``none`` sends no marker.
- Thinking from ``StreamOptions.reasoning``: budget-based (``budget_tokens`` from pi's default
  budgets, ``max_tokens`` raised by the budget up to the model's cap, interleaved-thinking beta),
  or adaptive with an effort when the model's compat says ``forceAdaptiveThinking``; a reasoning
  model with thinking off gets ``thinking: {"type": "disabled"}``.
"""

from __future__ import annotations

import re
from typing import Any

from tau.common import jsjson
from tau.llm.builder import MessageBuilder
from tau.llm.providers._common import (
    ProviderError,
    adjust_max_tokens_for_thinking,
    apply_payload_hook,
    call_with_body,
    clamp_max_tokens_to_context,
    clamp_thinking_level,
    has_header,
    http_error_message,
    report_response,
    run_request,
)
from tau.llm.providers._strict import resolve_strict, tool_parameters
from tau.llm.retry import retry_provider_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.transcript import (
    collapse_system_messages,
    current_tools,
    initial_system_message,
    system_message_text,
)
from tau.llm.transform import sanitize_surrogates, split_error_tool_result_images, transform_messages
from tau.llm.types import Model, TranscriptContext

__all__ = ["build_params", "stream"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"

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


def _compat(model: Model) -> dict[str, Any]:
    compat = model.compat
    return {
        "eager": compat.get("supportsEagerToolInputStreaming", True),
        "long_cache": compat.get("supportsLongCacheRetention", True),
        "cache_tools": compat.get("supportsCacheControlOnTools", True),
        "temperature": compat.get("supportsTemperature", True),
        "empty_signature": compat.get("allowEmptySignature", False),
        "strict": compat.get("supportsStrictTools", False),
        "adaptive": compat.get("forceAdaptiveThinking", False),
    }


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one reply from an Anthropic model (see the module docstring)."""
    opts = options or StreamOptions()

    async def request(builder: MessageBuilder) -> None:
        await _run(model, context, opts, builder)

    return run_request(model, opts, request)


# -- request -----------------------------------------------------------------------------------


def _cache_control(model: Model, retention: str | None) -> dict[str, Any] | None:
    if retention == "none":
        return None
    if retention == "long" and _compat(model)["long_cache"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


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
        split = split_error_tool_result_images(result)  # type: ignore[arg-type]
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
            error_images.append({"type": "text", "text": split[1]})
            error_images.extend(_image(image) for image in split[2])
    return {"role": "user", "content": blocks + error_images}


def convert_messages(
    messages: list[dict[str, Any]], cache_control: dict[str, Any] | None, allow_empty_signature: bool = False
) -> list[dict[str, Any]]:
    """Transcript messages (system messages already removed) as Anthropic ``messages``."""
    params: list[dict[str, Any]] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message["role"]
        converted: dict[str, Any] | None = None
        if role == "user":
            converted = _user(message)
        elif role == "assistant":
            converted = _assistant(message, allow_empty_signature)
        elif role == "toolResult":
            end = index
            while end < len(messages) and messages[end]["role"] == "toolResult":
                end += 1
            converted = _tool_results(messages[index:end])
            index = end - 1
        if converted is not None:
            params.append(converted)
        index += 1
    if cache_control is not None:
        _mark_last_user_message(params, cache_control)
    return params


def _mark_last_user_message(params: list[dict[str, Any]], cache_control: dict[str, Any]) -> None:
    """Cache the conversation so far: a breakpoint on the last block of a trailing user message."""
    if not params or params[-1]["role"] != "user":
        return
    last = params[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": cache_control}]
    elif last["content"] and last["content"][-1]["type"] in ("text", "image", "tool_result"):
        last["content"][-1]["cache_control"] = cache_control


def convert_tools(
    tools: list[dict[str, Any]], model: Model, cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    compat = _compat(model)
    converted = []
    for position, tool in enumerate(tools):
        strict = resolve_strict(tool, compat["strict"], _strict_unsupported)
        schema = tool_parameters(tool, strict)
        input_schema: dict[str, Any] = {
            "type": "object",
            "properties": schema.get("properties", {}),
            "required": schema.get("required", []),
        }
        for key in ("additionalProperties", "$defs", "definitions"):
            if key in schema:
                input_schema[key] = schema[key]
        if strict:
            input_schema = {**schema, **input_schema}
        entry: dict[str, Any] = {"name": tool["name"], "description": tool["description"]}
        if compat["eager"]:
            entry["eager_input_streaming"] = True
        if strict:
            entry["strict"] = True
        entry["input_schema"] = input_schema
        if cache_control is not None and compat["cache_tools"] and position == len(tools) - 1:
            entry["cache_control"] = cache_control
        converted.append(entry)
    return converted


def _thinking_params(
    model: Model, messages: list[dict[str, Any]], options: StreamOptions
) -> tuple[int, dict[str, Any], list[str]]:
    """``(max_tokens, extra params, betas)`` for the requested thinking level."""
    compat = _compat(model)
    level = clamp_thinking_level(model, options.reasoning)
    base_max = clamp_max_tokens_to_context(model, messages, options.max_tokens or model.max_tokens)
    if level is None:
        off_allowed = (model.compat.get("thinkingLevelMap") or {}).get("off", "") is not None
        extra = {"thinking": {"type": "disabled"}} if model.reasoning and off_allowed else {}
        return base_max, extra, []
    if compat["adaptive"]:
        effort = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")
        mapped = (model.compat.get("thinkingLevelMap") or {}).get(level)
        extra = {
            "thinking": {"type": "adaptive", "display": "summarized"},
            "output_config": {"effort": mapped if isinstance(mapped, str) else effort},
        }
        return base_max, extra, []
    max_tokens, budget = adjust_max_tokens_for_thinking(base_max, model.max_tokens, level)
    max_tokens = clamp_max_tokens_to_context(model, messages, max_tokens)
    budget = min(budget, max(0, max_tokens - 1024))
    thinking = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
    return max_tokens, {"thinking": thinking}, [INTERLEAVED_THINKING_BETA]


def build_params(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> dict[str, Any]:
    """The request body pi 1.6 would send for this transcript (``stream: true``, ``betas`` included)."""
    opts = options or StreamOptions()
    compat = _compat(model)
    cache_control = _cache_control(model, opts.cache_retention)
    transcript = collapse_system_messages(context)["messages"]
    head = initial_system_message(transcript)
    system_text = system_message_text(head) if head else ""
    transformed = transform_messages(transcript, model, _normalize_tool_call_id)
    conversation = [message for message in transformed if message["role"] != "system"]
    max_tokens, thinking, betas = _thinking_params(model, transcript, opts)
    tools = current_tools(transcript)
    if tools and not compat["eager"]:
        betas = [FINE_GRAINED_TOOL_STREAMING_BETA, *betas]
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(conversation, cache_control, compat["empty_signature"]),
        "max_tokens": max_tokens,
        "stream": True,
    }
    if betas and not _configured_betas(model, opts):
        params["betas"] = betas
    if system_text:
        block: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(system_text)}
        if cache_control is not None:
            block["cache_control"] = cache_control
        params["system"] = [block]
    thinking_on = thinking.get("thinking", {}).get("type", "disabled") != "disabled"
    if opts.temperature is not None and not thinking_on and compat["temperature"]:
        params["temperature"] = opts.temperature
    if tools:
        params["tools"] = convert_tools(tools, model, cache_control)
    params.update(thinking)
    return params


def _configured_betas(model: Model, options: StreamOptions) -> bool:
    return has_header(model.headers, "anthropic-beta") or has_header(options.headers, "anthropic-beta")


# -- response ----------------------------------------------------------------------------------


async def _run(
    model: Model, context: TranscriptContext, options: StreamOptions, builder: MessageBuilder
) -> None:
    import anthropic  # lazy: the SDK is heavy to import

    api_key = options.api_key
    headers = {**model.headers, **options.headers}
    if not api_key and not (has_header(headers, "authorization") or has_header(headers, "x-api-key")):
        raise ProviderError(f"No API key for provider: {model.provider}")
    params = await apply_payload_hook(options, build_params(model, context, options), model)
    client = anthropic.AsyncAnthropic(
        api_key=api_key or None,
        base_url=model.base_url or DEFAULT_BASE_URL,
        default_headers=headers,
        max_retries=0,  # retries go through retry_provider_request, which the abort signal interrupts
        **({"timeout": options.timeout_ms / 1000} if options.timeout_ms else {}),
    )
    try:
        try:
            response = await retry_provider_request(
                lambda: call_with_body(client.beta.messages.create, params),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except anthropic.APIStatusError as exc:
            raise ProviderError(http_error_message(exc.status_code, exc.body)) from exc
        await report_response(options, getattr(response, "response", None))
        builder.start()
        await _consume(response, builder, anthropic)
    finally:
        await client.close()


async def _consume(response: Any, builder: MessageBuilder, sdk: Any) -> None:
    state = _StreamState(builder)
    try:
        async for event in response:
            state.handle(event.to_dict() if hasattr(event, "to_dict") else dict(event))
    except sdk.APIStatusError as exc:
        # An ``event: error`` in the stream: pi reports its data as is.
        body = exc.body
        raise ProviderError(jsjson.dumps_str(body) if isinstance(body, dict | list) else str(exc)) from exc
    except ValueError as exc:
        raise ProviderError(f"Could not parse Anthropic SSE event: {exc}") from exc
    except sdk.APIConnectionError as exc:
        raise ProviderError(f"Connection error: {exc}") from exc
    except Exception as exc:
        if type(exc).__module__.startswith(("httpx", "httpcore", "h11")):
            raise ProviderError(f"Connection lost: {exc}") from exc
        raise
    state.finish()


_STOP_REASONS = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "pause_turn": "stop",
    "stop_sequence": "stop",
}


class _StreamState:
    """Anthropic's block-indexed events applied to a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.blocks: dict[int, int] = {}  # Anthropic block index -> contentIndex
        self.saw_start = False
        self.saw_stop = False

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.saw_start = True
            self._message_start(event.get("message") or {})
        elif kind == "content_block_start":
            self._block_start(event["index"], event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._block_delta(event["index"], event.get("delta") or {})
        elif kind == "content_block_stop":
            index = self.blocks.pop(event["index"], None)
            if index is not None:
                self.builder.end_block(index)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self.saw_stop = True

    def _message_start(self, message: dict[str, Any]) -> None:
        out = self.builder.message
        if message.get("id"):
            out["responseId"] = message["id"]
        if message.get("model") and message["model"] != self.builder.model.id:
            out["responseModel"] = message["model"]
        usage = message.get("usage") or {}
        self.builder.set_usage(
            input=usage.get("input_tokens") or 0,
            output=usage.get("output_tokens") or 0,
            cache_read=usage.get("cache_read_input_tokens") or 0,
            cache_write=usage.get("cache_creation_input_tokens") or 0,
            cache_write_1h=(usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0,
        )

    def _block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        builder = self.builder
        if kind == "text":
            self.blocks[index] = builder.text_start(block.get("text") or "")
        elif kind == "thinking":
            self.blocks[index] = builder.thinking_start(
                block.get("thinking") or "", thinkingSignature=block.get("signature") or ""
            )
        elif kind == "redacted_thinking":
            self.blocks[index] = builder.thinking_start(
                "[Reasoning redacted]", thinkingSignature=block.get("data", ""), redacted=True
            )
        elif kind == "tool_use":
            self.blocks[index] = builder.toolcall_start(block["id"], block["name"], block.get("input") or {})

    def _block_delta(self, index: int, delta: dict[str, Any]) -> None:
        content_index = self.blocks.get(index)
        if content_index is None:
            return
        block = self.builder.message["content"][content_index]
        kind = delta.get("type")
        if kind == "text_delta" and block["type"] == "text":
            self.builder.text_delta(content_index, delta.get("text", ""))
        elif kind == "thinking_delta" and block["type"] == "thinking":
            self.builder.thinking_delta(content_index, delta.get("thinking", ""))
        elif kind == "input_json_delta" and block["type"] == "toolCall":
            self.builder.toolcall_delta(content_index, delta.get("partial_json", ""))
        elif kind == "signature_delta" and block["type"] == "thinking":
            self.builder.thinking_signature(content_index, delta.get("signature", ""))

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        out = self.builder.message
        reason = delta.get("stop_reason")
        if reason:
            out["rawStopReason"] = reason
            out["stopReason"], error = _map_stop_reason(reason, delta.get("stop_details"))
            if error:
                out["errorMessage"] = error
        usage = event.get("usage") or {}
        details = usage.get("output_tokens_details") or {}
        self.builder.set_usage(
            input=usage.get("input_tokens"),
            output=usage.get("output_tokens"),
            cache_read=usage.get("cache_read_input_tokens"),
            cache_write=usage.get("cache_creation_input_tokens"),
            cache_write_1h=(usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"),
            reasoning=details.get("thinking_tokens"),
        )

    def finish(self) -> None:
        out = self.builder.message
        if self.saw_start and not self.saw_stop:
            raise ProviderError("Anthropic stream ended before message_stop")
        if out["stopReason"] == "pending":
            raise ProviderError("Anthropic stream ended without a stop reason")
        if out["stopReason"] == "error":
            raise ProviderError(out.get("errorMessage") or "An unknown error occurred")
        self.builder.finish(out["stopReason"])


def _map_stop_reason(reason: str, details: Any) -> tuple[str, str | None]:
    if reason in _STOP_REASONS:
        return _STOP_REASONS[reason], None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise ProviderError(f"Unhandled stop reason: {reason}")
