"""OpenAI Responses API over the official ``openai`` SDK, for OpenAI's own models (pi-ai ``openai-responses``).

The request body is built in :mod:`tau.llm.providers._responses_request` (``store: false``, so
every request replays the whole conversation statelessly: reasoning items with their encrypted
content from ``thinkingSignature``, assistant text with its item id and phase from
``textSignature``, ``function_call``/``function_call_output`` items, ``prompt_cache_key`` from the
session id). This module sends it through the SDK (``client.responses.create``, streaming) and
turns the events into pi's event protocol: reasoning summaries as thinking, text, refusals,
several tool calls (``<call_id>|<item_id>`` ids) with streamed arguments, usage with cached and
reasoning tokens priced at the response's ``service_tier``, stop reasons from the response status.
"""

from __future__ import annotations

from typing import Any

from tau.common import jsjson
from tau.llm.builder import MessageBuilder
from tau.llm.cost import apply_service_tier
from tau.llm.partial_json import parse_tool_call_arguments
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
from tau.llm.providers._openai import api_key_for, auth_extra, make_client, request_error_text, stream_error
from tau.llm.providers._responses_request import build_params, build_request, compat_of, convert_input
from tau.llm.retry import retry_provider_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.types import Model, StopReason, ThinkingContent, TranscriptContext

