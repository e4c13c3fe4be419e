"""The OpenAI Responses request body, built as pi 1.6 builds it (``buildParams``/``convertResponsesMessages``).

Model compat switches (``models.json`` ``compat`` or the catalogue):

- ``supportsMidConvoSystemMessages``: later system messages go in place as ``developer`` items
  (``Updated system prompt section "x": ...``); otherwise they fold into the leading prompt.
- ``supportsAdditionalTools`` (with the above): every tool is declared in place, in
  ``additional_tools`` items (the first at the head of the input, later ones preceded by an
  "incremental tools update" notice); removals are announced as text, so the cached prefix never
  changes. ``supportsToolSearch`` otherwise: later additions arrive as synthetic client-side
  ``tool_search_call``/``tool_search_output`` pairs (``defer_loading`` tools).
- ``supportsMidConvoEffort``: the thinking level travels in ``configuration_update`` items (one
  before each earlier reply with its level, one at the end) while ``reasoning.effort`` stays
  ``medium``, so a level change keeps the cache.
- ``supportsExplicitPromptCacheMode``: ``prompt_cache_options`` (``{"mode": "explicit"}`` for
  retention ``none``, ``{"ttl": "30m"}`` for ``long``) instead of ``prompt_cache_retention``.
- ``supportsStrictMode`` (default ``false``, as pi): ``true`` states ``strict`` on every function tool,
  ``true`` with a strict schema for ``constrainedSampling`` tools; otherwise the field is left out.
- ``supportsDeveloperRole``, ``supportsLongCacheRetention``,
  ``supportsMaxOutputTokens``, ``promptCacheKeyMode``, ``sessionAffinityFormat``,
  ``thinkingLevelMap``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.llm.providers._common import clamp_max_tokens_to_context, clamp_thinking_level
from tau.llm.providers._strict import resolve_strict, tool_parameters
from tau.llm.stream import StreamOptions
from tau.llm.transcript import (
    ToolSupport,
    render_system_message_update,
    resolve_transcript,
    resolve_transcript_tools,
    system_message_text,
)
from tau.llm.transform import sanitize_surrogates, transform_messages
from tau.llm.types import Model, TranscriptContext

__all__ = ["BuiltRequest", "build_request", "compat_of", "convert_input", "convert_tools"]

MIN_OUTPUT_TOKENS = 16  # the API rejects max_output_tokens below 16
CONFIGURATION_UPDATE_REQUEST_EFFORT = "medium"
OPENAI_BASE_URL = "https://api.openai.com/v1"
_TOOL_CALL_PROVIDERS = {"openai", "openai-codex", "opencode"}
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_INCREMENTAL_TOOLS_NOTICE = (
    "This is an incremental tools update. Previously declared tools remain available unless explicitly "
    "marked unavailable. A tool declared again here is available again, and its latest definition "
    "replaces the earlier one."
)


def compat_of(model: Model) -> dict[str, Any]:
    """The Responses compat switches with pi's defaults."""
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
        "additional_tools": compat.get("supportsAdditionalTools", False),
        "tool_search": compat.get("supportsToolSearch", False),
        "explicit_cache": compat.get("supportsExplicitPromptCacheMode", False),
        "mid_effort": compat.get("supportsMidConvoEffort", False),
    }


def tool_support(compat: dict[str, Any]) -> ToolSupport:
    """How tool changes can be expressed: ``changes``, ``additions`` or ``none``."""
    if compat["mid_system"] and compat["additional_tools"]:
        return "changes"
    return "additions" if compat["tool_search"] else "none"


def is_chatgpt_sign_in(model: Model, api_key: str | None) -> bool:
    """A non-``sk-`` credential sent to OpenAI itself is a Sign in with ChatGPT token."""
    return (
        model.provider == "openai"
        and model.base_url == OPENAI_BASE_URL
        and api_key is not None
        and api_key != ""
        and not api_key.startswith("sk-")
    )


