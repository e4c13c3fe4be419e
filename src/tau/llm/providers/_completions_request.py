"""The Chat Completions request body for OpenAI-compatible servers, built as pi 1.6 builds it.

The request equals what pi 1.6 sends (``openai-completions``), field by field::

    {"model", "messages": [{"role": "system", "content": <prompt>},
                           {"role": "user", "content": [{"type": "text", "text": ...}]},
                           {"role": "assistant", "content": null, "tool_calls": [...]},
                           {"role": "tool", "content": ..., "tool_call_id": ...}],
     "stream": true, "stream_options": {"include_usage": true}, "store": false,
     "max_completion_tokens": <cap>, "tools": [{"type": "function", "function": {...}}]}

Compat options (``models.json`` ``compat``; detected from the provider and base URL first, as pi
does): ``supportsStore``, ``supportsDeveloperRole``, ``supportsReasoningEffort``,
``supportsUsageInStreaming``, ``supportsFinishReason``, ``maxTokensField``,
``requiresToolResultName``, ``requiresAssistantAfterToolResult``,
``requiresNonNullAssistantContent``, ``requiresToolsWithToolHistory``, ``requiresThinkingAsText``,
``requiresReasoningContentOnAssistantMessages``, ``thinkingFormat`` (``openai``, ``openrouter``,
``deepseek``, ``zai``, ``qwen``, ``qwen-chat-template``), ``supportsStrictMode``,
``promptCacheKeyMode``, ``supportsLongCacheRetention``, ``sendSessionAffinityHeaders``,
``supportsMidConvoSystemMessages`` and ``supportsMidConvoToolAdditions`` (later system messages in
place, tool additions as Kimi-style ``{"role": "system", "tools": [...]}`` messages), and tau's
own ``mergeUserMessages`` (adjacent user-role messages merged, for servers that require
alternating roles).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tau.common import jsjson
from tau.llm.providers._common import clamp_max_tokens_to_context, clamp_thinking_level
from tau.llm.providers._reasoning_details import legacy_encrypted_detail, parse_details
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

__all__ = [
    "REASONING_FIELDS",
    "build_params",
    "convert_messages",
    "convert_tools",
    "request_headers",
    "resolve_compat",
]

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


# -- compat ------------------------------------------------------------------------------------


def _detect_compat(model: Model) -> dict[str, Any]:
    provider, base_url = model.provider, model.base_url or ""
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base_url or "open.bigmodel.cn" in base_url
    is_together = provider == "together" or "api.together." in base_url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base_url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base_url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base_url
    is_cerebras = provider == "cerebras" or "cerebras.ai" in base_url
    is_deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    is_grok = provider == "xai" or "api.x.ai" in base_url
    is_chutes = "chutes.ai" in base_url
    is_opencode = provider == "opencode" or "opencode.ai" in base_url
    # Claude through OpenRouter caches only what carries Anthropic's cache_control markers.
    anthropic_cache = provider == "openrouter" and model.id.startswith("anthropic/")
    non_standard = (
        is_nvidia
        or is_cerebras
        or is_grok
        or is_together
        or is_chutes
        or is_deepseek
        or is_zai
        or is_moonshot
    ) or (is_opencode or is_cf_workers or is_cf_gateway)
    max_tokens_field = (
        "max_tokens"
        if is_chutes or is_deepseek or is_moonshot or is_cf_gateway or is_together or is_nvidia or is_zai
        else "max_completion_tokens"
    )
    thinking = (
        "deepseek"
        if is_deepseek
        else "zai"
        if is_zai
        else "together"
        if is_together
        else "openrouter"
        if is_openrouter
        else "openai"
    )
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": provider == "openai" or "api.openai.com" in base_url,
        "supportsReasoningEffort": not (
            is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia
        ),
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": max_tokens_field,
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresNonNullAssistantContent": False,
        "requiresToolsWithToolHistory": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking,
        "supportsStrictMode": False,
        "supportsMidConvoSystemMessages": False,
        "sendSessionAffinityHeaders": is_openrouter,
        "sessionAffinityFormat": "openrouter" if is_openrouter else "openai",
        "supportsLongCacheRetention": not (is_together or is_cf_workers or is_cf_gateway or is_nvidia),
        "promptCacheKeyMode": "auto",
        "supportsMidConvoToolAdditions": False,
        "mergeUserMessages": False,
        "cacheControlFormat": "anthropic" if anthropic_cache else None,
    }


def resolve_compat(model: Model) -> dict[str, Any]:
    """Detected compat settings, overridden by the model's ``compat`` (unknown keys kept)."""
    compat = _detect_compat(model)
    compat.update({key: value for key, value in model.compat.items() if value is not None})
    return compat


