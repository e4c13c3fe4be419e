"""OpenAI Chat Completions over the official ``openai`` SDK, for OpenAI-compatible servers.

The request body (pi 1.6's, field by field) and the compat options are built in
:mod:`tau.llm.providers._completions_request`. This module sends it
(``client.chat.completions.create``, streaming) and reads the chunks: ``delta.content``,
``delta.tool_calls`` accumulated by index (a new id at a used index starts a new call), reasoning from ``reasoning_content``/``reasoning``/
``reasoning_text``, usage from the last chunk (``prompt_tokens_details.cached_tokens`` as cache
reads), ``finish_reason`` as the stop reason.
"""

from __future__ import annotations

from typing import Any

from tau.llm.builder import MessageBuilder
from tau.llm.partial_json import parse_tool_call_arguments
from tau.llm.providers._common import (
    ProviderError,
    apply_payload_hook,
    call_with_body,
    import_sdk,
    report_response,
    run_request,
)
from tau.llm.providers._completions_request import (
    REASONING_FIELDS,
    build_params,
    convert_messages,
    request_headers,
    resolve_compat,
)
from tau.llm.providers._openai import api_key_for, auth_extra, make_client, request_error_text, stream_error
from tau.llm.retry import retry_provider_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.types import Model, TranscriptContext