@dataclass
class BuiltRequest:
    params: dict[str, Any]
    provider_thinking_level: str | None = None


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


def convert_tools(
    tools: Sequence[Mapping[str, Any]], supports_strict: bool, *, search_result: bool = False
) -> list[dict[str, Any]]:
    """Function tools; with strict support each states ``strict`` (pi's ``convertResponsesTools``).

    Without it (servers declared in ``models.json`` unless their compat says otherwise) the field
    is left out, as pi leaves it: such servers may reject a field they do not know. OpenAI's own
    models declare strict support in the catalogue, so their non-strict tools say ``strict: false``.
    """
    converted = []
    for tool in tools:
        strict = resolve_strict(tool, bool(supports_strict))
        entry: dict[str, Any] = {
            "type": "function",
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool_parameters(tool, strict),
        }
        if search_result:
            entry["defer_loading"] = True
        if supports_strict:
            entry["strict"] = bool(strict)
        converted.append(entry)
    return converted


@dataclass
class _Input:
    """Builds the ``input`` list: messages, in-place tool declarations and effort items."""

    model: Model
    compat: dict[str, Any]
    support: str
    effort: str | None
    items: list[dict[str, Any]] = field(default_factory=list)
    declared_additional: bool = False
    unavailable: dict[str, None] = field(default_factory=dict)  # ordered set of removed tool names

    @property
    def role(self) -> str:
        return "developer" if self.model.reasoning and self.compat["developer"] is not False else "system"

    def system(self, message: dict[str, Any], leading: bool, anchors: bool, seed: str) -> None:
        if anchors:
            self._tool_additions(message, seed)
        parts = [system_message_text(message) if leading else render_system_message_update(message)]
        if anchors:
            added = {tool["name"] for tool in message.get("toolsAdded") or []}
            removed = [
                tool["name"] for tool in message.get("toolsRemoved") or [] if tool["name"] not in added
            ]
            if removed:
                listing = "\n".join(f"- {name}" for name in removed)
                parts.append(f"The following tools are no longer available. Do not call them:\n{listing}")
            self.unavailable.update(dict.fromkeys(removed))
        text = "\n\n".join(part for part in parts if part)
        if text:
            self.items.append({"role": self.role, "content": sanitize_surrogates(text)})

    def _tool_additions(self, message: dict[str, Any], seed: str) -> None:
        tools = list(message.get("toolsAdded") or [])
        for tool in tools:
            self.unavailable.pop(tool["name"], None)
        if not tools:
            return
        if self.support == "changes":
            if self.declared_additional:
                notice = _INCREMENTAL_TOOLS_NOTICE
                if self.unavailable:
                    notice += f"\nStill unavailable: {', '.join(self.unavailable)}."
                self.items.append({"role": self.role, "content": notice})
            self.declared_additional = True
            self.items.append(
                {
                    "type": "additional_tools",
                    "role": "developer",
                    "tools": convert_tools(tools, self.compat["strict"]),
                }
            )
        elif self.support == "additions":
            names = [tool["name"] for tool in tools]
            call_id = f"pi_tool_load_{_short_hash(seed + ':' + ','.join(names))}"
            common = {"call_id": call_id, "execution": "client", "status": "completed"}
            self.items.append(
                {
                    "type": "tool_search_call",
                    **common,
                    "arguments": {"query": " ".join(names), "limit": len(names)},
                }
            )
            found = convert_tools(tools, self.compat["strict"], search_result=True)
            self.items.append({"type": "tool_search_output", **common, "tools": found})

    def assistant(self, message: dict[str, Any], position: int) -> None:
        items = _assistant_items(message, self.model, position)
        if not items:
            return
        same_model = (
            message.get("provider") == self.model.provider
            and message.get("api") == self.model.api
            and message.get("model") == self.model.id
        )
        if self.effort is not None and same_model and message.get("providerThinkingLevel") is not None:
            self.items.append(_configuration_update(message["providerThinkingLevel"]))
        self.items.extend(items)


