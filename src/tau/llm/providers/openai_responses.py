"""OpenAI Responses API over the official ``openai`` SDK, for OpenAI's own models (pi-ai ``openai-responses``).

What goes out (``POST /v1/responses``, streaming, ``store: false``, so every request replays the
whole conversation statelessly):

- ``input``: the replayed system prompt as one ``developer`` message (``system`` for models
  without reasoning or when ``compat.supportsDeveloperRole`` is false), then the transcript after
  :func:`tau.llm.transform.transform_messages`: user messages (``input_text``/``input_image``),
  assistant text as ``message`` items (their id and phase round-trip through ``textSignature``),
  reasoning items replayed verbatim from ``thinkingSignature`` (encrypted content included),
  ``function_call`` items (tool-call ids are ``<call_id>|<item_id>``) and ``function_call_output``.
- ``tools``: function tools (``strict`` only when ``compat.supportsStrictMode``).
- ``reasoning: {effort, summary: "auto"}`` and ``include: ["reasoning.encrypted_content"]`` when a
  thinking level is set on a reasoning model, ``{effort: "none"}`` when it is off.
- ``prompt_cache_key``: the session id (at most 64 characters), unless cache retention is
  ``none``; ``prompt_cache_retention: "24h"`` for ``long``; ``max_output_tokens`` (at least 16).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from tau.common import jsjson
from tau.llm.builder import MessageBuilder, parse_tool_call_arguments
from tau.llm.providers._common import (
    ProviderError,
    apply_payload_hook,
    call_with_body,
    clamp_max_tokens_to_context,
    clamp_thinking_level,
    report_response,
    run_request,
)
from tau.llm.providers._openai import api_key_for, make_client, request_error_text, stream_error
from tau.llm.providers._strict import resolve_strict, tool_parameters
from tau.llm.retry import retry_provider_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.transcript import (
    current_tools,
    render_system_message_update,
    resolve_transcript,
    system_message_text,
)
from tau.llm.transform import sanitize_surrogates, transform_messages
from tau.llm.types import Model, TranscriptContext

__all__ = ["build_params", "convert_input", "stream"]

MIN_OUTPUT_TOKENS = 16  # the API rejects max_output_tokens below 16
_TOOL_CALL_PROVIDERS = {"openai", "openai-codex", "opencode"}
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one reply from the Responses API (see the module docstring)."""
    opts = options or StreamOptions()

    async def request(builder: MessageBuilder) -> None:
        await _run(model, context, opts, builder)

    return run_request(model, opts, request)


def _compat(model: Model) -> dict[str, Any]:
    compat = model.compat
    base_url = model.base_url or ""
    openrouter = model.provider == "openrouter" or "openrouter.ai" in base_url
    return {
        "developer": compat.get("supportsDeveloperRole", True),
        "mid_system": compat.get("supportsMidConvoSystemMessages", False),
        "affinity": compat.get("sessionAffinityFormat", "openrouter" if openrouter else "openai"),
        "cache_key": compat.get("promptCacheKeyMode", "auto"),
        "long_cache": compat.get("supportsLongCacheRetention", True),
        "strict": compat.get("supportsStrictMode", False),
        "max_output": compat.get("supportsMaxOutputTokens", True),
    }


# -- request -----------------------------------------------------------------------------------


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _id_part(part: str) -> str:
    return _ID_CHARS.sub("_", part)[:64].rstrip("_")


def _tool_call_id_normalizer(model: Model):
    def normalize(call_id: str, _model: Model, source: dict[str, Any]) -> str:
        if model.provider not in _TOOL_CALL_PROVIDERS or "|" not in call_id:
            return _id_part(call_id)
        call, item = call_id.split("|", 1)
        foreign = source.get("provider") != model.provider or source.get("api") != model.api
        item_id = f"fc_{_short_hash(item)}"[:64] if foreign else _id_part(item)
        if not item_id.startswith("fc_"):
            item_id = _id_part(f"fc_{item_id}")
        return f"{_id_part(call)}|{item_id}"

    return normalize