__all__ = ["build_params", "build_request", "convert_input", "stream"]


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one reply from the Responses API (see the module docstring)."""
    opts = options or StreamOptions()

    async def request(builder: MessageBuilder) -> None:
        await _run(model, context, opts, builder)

    return run_request(model, opts, request)


def _headers(model: Model, options: StreamOptions) -> dict[str, str]:
    headers = dict(model.headers)
    session = options.session_id if options.cache_retention != "none" else None
    if session:
        if compat_of(model)["affinity"] == "openrouter":
            headers["x-session-id"] = session
        else:
            headers["session-id"] = session
            headers["x-client-request-id"] = session
    headers.update(options.headers)
    return headers


# -- response ----------------------------------------------------------------------------------


async def _run(
    model: Model, context: TranscriptContext, options: StreamOptions, builder: MessageBuilder
) -> None:
    headers = _headers(model, options)
    api_key = api_key_for(model, options, headers)
    openai = await import_sdk("openai")
    client = make_client(model, options, api_key, headers)
    prefix = "OpenAI API error" if model.provider == "openai" else f"{model.provider} API error"
    try:
        built = build_request(model, context, options)
        if built.provider_thinking_level:
            builder.message["providerThinkingLevel"] = built.provider_thinking_level
        params = await apply_payload_hook(options, built.params, model)
        try:
            response = await retry_provider_request(
                lambda: within_idle(
                    call_with_body(client.responses.create, params, **auth_extra(api_key, openai)), options
                ),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except openai.APITimeoutError as exc:
            raise ProviderError(TIMED_OUT) from exc
        except openai.APIStatusError as exc:
            raise ProviderError(request_error_text(exc, prefix)) from exc
        await report_response(options, getattr(response, "response", None))
        builder.start()
        state = _EventState(builder)
        try:
            async for event in idle_bounded(response, options):
                state.handle(event_dict(event))
        except ProviderError:
            raise
        except Exception as exc:
            translated = stream_error(exc, openai)
            if translated is None:
                raise
            raise translated from exc
        state.finish()
    finally:
        await client.close()


class _Slot:
    """One output item being streamed: its content index and, for a tool call, its argument text."""

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind
        self.index = index
        # The argument text in pieces, joined when read (``+=`` per piece would be quadratic).
        self._pieces: list[str] = []
        self.replaced = False  # the provider's final text did not continue the streamed one

    @property
    def arguments(self) -> str:
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    @arguments.setter
    def arguments(self, text: str) -> None:
        self._pieces = [text]

    def add_arguments(self, piece: str) -> None:
        self._pieces.append(piece)


class _EventState:
    """Responses stream events applied to a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.slots: dict[int, _Slot] = {}
        self.unfinished_calls: set[int] = set()
        self.reasoning_blocks: dict[str, ThinkingContent] = {}
        self.terminal = False

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type", "")
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    # -- items ----------------------------------------------------------------------------------

    def _slot(self, event: dict[str, Any], kind: str) -> _Slot | None:
        slot = self.slots.get(event.get("output_index", -1))
        return slot if slot is not None and slot.kind == kind else None

    def _create(self, output_index: int, item: dict[str, Any]) -> _Slot | None:
        kind = item.get("type")
        builder = self.builder
        if kind == "reasoning":
            slot = _Slot("thinking", builder.thinking_start())
        elif kind == "message":
            slot = _Slot("text", builder.text_start())
        elif kind == "function_call":
            index = builder.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name") or "")
            slot = _Slot("toolCall", index)
            self.unfinished_calls.add(index)
            if item.get("arguments"):
                slot.arguments = item["arguments"]
                builder.toolcall_delta(index, item["arguments"])
        else:
            return None
        self.slots[output_index] = slot
        return slot

    def on_created(self, event: dict[str, Any]) -> None:
        response = event.get("response") or {}
        if response.get("id"):
            self.builder.message["responseId"] = response["id"]

    def on_item_added(self, event: dict[str, Any]) -> None:
        self._create(event.get("output_index", -1), event.get("item") or {})

    def on_thinking_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event, "thinking")
        if slot is not None:
            self.builder.thinking_delta(slot.index, event.get("delta", ""))

    def on_summary_part_done(self, event: dict[str, Any]) -> None:
        slot = self._slot(event, "thinking")
        if slot is not None:
            self.builder.thinking_delta(slot.index, "\n\n")

    def on_text_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event, "text")
        if slot is not None:
            self.builder.text_delta(slot.index, event.get("delta", ""))

    def on_arguments_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event, "toolCall")
        if slot is not None:
            slot.add_arguments(event.get("delta", ""))
            self.builder.toolcall_delta(slot.index, event.get("delta", ""))

    def on_arguments_done(self, event: dict[str, Any]) -> None:
        slot = self._slot(event, "toolCall")
        if slot is not None and isinstance(event.get("arguments"), str):
            self._complete_arguments(slot, event["arguments"])

    def _complete_arguments(self, slot: _Slot, text: str) -> None:
        """Take the provider's complete argument text; stream the missing piece when it continues ours."""
        if text.startswith(slot.arguments) and text != slot.arguments:
            piece = text[len(slot.arguments) :]
            slot.arguments = text
            self.builder.toolcall_delta(slot.index, piece)
        elif not text.startswith(slot.arguments):
            slot.arguments = text
            slot.replaced = True

    def on_item_done(self, event: dict[str, Any]) -> None:
        output_index = event.get("output_index", -1)
        item = event.get("item") or {}
        slot = self.slots.get(output_index) or self._create(output_index, item)
        if slot is None:
            return
        kind = item.get("type")
        if kind == "reasoning" and slot.kind == "thinking":
            block = self.builder.thinking_block(slot.index)
            summary = "\n\n".join(part.get("text", "") for part in item.get("summary") or [])
            content = "\n\n".join(part.get("text", "") for part in item.get("content") or [])
            block["thinking"] = summary or content or block["thinking"]
            block["thinkingSignature"] = jsjson.dumps_str(item)
            if item.get("id"):
                self.reasoning_blocks[item["id"]] = block
            self.builder.thinking_end(slot.index)
        elif kind == "message" and slot.kind == "text":
            parts = item.get("content") or []
            text_block = self.builder.text_block(slot.index)
            text_block["text"] = "".join(
                (part.get("text") if part.get("type") == "output_text" else part.get("refusal")) or ""
                for part in parts
            )
            signature: dict[str, Any] = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            text_block["textSignature"] = jsjson.dumps_str(signature)
            self.builder.text_end(slot.index)
        elif kind == "function_call" and slot.kind == "toolCall":
            self._finish_call(slot, item)
        else:
            return
        del self.slots[output_index]

    def _finish_call(self, slot: _Slot, item: dict[str, Any]) -> None:
        if isinstance(item.get("arguments"), str) and item["arguments"]:
            self._complete_arguments(slot, item["arguments"])
        if slot.replaced:
            arguments, error = parse_tool_call_arguments(slot.arguments)
            self.builder.toolcall_end(slot.index, arguments)
            if error:
                self.builder.tool_call_block(slot.index)["argumentsError"] = error
        else:
            self.builder.toolcall_end(slot.index)  # parses the streamed text, argumentsError included
        self.unfinished_calls.discard(slot.index)

    # -- the end ----------------------------------------------------------------------------------

    def on_completed(self, event: dict[str, Any]) -> None:
        self.terminal = True
        response = event.get("response") or {}
        out = self.builder.message
        self._backfill_reasoning(response.get("output") or [])
        if response.get("id"):
            out["responseId"] = response["id"]
        usage = response.get("usage")
        if usage:
            details = usage.get("input_tokens_details") or {}
            cached = details.get("cached_tokens") or 0
            written = details.get("cache_write_tokens") or 0
            self.builder.set_usage(
                input=max(0, (usage.get("input_tokens") or 0) - cached - written),
                output=usage.get("output_tokens") or 0,
                cache_read=cached,
                cache_write=written,
                reasoning=(usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
            )
            out["usage"]["totalTokens"] = usage.get("total_tokens") or 0
            # Flex costs half, priority twice: priced at the tier the response says it ran on.
            apply_service_tier(out["usage"], response.get("service_tier"), self.builder.model.id)
        status = response.get("status")
        reason = (response.get("incomplete_details") or {}).get("reason")
        # (a response without a status writes null here, where pi's JSON leaves the field out)
        out["rawStopReason"] = f"{status}.{reason}" if reason else status  # type: ignore[typeddict-item]
        out["stopReason"], error = _map_status(status, reason)
        out.pop("errorMessage", None)
        if error:
            out["errorMessage"] = error
        if out["stopReason"] == "stop" and any(block["type"] == "toolCall" for block in out["content"]):
            out["stopReason"] = "toolUse"

    def _backfill_reasoning(self, output: list[dict[str, Any]]) -> None:
        """Some servers send encrypted reasoning only in the final response: keep it for replay."""
        for item in output:
            block = self.reasoning_blocks.get(item.get("id", ""))
            if item.get("type") != "reasoning" or not item.get("encrypted_content") or block is None:
                continue
            stored = jsjson.loads(block["thinkingSignature"])
            if not stored.get("encrypted_content"):
                stored["encrypted_content"] = item["encrypted_content"]
                block["thinkingSignature"] = jsjson.dumps_str(stored)

    def on_error(self, event: dict[str, Any]) -> None:
        raise ProviderError(f"Error Code {event.get('code')}: {event.get('message')}")

    def on_failed(self, event: dict[str, Any]) -> None:
        self.terminal = True
        response = event.get("response") or {}
        self.builder.message["rawStopReason"] = response.get("status")  # type: ignore[typeddict-item]
        error = response.get("error")
        details = response.get("incomplete_details") or {}
        if error:
            raise ProviderError(f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}")
        if details.get("reason"):
            raise ProviderError(f"incomplete: {details['reason']}")
        raise ProviderError("Unknown error (no error details in response)")

    def finish(self) -> None:
        out = self.builder.message
        if not self.terminal:
            raise ProviderError("OpenAI Responses stream ended before a terminal response event")
        if out["stopReason"] == "toolUse":
            for index in sorted(self.unfinished_calls):
                call = self.builder.tool_call_block(index)
                raise ProviderError(
                    f"OpenAI Responses stream completed with an unfinished tool call: {call['name']} ({call['id']})"
                )
        if out["stopReason"] == "pending":
            raise ProviderError("OpenAI Responses stream ended without a stop reason")
        if out["stopReason"] in ("error", "aborted"):
            raise ProviderError(out.get("errorMessage") or "An unknown error occurred")
        self.builder.finish(out["stopReason"])


def _map_status(status: str | None, reason: str | None) -> tuple[StopReason, str | None]:
    if status in (None, "completed", "in_progress", "queued"):
        return "stop", None
    if status == "incomplete":
        if reason == "max_output_tokens":
            return "length", None
        return "error", (
            f"Response incomplete: {reason}" if reason else "Response incomplete without a provider reason"
        )
    if status in ("failed", "cancelled"):
        return "error", None
    raise ProviderError(f"Unhandled stop reason: {status}")


_HANDLERS = {
    "response.created": _EventState.on_created,
    "response.output_item.added": _EventState.on_item_added,
    "response.reasoning_summary_text.delta": _EventState.on_thinking_delta,
    "response.reasoning_summary_part.done": _EventState.on_summary_part_done,
    "response.reasoning_text.delta": _EventState.on_thinking_delta,
    "response.output_text.delta": _EventState.on_text_delta,
    "response.refusal.delta": _EventState.on_text_delta,
    "response.function_call_arguments.delta": _EventState.on_arguments_delta,
    "response.function_call_arguments.done": _EventState.on_arguments_done,
    "response.output_item.done": _EventState.on_item_done,
    "response.completed": _EventState.on_completed,
    "response.incomplete": _EventState.on_completed,
    "error": _EventState.on_error,
    "response.failed": _EventState.on_failed,
}
