"""Anthropic Messages API over the official ``anthropic`` SDK (pi-ai ``anthropic-messages``).

The request body is built in :mod:`tau.llm.providers._anthropic_request` (system prompt, tools,
messages, prompt-cache breakpoints, thinking); this module sends it through the SDK
(``client.beta.messages.create``, streaming) and turns the SSE events into pi's event protocol:
text, thinking with its signature (redacted thinking as ``[Reasoning redacted]`` with the opaque
data as signature), tool calls with streamed JSON arguments, usage with cache reads, cache writes
and the 1-hour write tier, stop reasons, errors as pi words them.

A request whose ``strict: "prefer"`` tools exceed Claude's strict-tool limits is sent again once
without them, and later requests of that session skip them at once (pi's strict-tool fallback).
"""

from __future__ import annotations

import functools
from typing import Any

from tau.common import jsjson
from tau.common.jsstr import ms_now
from tau.llm.builder import MessageBuilder
from tau.llm.cost import apply_openrouter_cost, is_openrouter
from tau.llm.providers._anthropic_request import BuiltRequest, build_request, has_request_auth
from tau.llm.providers._common import (
    TIMED_OUT,
    ProviderError,
    apply_payload_hook,
    call_with_body,
    event_dict,
    http_error_message,
    idle_bounded,
    import_sdk,
    is_transport_error,
    lost_stream_text,
    report_response,
    run_request,
    timeout_error,
    within_idle,
)
from tau.llm.providers._openai import KEYED_PROVIDERS
from tau.llm.providers._sse import http_client
from tau.llm.retry import retry_provider_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.types import Model, StopReason, TranscriptContext

__all__ = ["build_params", "stream"]

DEFAULT_BASE_URL = "https://api.anthropic.com"