# -- request -----------------------------------------------------------------------------------


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _normalize_tool_call_id(model: Model):
    def normalize(call_id: str, _model: Model, _source: dict[str, Any]) -> str:
        # Responses ids are "<call_id>|<item_id>"; Chat Completions wants one id of at most 40 chars.
        if "|" in call_id:
            call, item = call_id.split("|", 1)
            call, item = _ID_CHARS.sub("_", call), _ID_CHARS.sub("_", item)
            combined = f"{call}_{item}" if item else call
            if len(combined) <= 40:
                return combined
            digest = _short_hash(call_id)[:8]
            return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
        return call_id[:40] if model.provider == "openai" else call_id

    return normalize


def _user(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message["content"]
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    parts: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "text":
            if block["text"]:
                parts.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        else:
            parts.append(
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"},
                }
            )
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: dict[str, Any], model: Model, compat: dict[str, Any]) -> dict[str, Any] | None:
    placeholder = (
        ""
        if compat["requiresAssistantAfterToolResult"] or compat["requiresNonNullAssistantContent"]
        else None
    )
    out: dict[str, Any] = {"role": "assistant", "content": placeholder}
    blocks = message["content"]
    texts = [sanitize_surrogates(b["text"]) for b in blocks if b["type"] == "text" and b["text"].strip()]
    text = "".join(texts)
    all_thinking = [b for b in blocks if b["type"] == "thinking"]
    thinking = [b for b in all_thinking if b.get("thinking", "").strip()]
    calls = [b for b in blocks if b["type"] == "toolCall"]
    # OpenRouter's reasoning_details (the first block holding them), else older pi sessions'
    # encrypted entries on the tool calls: the provider continues the reasoning from them.
    details = next(
        (found for found in (parse_details(b.get("thinkingSignature")) for b in all_thinking) if found),
        None,
    ) or [found for found in (legacy_encrypted_detail(c.get("thoughtSignature")) for c in calls) if found]
    if thinking and compat["requiresThinkingAsText"]:
        thought = "\n\n".join(sanitize_surrogates(b["thinking"]) for b in thinking)
        out["content"] = [{"type": "text", "text": thought}, *({"type": "text", "text": t} for t in texts)]
    else:
        if text:
            out["content"] = text
        signature = thinking[0].get("thinkingSignature") if thinking and not details else None
        if signature == "reasoning" and model.provider == "opencode-go":
            signature = "reasoning_content"
        if signature in REASONING_FIELDS:
            # Servers that stream reasoning in a field take it back in the same field.
            out[signature] = "\n".join(b["thinking"] for b in thinking)
    if calls:
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": jsjson.dumps_str(call.get("arguments") or {}),
                },
            }
            for call in calls
        ]
    if details:
        out["reasoning_details"] = details
    if (
        compat["requiresReasoningContentOnAssistantMessages"]
        and model.reasoning
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


def _tool_results(
    results: list[dict[str, Any]], model: Model, compat: dict[str, Any]
) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for result in results:
        text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
        has_images = any(block["type"] == "image" for block in result["content"])
        body = text if text.strip() else "(see attached image)" if has_images else "(no tool output)"
        message: dict[str, Any] = {
            "role": "tool",
            "content": sanitize_surrogates(body),
            "tool_call_id": result["toolCallId"],
        }
        if compat["requiresToolResultName"] and result.get("toolName"):
            message["name"] = result["toolName"]
        params.append(message)
        if has_images and "image" in model.input:
            images.extend(
                {"type": "image_url", "image_url": {"url": f"data:{b['mimeType']};base64,{b['data']}"}}
                for b in result["content"]
                if b["type"] == "image"
            )
    if images:
        if compat["requiresAssistantAfterToolResult"]:
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        params.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
            }
        )
    return params