def _text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """``(id, phase)`` from a ``textSignature``: pi's v1 JSON, or a plain legacy id."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = jsjson.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _image_item(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block['mimeType']};base64,{block['data']}",
    }


def _user_item(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(content)}]}
    parts = [
        {"type": "input_text", "text": sanitize_surrogates(block["text"])}
        if block["type"] == "text"
        else _image_item(block)
        for block in content
    ]
    return {"role": "user", "content": parts} if parts else None


def _assistant_items(message: dict[str, Any], model: Model, position: int) -> list[dict[str, Any]]:
    same_api = message.get("provider") == model.provider and message.get("api") == model.api
    different_model = same_api and message.get("model") != model.id
    items: list[dict[str, Any]] = []
    text_count = 0
    for block in message["content"]:
        kind = block["type"]
        if kind == "thinking" and block.get("thinkingSignature"):
            try:
                items.append(jsjson.loads(block["thinkingSignature"]))
            except ValueError:
                continue  # not a Responses reasoning item (another API's signature)
        elif kind == "text":
            item_id, phase = _text_signature(block.get("textSignature"))
            fallback = f"msg_pi_{position}" if text_count == 0 else f"msg_pi_{position}_{text_count}"
            text_count += 1
            if not item_id:
                item_id = fallback
            elif len(item_id) > 64:
                item_id = f"msg_{_short_hash(item_id)}"
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": sanitize_surrogates(block["text"]), "annotations": []}
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                item["phase"] = phase
            items.append(item)
        elif kind == "toolCall":
            call_id, _, item_id = block["id"].partition("|")
            call: dict[str, Any] = {"type": "function_call"}
            # OpenAI pairs fc_ items with the reasoning that produced them; another model's ids must go.
            if item_id.startswith("fc_") and not different_model:
                call["id"] = item_id
            call.update(
                call_id=call_id, name=block["name"], arguments=jsjson.dumps_str(block.get("arguments") or {})
            )
            items.append(call)
    return items


def _tool_output(model: Model, content: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    text = "\n".join(block["text"] for block in content if block["type"] == "text")
    images = [block for block in content if block["type"] == "image"]
    has_text = bool(text.strip())
    if not images or "image" not in model.input:
        body = text if has_text else "(see attached image)" if images else "(no tool output)"
        return sanitize_surrogates(body)
    output: list[dict[str, Any]] = (
        [{"type": "input_text", "text": sanitize_surrogates(text)}] if has_text else []
    )
    output.extend(_image_item(image) for image in images)
    return output


def convert_input(model: Model, context: TranscriptContext) -> list[dict[str, Any]]:
    """The transcript as Responses ``input`` items (pi's ``convertResponsesMessages``)."""
    compat = _compat(model)
    transcript = resolve_transcript(context, compat["mid_system"])["messages"]
    messages = transform_messages(transcript, model, _tool_call_id_normalizer(model))
    role = "developer" if model.reasoning and compat["developer"] is not False else "system"
    items: list[dict[str, Any]] = []
    position = 0
    for number, message in enumerate(messages):
        kind = message["role"]
        leading_system = number == 0 and kind == "system"
        if kind == "system":
            text = system_message_text(message) if leading_system else render_system_message_update(message)
            if text:
                items.append({"role": role, "content": sanitize_surrogates(text)})
        elif kind == "user":
            user = _user_item(message)
            if user is not None:
                items.append(user)
        elif kind == "assistant":
            items.extend(_assistant_items(message, model, position))
        elif kind == "toolResult":
            call_id = message["toolCallId"].split("|", 1)[0]
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": _tool_output(model, message["content"]),
                }
            )
        if not leading_system:
            position += 1
    return items


def convert_tools(tools: list[dict[str, Any]], supports_strict: bool) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        strict = resolve_strict(tool, supports_strict)
        entry: dict[str, Any] = {
            "type": "function",
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool_parameters(tool, strict),
        }
        if supports_strict:
            entry["strict"] = bool(strict)
        converted.append(entry)
    return converted


