"""OpenAI Chat Completions over the official ``openai`` SDK, for OpenAI-compatible servers.

The request body (pi 1.6's, field by field) and the compat options are built in
:mod:`tau.llm.providers._completions_request`. This module sends it
(``client.chat.completions.create``, streaming) and reads the chunks as pi-ai 1.6 reads them:
``delta.content``, ``delta.tool_calls`` accumulated by index (a new id at a used index starts a new
call), reasoning from ``reasoning_content``/``reasoning``/``reasoning_text`` and OpenRouter's
``reasoning_details``, usage from the last chunk (``prompt_tokens_details.cached_tokens`` as cache
reads; OpenRouter's billed ``usage.cost`` as the total), ``finish_reason`` as the stop reason.
Every block ends after the stream, in content order (pi's event order).
"""

from __future__ import annotations

from typing import Any

from tau.common import jsjson
from tau.llm.builder import MessageBuilder
from tau.llm.cost import apply_openrouter_cost as apply_reported_cost
from tau.llm.cost import is_openrouter
from tau.llm.providers._common import (
    TIMED_OUT,
    ProviderError,
    apply_payload_hook,
    call_with_body,
    event_dict,
    idle_bounded,
    import_sdk,
    report_response,
    run_request,
    within_idle,
)
from tau.llm.providers._completions_request import (
    REASONING_FIELDS,
    build_params,
    convert_messages,
    request_headers,
    resolve_compat,
)
from tau.llm.providers._openai import api_key_for, auth_extra, make_client, request_error_text, stream_error
from tau.llm.providers._reasoning_details import append_detail, is_detail
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
                lambda: within_idle(
                    call_with_body(client.chat.completions.create, params, **auth_extra(api_key, openai)),
                    options,
                ),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except openai.APITimeoutError as exc:
            raise ProviderError(TIMED_OUT) from exc
        except openai.APIStatusError as exc:
            raise ProviderError(request_error_text(exc)) from exc
        await report_response(options, getattr(response, "response", None))
        builder.start()
        state = _ChunkState(builder, model)
        try:
            async for chunk in idle_bounded(response, options):
                state.handle(event_dict(chunk))
        except BaseException as exc:
            state.keep_reasoning_details()  # a failed reply keeps them too, as pi's does
            translated = stream_error(exc, openai) if isinstance(exc, Exception) else None
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
    """Chat Completions chunks applied to a :class:`MessageBuilder`, as pi-ai 1.6 applies them.

    One thinking block and one text block per message, each tool call its own block; every block
    stays open until the stream ends and then ends in content order (pi's event order).
    ``reasoning_details`` are kept aside while they stream and become the thinking block's
    signature when it ends (:mod:`tau.llm.providers._reasoning_details`).
    """

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        builder.parallel_blocks = True
        self.thinking: int | None = None
        self.text: int | None = None
        self.calls_by_index: dict[int, int] = {}  # stream index -> contentIndex
        self.calls_by_id: dict[str, int] = {}
        self.details: list[dict[str, Any]] | None = None
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
        # Reasoning first: a proxy may put reasoning and answer in one delta, thinking comes first.
        self._reasoning(delta)
        if delta.get("content"):
            if self.text is None:
                self.text = self.builder.text_start()
            self.builder.text_delta(self.text, delta["content"])
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
        usage = self.builder.set_usage(
            input=max(0, prompt - cache_read - cache_write),
            output=raw.get("completion_tokens") or 0,
            cache_read=cache_read,
            cache_write=cache_write,
            reasoning=reasoning or 0,
        )
        if is_openrouter(self.model):
            apply_reported_cost(usage, raw)

    def _finish_reason(self, reason: str) -> None:
        out = self.builder.message
        out["rawStopReason"] = reason
        self.has_finish_reason = True
        if reason in _FINISH_REASONS:
            out["stopReason"] = _FINISH_REASONS[reason]  # type: ignore[typeddict-item]
        else:
            out["stopReason"] = "error"
            out["errorMessage"] = f"Provider finish_reason: {reason}"

    def _thinking_block(self, signature: str) -> int:
        if self.thinking is None:
            self.thinking = self.builder.thinking_start(thinkingSignature=signature)
        return self.thinking

    def _reasoning(self, delta: dict[str, Any]) -> None:
        # Servers name the field differently (llama.cpp: reasoning_content); the first non-empty wins.
        for field in REASONING_FIELDS:
            text = delta.get(field)
            if isinstance(text, str) and text:
                if self.model.provider == "opencode-go" and field == "reasoning":
                    field = "reasoning_content"  # opencode-go takes its reasoning back there
                self.builder.thinking_delta(self._thinking_block(field), text)
                break
        for detail in delta.get("reasoning_details") or []:
            if is_detail(detail):
                self._thinking_block("")
                if self.details is None:
                    self.details = []
                append_detail(self.details, detail)

    def keep_reasoning_details(self) -> None:
        """Store the streamed details as the thinking block's signature (also when the stream fails)."""
        if self.details is not None and self.thinking is not None:
            block = self.builder.thinking_block(self.thinking)
            block["thinkingSignature"] = jsjson.dumps_str(self.details)

    def _tool_call(self, call: dict[str, Any]) -> None:
        stream_index = call.get("index")
        function = call.get("function") or {}
        call_id = call.get("id")
        index = self.calls_by_index.get(stream_index) if isinstance(stream_index, int) else None
        if (
            index is not None
            and call_id
            and self.builder.tool_call_block(index)["id"] not in ("", call_id)
        ):
            # Ollama, some vLLM builds and Grok give every parallel call the same index: a new id
            # there is a new call (pi 1.6 merges them into one call with concatenated JSON).
            index = None
        if index is None and call_id:
            index = self.calls_by_id.get(call_id)
        if index is None:
            index = self.builder.toolcall_start(call_id or "", function.get("name") or "")
        if isinstance(stream_index, int):
            self.calls_by_index[stream_index] = index  # later pieces without an id continue the newest
        block = self.builder.tool_call_block(index)
        if call_id:
            self.calls_by_id[call_id] = index
            if not block["id"]:
                block["id"] = call_id
        if function.get("name") and not block["name"]:
            block["name"] = function["name"]
        self.builder.toolcall_delta(index, function.get("arguments") or "")

    def finish(self, supports_finish_reason: bool) -> None:
        out = self.builder.message
        self.keep_reasoning_details()
        self.builder.end_open_blocks()
        if not self.has_finish_reason and not supports_finish_reason:
            has_calls = any(block["type"] == "toolCall" for block in out["content"])
            out["stopReason"] = "toolUse" if has_calls else "stop"
        if out["stopReason"] == "error":
            raise ProviderError(out.get("errorMessage") or "Provider returned an error stop reason")
        if (supports_finish_reason and not self.has_finish_reason) or out["stopReason"] == "pending":
            raise ProviderError("Stream ended without finish_reason")
        self.builder.finish(out["stopReason"])