__all__ = ["build_params", "convert_messages", "resolve_compat", "stream"]


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one reply from a Chat Completions server (see the module docstring)."""
    opts = options or StreamOptions()

    async def request(builder: MessageBuilder) -> None:
        await _run(model, context, opts, builder)

    return run_request(model, opts, request)


# -- response ----------------------------------------------------------------------------------


async def _run(
    model: Model, context: TranscriptContext, options: StreamOptions, builder: MessageBuilder
) -> None:
    compat = resolve_compat(model)
    headers = request_headers(model, options, compat)
    api_key = api_key_for(model, options, headers)
    openai = await import_sdk("openai")
    client = make_client(model, options, api_key, headers)
    try:
        params = await apply_payload_hook(options, build_params(model, context, options), model)
        try:
            response = await retry_provider_request(
                lambda: call_with_body(client.chat.completions.create, params, **auth_extra(api_key, openai)),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except openai.APIStatusError as exc:
            raise ProviderError(request_error_text(exc)) from exc
        await report_response(options, getattr(response, "response", None))
        builder.start()
        state = _ChunkState(builder, model)
        try:
            async for chunk in response:
                state.handle(chunk.to_dict() if hasattr(chunk, "to_dict") else dict(chunk))
        except Exception as exc:
            translated = stream_error(exc, openai)
            if translated is None:
                raise
            raise translated from exc
        state.finish(compat["supportsFinishReason"])
    finally:
        await client.close()


_FINISH_REASONS = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "function_call": "toolUse",
    "tool_calls": "toolUse",
}


class _ChunkState:
    """Chat Completions chunks applied to a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        self.calls_by_index: dict[int, int] = {}  # stream index -> contentIndex
        self.calls_by_id: dict[str, int] = {}
        self.arguments: dict[int, str] = {}  # contentIndex -> full arguments text
        self.open_call: int | None = None
        self.has_finish_reason = False

    def handle(self, chunk: dict[str, Any]) -> None:
        out = self.builder.message
        if chunk.get("id") and "responseId" not in out:
            out["responseId"] = chunk["id"]
        if chunk.get("model") and chunk["model"] != self.model.id and "responseModel" not in out:
            out["responseModel"] = chunk["model"]
        choices = chunk.get("choices") or []
        choice = choices[0] if choices else None
        usage = chunk.get("usage") or (choice or {}).get("usage")
        if usage:
            self._usage(usage)
        if not choice:
            return
        if choice.get("finish_reason"):
            self._finish_reason(choice["finish_reason"])
        delta = choice.get("delta") or {}
        self._reasoning(delta)
        if delta.get("content"):
            self.open_call = None
            self.builder.append_text(delta["content"])
        for call in delta.get("tool_calls") or []:
            self._tool_call(call)

    def _usage(self, raw: dict[str, Any]) -> None:
        prompt = raw.get("prompt_tokens") or 0
        details = raw.get("prompt_tokens_details") or {}
        cache_read = details.get("cached_tokens")
        if cache_read is None:
            cache_read = raw.get("prompt_cache_hit_tokens", raw.get("cached_tokens")) or 0
        cache_write = details.get("cache_write_tokens") or 0
        reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or raw.get(
            "reasoning_tokens"
        )
        self.builder.set_usage(
            input=max(0, prompt - cache_read - cache_write),
            output=raw.get("completion_tokens") or 0,
            cache_read=cache_read,
            cache_write=cache_write,
            reasoning=reasoning or 0,
        )

    def _finish_reason(self, reason: str) -> None:
        out = self.builder.message
        out["rawStopReason"] = reason
        self.has_finish_reason = True
        if reason in _FINISH_REASONS:
            out["stopReason"] = _FINISH_REASONS[reason]  # type: ignore[typeddict-item]
        else:
            out["stopReason"] = "error"
            out["errorMessage"] = f"Provider finish_reason: {reason}"

    def _reasoning(self, delta: dict[str, Any]) -> None:
        # Servers name the field differently (llama.cpp: reasoning_content); the first non-empty wins.
        for field in REASONING_FIELDS:
            text = delta.get(field)
            if isinstance(text, str) and text:
                self.open_call = None
                self.builder.append_thinking(text, thinkingSignature=field)
                return

    def _tool_call(self, call: dict[str, Any]) -> None:
        stream_index = call.get("index")
        function = call.get("function") or {}
        call_id = call.get("id")
        index = self.calls_by_index.get(stream_index) if isinstance(stream_index, int) else None
        if (
            index is not None
            and call_id
            and self.builder.message["content"][index]["id"] not in ("", call_id)
        ):
            # Ollama, some vLLM builds and Grok give every parallel call the same index: a new id
            # there is a new call (pi 1.6 merges them into one call with concatenated JSON).
            index = None
        if index is None and call_id:
            index = self.calls_by_id.get(call_id)
        if index is None:
            index = self.builder.toolcall_start(call_id or "", function.get("name") or "")
            self.arguments[index] = ""
            self.open_call = index
        if isinstance(stream_index, int):
            self.calls_by_index[stream_index] = index  # later pieces without an id continue the newest
        block = self.builder.message["content"][index]
        if call.get("id"):
            self.calls_by_id[call["id"]] = index
            if not block["id"]:
                block["id"] = call["id"]
        if function.get("name") and not block["name"]:
            block["name"] = function["name"]
        piece = function.get("arguments") or ""
        self.arguments[index] += piece
        if index == self.open_call:
            self.builder.toolcall_delta(index, piece)

    def finish(self, supports_finish_reason: bool) -> None:
        out = self.builder.message
        self.builder.end_open_blocks()
        # A call whose pieces arrived after another block had started: parse its whole text now.
        for index, text in self.arguments.items():
            arguments, error = parse_tool_call_arguments(text)
            block = out["content"][index]
            if block.get("arguments") != arguments or block.get("argumentsError") != error:
                block["arguments"] = arguments  # type: ignore[typeddict-item]
                block.pop("argumentsError", None)  # type: ignore[misc]
                if error:
                    block["argumentsError"] = error  # type: ignore[typeddict-unknown-key]
        if not self.has_finish_reason and not supports_finish_reason:
            has_calls = any(block["type"] == "toolCall" for block in out["content"])
            out["stopReason"] = "toolUse" if has_calls else "stop"
        if out["stopReason"] == "error":
            raise ProviderError(out.get("errorMessage") or "Provider returned an error stop reason")
        if (supports_finish_reason and not self.has_finish_reason) or out["stopReason"] == "pending":
            raise ProviderError("Stream ended without finish_reason")
        self.builder.finish(out["stopReason"])