def build_params(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> dict[str, Any]:
    """The request body pi 1.6 would send for this transcript."""
    opts = options or StreamOptions()
    compat = _compat(model)
    retention = opts.cache_retention or "short"
    params: dict[str, Any] = {"model": model.id, "input": convert_input(model, context), "stream": True}
    if retention != "none" and compat["cache_key"] != "disabled" and opts.session_id:
        params["prompt_cache_key"] = opts.session_id[:64]
    if retention == "long" and compat["long_cache"]:
        params["prompt_cache_retention"] = "24h"
    params["store"] = False
    max_tokens = clamp_max_tokens_to_context(model, context["messages"], opts.max_tokens or model.max_tokens)
    if compat["max_output"]:
        params["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if opts.temperature is not None:
        params["temperature"] = opts.temperature
    transcript = resolve_transcript(context, compat["mid_system"])["messages"]
    tools = current_tools(transcript)
    if tools:
        params["tools"] = convert_tools(tools, compat["strict"])
    params.update(_reasoning(model, clamp_thinking_level(model, opts.reasoning)))
    return params


def _reasoning(model: Model, level: str | None) -> dict[str, Any]:
    if not model.reasoning:
        return {}
    level_map = model.compat.get("thinkingLevelMap") or {}
    if level:
        effort = level_map.get(level, level)
        return {
            "reasoning": {"effort": effort, "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        }
    off = level_map.get("off", "none")
    return {} if off is None else {"reasoning": {"effort": off}}


def _headers(model: Model, options: StreamOptions) -> dict[str, str]:
    headers = dict(model.headers)
    session = options.session_id if options.cache_retention != "none" else None
    if session:
        if _compat(model)["affinity"] == "openrouter":
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
    import openai  # lazy: the SDK is heavy to import

    headers = _headers(model, options)
    client = make_client(model, options, api_key_for(model, options, headers), headers)
    prefix = "OpenAI API error" if model.provider == "openai" else f"{model.provider} API error"
    try:
        params = await apply_payload_hook(options, build_params(model, context, options), model)
        try:
            response = await retry_provider_request(
                lambda: call_with_body(client.responses.create, params),
                max_retries=options.max_retries,
                max_retry_delay_ms=options.max_retry_delay_ms,
                signal=options.signal,
            )
        except openai.APIStatusError as exc:
            raise ProviderError(request_error_text(exc, prefix)) from exc
        await report_response(options, getattr(response, "response", None))
        builder.start()
        state = _EventState(builder)
        try:
            async for event in response:
                state.handle(event.to_dict() if hasattr(event, "to_dict") else dict(event))
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
        self.arguments = ""


class _EventState:
    """Responses stream events applied to a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.slots: dict[int, _Slot] = {}
        self.unfinished_calls: set[int] = set()
        self.reasoning_blocks: dict[str, dict[str, Any]] = {}
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
            slot.arguments += event.get("delta", "")
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

    def on_item_done(self, event: dict[str, Any]) -> None:
        output_index = event.get("output_index", -1)
        item = event.get("item") or {}
        slot = self.slots.get(output_index) or self._create(output_index, item)
        if slot is None:
            return
        block = self.builder.message["content"][slot.index]
        kind = item.get("type")
        if kind == "reasoning" and slot.kind == "thinking":
            summary = "\n\n".join(part.get("text", "") for part in item.get("summary") or [])
            content = "\n\n".join(part.get("text", "") for part in item.get("content") or [])
            block["thinking"] = summary or content or block["thinking"]
            block["thinkingSignature"] = jsjson.dumps_str(item)
            if item.get("id"):
                self.reasoning_blocks[item["id"]] = block
            self.builder.thinking_end(slot.index)
        elif kind == "message" and slot.kind == "text":
            parts = item.get("content") or []
            block["text"] = "".join(
                (part.get("text") if part.get("type") == "output_text" else part.get("refusal")) or ""
                for part in parts
            )
            signature: dict[str, Any] = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            block["textSignature"] = jsjson.dumps_str(signature)
            self.builder.text_end(slot.index)
        elif kind == "function_call" and slot.kind == "toolCall":
            self._finish_call(slot, item)
        else:
            return
        del self.slots[output_index]

    def _finish_call(self, slot: _Slot, item: dict[str, Any]) -> None:
        if isinstance(item.get("arguments"), str) and item["arguments"]:
            self._complete_arguments(slot, item["arguments"])
        arguments, error = parse_tool_call_arguments(slot.arguments)
        self.builder.toolcall_end(slot.index, arguments)
        block = self.builder.message["content"][slot.index]
        if error:
            block["argumentsError"] = error  # type: ignore[typeddict-unknown-key]
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
        status = response.get("status")
        reason = (response.get("incomplete_details") or {}).get("reason")
        out["rawStopReason"] = f"{status}.{reason}" if reason else status  # type: ignore[typeddict-item]
        out["stopReason"], error = _map_status(status, reason)  # type: ignore[typeddict-item]
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
                call = out["content"][index]
                raise ProviderError(
                    f"OpenAI Responses stream completed with an unfinished tool call: {call['name']} ({call['id']})"
                )
        if out["stopReason"] == "pending":
            raise ProviderError("OpenAI Responses stream ended without a stop reason")
        if out["stopReason"] in ("error", "aborted"):
            raise ProviderError(out.get("errorMessage") or "An unknown error occurred")
        self.builder.finish(out["stopReason"])


def _map_status(status: str | None, reason: str | None) -> tuple[str, str | None]:
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