def convert_messages(
    model: Model, context: TranscriptContext, compat: dict[str, Any]
) -> list[dict[str, Any]]:
    """The transcript as Chat Completions ``messages`` (pi's ``convertMessages``)."""
    transcript = resolve_transcript(context, compat["supportsMidConvoSystemMessages"])["messages"]
    messages = transform_messages(transcript, model, _normalize_tool_call_id(model))
    instruction_role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
    _, folded = resolve_transcript_tools(transcript, _tool_support(compat))
    params: list[dict[str, Any]] = []
    last_role: str | None = None
    system_index = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message["role"]
        if compat["requiresAssistantAfterToolResult"] and last_role == "toolResult" and role == "user":
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        if role == "toolResult":
            end = index
            while end < len(messages) and messages[end]["role"] == "toolResult":
                end += 1
            converted = _tool_results(messages[index:end], model, compat)
            params.extend(converted)
            last_role = "user" if converted[-1]["role"] == "user" else "toolResult"
            index = end
            continue
        if role == "system":
            added = (message.get("toolsAdded") or []) if system_index >= folded else []
            system_index += 1
            if added:
                # Kimi-style tool additions: a system message that carries only tools.
                params.append({"role": "system", "tools": convert_tools(added, compat)})
            text = system_message_text(message) if index == 0 else render_system_message_update(message)
            if text:
                params.append({"role": instruction_role, "content": sanitize_surrogates(text)})
        elif role == "user":
            user = _user(message)
            if user is not None:
                params.append(user)
        elif role == "assistant":
            assistant = _assistant(message, model, compat)
            if assistant is not None:
                params.append(assistant)
        last_role = role
        index += 1
    return _merge_user_messages(params) if compat.get("mergeUserMessages") else params