# Claude's answers when a request's strict tools exceed its limits (20 strict tools, 16 optional or
# union-typed parameters across them).
_STRICT_LIMIT_MESSAGES = (
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
)
_MAX_STRICT_LIMIT_SESSIONS = 10_000
# Sessions whose strict tools Claude rejected: later requests send preferred-strict tools plain.
_sessions_over_strict_limits: dict[str, None] = {}


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one reply from an Anthropic model (see the module docstring)."""
    opts = options or StreamOptions()

    async def request(builder: MessageBuilder) -> None:
        await _run(model, context, opts, builder)

    return run_request(model, opts, request)


def build_params(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> dict[str, Any]:
    """The request body pi 1.6 would send for this transcript."""
    return build_request(model, context, options).params


def _is_strict_limit_error(exc: Any) -> bool:
    body = exc.body if isinstance(exc.body, dict) else {}
    found = body.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    message = str(error.get("message") or exc)
    return (
        exc.status_code == 400
        and error.get("type") == "invalid_request_error"
        and any(text in message for text in _STRICT_LIMIT_MESSAGES)
    )


def _mark_strict_limits(session_id: str | None) -> None:
    if session_id is None:
        return
    _sessions_over_strict_limits[session_id] = None
    if len(_sessions_over_strict_limits) > _MAX_STRICT_LIMIT_SESSIONS:
        del _sessions_over_strict_limits[next(iter(_sessions_over_strict_limits))]


async def _run(
    model: Model, context: TranscriptContext, options: StreamOptions, builder: MessageBuilder
) -> None:
    headers = {**_session_affinity(model, options), **model.headers, **options.headers}
    keyless = not has_request_auth(options.api_key, headers)
    if keyless and model.provider in KEYED_PROVIDERS:
        raise ProviderError(f"No API key for provider: {model.provider}")
    anthropic = await import_sdk("anthropic")
    client = anthropic.AsyncAnthropic(
        api_key=options.api_key or "unused",
        base_url=model.base_url or DEFAULT_BASE_URL,
        default_headers=headers,
        max_retries=0,  # retries go through retry_provider_request, which the abort signal interrupts
        **({"timeout": options.timeout_ms / 1000} if options.timeout_ms else {}),
        **http_client(anthropic),  # a stream's unterminated last event is delivered
    )
    try:
        extra = {"extra_headers": {"Authorization": anthropic.Omit()}} if keyless else {}
        response = await _send(model, context, options, builder, client, anthropic, extra)
        await report_response(options, getattr(response, "response", None))
        builder.start()
        await _consume(response, builder, anthropic, options)
    finally:
        await client.close()


def _session_affinity(model: Model, options: StreamOptions) -> dict[str, str]:
    """pi's session-affinity header (OpenRouter by default: ``x-session-id``), so a gateway keeps
    a session on one upstream and its prompt cache warm."""
    session = options.session_id if options.cache_retention != "none" else None
    openrouter = is_openrouter(model)
    if not session or not model.compat.get("sendSessionAffinityHeaders", openrouter):
        return {}
    style = model.compat.get("sessionAffinityFormat", "openrouter" if openrouter else None)
    return {"x-session-id" if style == "openrouter" else "x-session-affinity": session}


async def _send(
    model: Model,
    context: TranscriptContext,
    options: StreamOptions,
    builder: MessageBuilder,
    client: Any,
    sdk: Any,
    extra: dict[str, Any],
) -> Any:
    """Send the request; on a strict-tool-limit rejection, once more without preferred-strict tools."""
    disable_strict = options.session_id in _sessions_over_strict_limits if options.session_id else False
    while True:
        built: BuiltRequest = build_request(model, context, options, disable_preferred_strict=disable_strict)
        if built.provider_thinking_level:
            builder.message["providerThinkingLevel"] = built.provider_thinking_level
        params = await apply_payload_hook(options, built.params, model)
        if params is not built.params:
            params = {**params, "stream": True}  # a replaced body still streams (pi does the same)
        try:
            return await retry_provider_request(
                functools.partial(_within_idle_call, client.beta.messages.create, params, extra, options),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except sdk.APITimeoutError as exc:
            raise ProviderError(TIMED_OUT) from exc
        except sdk.APIStatusError as exc:
            if disable_strict or not built.has_preferred_strict_tools or not _is_strict_limit_error(exc):
                raise ProviderError(http_error_message(exc.status_code, exc.body)) from exc
            disable_strict = True
            _mark_strict_limits(options.session_id)
            diagnostic = {
                "type": "anthropic_strict_tools_fallback",
                "timestamp": ms_now(),
                "error": {"message": http_error_message(exc.status_code, exc.body)},
                "details": {"reason": "strict_tool_limits_exceeded"},
            }
            builder.message.setdefault("diagnostics", []).append(diagnostic)


async def _consume(response: Any, builder: MessageBuilder, sdk: Any, options: StreamOptions) -> None:
    state = _StreamState(builder, is_openrouter(builder.model))
    try:
        async for event in idle_bounded(response, options):
            state.handle(event_dict(event))
    except sdk.APIStatusError as exc:
        # An ``event: error`` in the stream: pi reports its data as is.
        body = exc.body
        raise ProviderError(jsjson.dumps_str(body) if isinstance(body, dict | list) else str(exc)) from exc
    except ValueError as exc:
        raise ProviderError(f"Could not parse Anthropic SSE event: {exc}") from exc
    except Exception as exc:
        timed_out = timeout_error(exc, sdk)
        if timed_out is not None:
            raise timed_out from exc
        if isinstance(exc, sdk.APIConnectionError) or is_transport_error(exc):
            raise ProviderError(lost_stream_text(exc)) from exc
        raise
    state.finish()


_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "pause_turn": "stop",
    "stop_sequence": "stop",
}


class _StreamState:
    """Anthropic's block-indexed events applied to a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder, openrouter: bool = False) -> None:
        self.builder = builder
        self.openrouter = openrouter  # OpenRouter adds its billed cost to message_delta's usage
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
        recorded = self.builder.set_usage(
            input=usage.get("input_tokens"),
            output=usage.get("output_tokens"),
            cache_read=usage.get("cache_read_input_tokens"),
            cache_write=usage.get("cache_creation_input_tokens"),
            cache_write_1h=(usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"),
            reasoning=details.get("thinking_tokens"),
        )
        if self.openrouter and usage:
            apply_openrouter_cost(recorded, usage)

    def finish(self) -> None:
        out = self.builder.message
        if self.saw_start and not self.saw_stop:
            raise ProviderError("Anthropic stream ended before message_stop")
        if out["stopReason"] == "pending":
            raise ProviderError("Anthropic stream ended without a stop reason")
        if out["stopReason"] == "error":
            raise ProviderError(out.get("errorMessage") or "An unknown error occurred")
        # A block ends only with its content_block_stop, as in pi: Claude sends none for a tool call
        # that max_tokens cut off, which then keeps its partially parsed arguments.
        self.builder.keep_open_blocks()
        self.builder.finish(out["stopReason"])


def _map_stop_reason(reason: str, details: Any) -> tuple[StopReason, str | None]:
    if reason in _STOP_REASONS:
        return _STOP_REASONS[reason], None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise ProviderError(f"Unhandled stop reason: {reason}")


async def _within_idle_call(create: Any, params: dict[str, Any], extra: dict[str, Any], options: Any) -> Any:
    """One attempt: the request, its response awaited within the idle timeout."""
    return await within_idle(call_with_body(create, params, **extra), options)