def _configuration_update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def convert_input(
    model: Model, context: TranscriptContext, configuration_effort: str | None = None
) -> list[dict[str, Any]]:
    """The transcript as Responses ``input`` items (pi's ``convertResponsesMessages``)."""
    compat = compat_of(model)
    transcript = resolve_transcript(context, compat["mid_system"])["messages"]
    support = tool_support(compat)
    _, folded = resolve_transcript_tools(transcript, support)
    messages = transform_messages(transcript, model, _tool_call_id_normalizer(model))
    builder = _Input(model, compat, support, configuration_effort)
    position = 0
    system_index = 0
    for number, message in enumerate(messages):
        kind = message["role"]
        leading = number == 0 and kind == "system"
        if kind == "system":
            builder.system(message, leading, system_index >= folded, f"system:{position}")
            system_index += 1
        elif kind == "user":
            user = _user_item(message)
            if user is not None:
                builder.items.append(user)
        elif kind == "assistant":
            builder.assistant(message, position)
        elif kind == "toolResult":
            call_id = message["toolCallId"].split("|", 1)[0]
            output = _tool_output(model, message["content"])
            builder.items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        if not leading:
            position += 1
    if configuration_effort is not None:
        builder.items.append(_configuration_update(configuration_effort))
    return builder.items


def _prompt_cache_fields(compat: dict[str, Any], options: StreamOptions, chatgpt: bool) -> dict[str, Any]:
    retention = options.cache_retention or "short"
    fields: dict[str, Any] = {}
    if retention != "none" and compat["cache_key"] != "disabled" and options.session_id:
        fields["prompt_cache_key"] = options.session_id[:64]
    if chatgpt:
        return fields  # Sign in with ChatGPT rejects the other cache fields
    if retention == "long" and compat["long_cache"] and not compat["explicit_cache"]:
        fields["prompt_cache_retention"] = "24h"
    if compat["explicit_cache"]:
        if retention == "none":
            fields["prompt_cache_options"] = {"mode": "explicit"}
        elif retention == "long" and compat["long_cache"]:
            fields["prompt_cache_options"] = {"ttl": "30m"}
    return fields


def build_request(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> BuiltRequest:
    """The request body pi 1.6 would send for this transcript, and the reply's recorded effort."""
    opts = options or StreamOptions()
    compat = compat_of(model)
    chatgpt = is_chatgpt_sign_in(model, opts.api_key)
    level = clamp_thinking_level(model, opts.reasoning)
    level_map = model.compat.get("thinkingLevelMap") or {}
    effort = level_map.get(level, level) if level else None
    configuration_effort = effort if compat["mid_effort"] and effort and not chatgpt else None
    params: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(model, context, configuration_effort),
        "stream": True,
    }
    params.update(_prompt_cache_fields(compat, opts, chatgpt))
    params["store"] = False
    max_tokens = clamp_max_tokens_to_context(model, context["messages"], opts.max_tokens or model.max_tokens)
    if compat["max_output"] and not chatgpt:
        params["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if opts.temperature is not None and not chatgpt:
        params["temperature"] = opts.temperature
    transcript = resolve_transcript(context, compat["mid_system"])["messages"]
    request_tools, _ = resolve_transcript_tools(transcript, tool_support(compat))
    if request_tools:
        params["tools"] = convert_tools(request_tools, compat["strict"])
    if model.reasoning:
        if effort:
            sent = CONFIGURATION_UPDATE_REQUEST_EFFORT if configuration_effort else effort
            params["reasoning"] = {"effort": sent, "summary": "auto"}
            params["include"] = ["reasoning.encrypted_content"]
        elif level_map.get("off", "none") is not None:
            params["reasoning"] = {"effort": level_map.get("off", "none")}
    return BuiltRequest(params, configuration_effort)


def build_params(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> dict[str, Any]:
    """The request body pi 1.6 would send for this transcript."""
    return build_request(model, context, options).params