def _as_parts(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _merge_user_messages(params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge adjacent user messages into one (servers that require alternating roles)."""
    merged: list[dict[str, Any]] = []
    for message in params:
        if merged and message["role"] == "user" and merged[-1]["role"] == "user":
            previous = merged[-1]
            merged[-1] = {
                **previous,
                "content": _as_parts(previous["content"]) + _as_parts(message["content"]),
            }
        else:
            merged.append(message)
    return merged


def convert_tools(tools: Sequence[Mapping[str, Any]], compat: dict[str, Any]) -> list[dict[str, Any]]:
    converted = []
    supports_strict = compat["supportsStrictMode"] is not False
    for tool in tools:
        strict = resolve_strict(tool, supports_strict)
        function: dict[str, Any] = {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool_parameters(tool, strict),
        }
        if supports_strict:
            function["strict"] = bool(strict)
        converted.append({"type": "function", "function": function})
    return converted


def _tool_support(compat: dict[str, Any]) -> ToolSupport:
    both = compat["supportsMidConvoSystemMessages"] and compat.get("supportsMidConvoToolAdditions")
    return "additions" if both else "none"


def _has_tool_history(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        m["role"] == "toolResult"
        or (m["role"] == "assistant" and any(b["type"] == "toolCall" for b in m["content"]))
        for m in messages
    )


def _prompt_cache(model: Model, options: StreamOptions, compat: dict[str, Any]) -> dict[str, Any]:
    retention = options.cache_retention or "short"
    mode = compat.get("promptCacheKeyMode") or "auto"
    base_url = model.base_url or ""
    supports_key = mode == "enabled" or (
        mode == "auto"
        and ("api.openai.com" in base_url or (retention == "long" and compat["supportsLongCacheRetention"]))
    )
    fields: dict[str, Any] = {}
    if retention != "none" and supports_key and options.session_id:
        fields["prompt_cache_key"] = options.session_id[:64]
    if retention == "long" and compat["supportsLongCacheRetention"]:
        fields["prompt_cache_retention"] = "24h"
    return fields


def _reasoning_fields(model: Model, level: str | None, compat: dict[str, Any]) -> dict[str, Any]:
    if not model.reasoning:
        return {}
    level_map = model.compat.get("thinkingLevelMap") or {}
    effort = level_map.get(level, level) if level else None
    kind = compat["thinkingFormat"]
    if kind == "zai":
        fields: dict[str, Any] = {
            "thinking": {"type": "enabled", "clear_thinking": False} if level else {"type": "disabled"}
        }
        if level and compat["supportsReasoningEffort"] and isinstance(effort, str):
            fields["reasoning_effort"] = effort
        return fields
    if kind == "qwen":
        fields = {"enable_thinking": bool(level)}
        if level and compat["supportsReasoningEffort"] and isinstance(effort, str):
            fields["reasoning_effort"] = effort
        return fields
    if kind == "qwen-chat-template":
        return {"chat_template_kwargs": {"enable_thinking": bool(level), "preserve_thinking": True}}
    if kind == "deepseek":
        fields = {}
        if level:
            fields["thinking"] = {"type": "enabled"}
        elif level_map.get("off", "") is not None:
            fields["thinking"] = {"type": "disabled"}
        if level and compat["supportsReasoningEffort"]:
            fields["reasoning_effort"] = effort
        return fields
    if kind == "openrouter":
        if level:
            return {"reasoning": {"effort": effort}}
        off = level_map.get("off", "none")
        return {} if off is None else {"reasoning": {"effort": off}}
    if compat["supportsReasoningEffort"]:
        if level:
            return {"reasoning_effort": effort}
        off = level_map.get("off")
        return {"reasoning_effort": off} if isinstance(off, str) else {}
    return {}


def build_params(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> dict[str, Any]:
    """The request body pi 1.6 would send for this transcript."""
    opts = options or StreamOptions()
    compat = resolve_compat(model)
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, context, compat),
        "stream": True,
    }
    params.update(_prompt_cache(model, opts, compat))
    if compat["supportsUsageInStreaming"] is not False:
        params["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        params["store"] = False
    max_tokens = clamp_max_tokens_to_context(model, context["messages"], opts.max_tokens or model.max_tokens)
    params["max_tokens" if compat["maxTokensField"] == "max_tokens" else "max_completion_tokens"] = max_tokens
    if opts.temperature is not None:
        params["temperature"] = opts.temperature
    transcript = resolve_transcript(context, compat["supportsMidConvoSystemMessages"])["messages"]
    tools, _ = resolve_transcript_tools(transcript, _tool_support(compat))
    if tools:
        params["tools"] = convert_tools(tools, compat)
    elif compat["requiresToolsWithToolHistory"] and _has_tool_history(transcript):
        params["tools"] = []
    cache_control = _cache_control(compat, opts.cache_retention or "short")
    if cache_control is not None:
        _mark_cache_breakpoints(params["messages"], params.get("tools"), cache_control)
    params.update(_reasoning_fields(model, clamp_thinking_level(model, opts.reasoning), compat))
    return params


# -- Anthropic prompt caching through an OpenAI-compatible route (OpenRouter) --------------------


def _cache_control(compat: dict[str, Any], retention: str) -> dict[str, Any] | None:
    """The marker for ``compat.cacheControlFormat: "anthropic"``; ``None`` without caching."""
    if compat.get("cacheControlFormat") != "anthropic" or retention == "none":
        return None
    long = retention == "long" and compat["supportsLongCacheRetention"]
    return {"type": "ephemeral", "ttl": "1h"} if long else {"type": "ephemeral"}


def _mark_cache_breakpoints(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, marker: dict[str, Any]
) -> None:
    """pi's three breakpoints: the system prompt, the last tool, the last conversation message.

    Only the first instruction message is tried (a Kimi-style tools-only message there gets none);
    the conversation marker goes on the last user, assistant or tool message with text to carry it.
    """
    instruction = next((m for m in messages if m["role"] in ("system", "developer")), None)
    if instruction is not None:
        _mark_text(instruction, marker)
    if tools:
        tools[-1]["cache_control"] = marker
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, marker):
            return


def _mark_text(message: dict[str, Any], marker: dict[str, Any]) -> bool:
    """Put ``marker`` on the message's last text; a string content becomes one text part."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
        return True
    if not isinstance(content, list):
        return False
    for part in reversed(content):
        if isinstance(part, dict) and part.get("type") == "text":
            part["cache_control"] = marker
            return True
    return False


def request_headers(model: Model, options: StreamOptions, compat: dict[str, Any]) -> dict[str, str]:
    headers = dict(model.headers)
    session = options.session_id if options.cache_retention != "none" else None
    if session and compat["sendSessionAffinityHeaders"]:
        if compat["sessionAffinityFormat"] == "openrouter":
            headers["x-session-id"] = session
        else:
            headers["session_id"] = session
            headers["x-client-request-id"] = session
            headers["x-session-affinity"] = session
    headers.update(options.headers)
    return headers
