"""What the faux provider derives from a request it receives.

- :func:`estimate_usage`: pi-ai 1.6 faux's usage, the prompt rendered as ``role:TEXT`` parts at 4
  UTF-16 units a token, split into a cache read and a write by the session's previous prompt;
- :func:`bill`: that usage appended to ``$TAU_FAUX_BILL``, what ``bench/economy`` prices;
- :func:`chat_completions_payload`: the request as the Chat Completions payload that
  ``before_provider_request`` handlers see.

:func:`message_memo` keeps what is derived per message between the calls of a run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from tau.common import jsjson
from tau.common.jsstr import js_len
from tau.llm.messages import content_text
from tau.llm.providers._message_memo import MessageMemo, common_prefix, json_copy
from tau.llm.stream import StreamOptions
from tau.llm.transcript import current_system_prompt, current_tools, system_message_text
from tau.llm.types import Model, TranscriptContext, Usage

__all__ = [
    "BILL_ENV",
    "BILL_PROMPTS_ENV",
    "bill",
    "chat_completions_payload",
    "estimate_usage",
    "message_memo",
    "render_prompt",
]

BILL_ENV = "TAU_FAUX_BILL"
BILL_PROMPTS_ENV = "TAU_FAUX_BILL_PROMPTS"


# -- usage: pi-ai 1.6 faux's estimate --------------------------------------------------------


def _user_content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block["text"])
        else:
            parts.append(f"[image:{block.get('mimeType')}:{js_len(block.get('data') or '')}]")
    return "\n".join(parts)


def _assistant_content_text(content: Iterable[Mapping[str, Any]]) -> str:
    parts = []
    for block in content:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "thinking":
            parts.append(block["thinking"])
        else:
            parts.append(f"{block['name']}:{jsjson.dumps_str(block.get('arguments'))}")
    return "\n".join(parts)


def _message_text(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    if role == "system":
        parts = [system_message_text(message)]
        parts += [f"tool-:{jsjson.dumps_str(tool)}" for tool in message.get("toolsRemoved") or []]
        parts += [f"tool+:{jsjson.dumps_str(tool)}" for tool in message.get("toolsAdded") or []]
        return "\n".join(part for part in parts if part)
    if role == "user":
        return _user_content_text(message["content"])
    if role == "assistant":
        return _assistant_content_text(message["content"])
    blocks = [_user_content_text([block]) for block in message.get("content") or []]
    return "\n".join([str(message.get("toolName")), *blocks])


def render_prompt(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The request as faux sees it: one ``role:TEXT`` per message (the prompt joins them with blank lines)."""
    return [f"{message.get('role')}:{_message_text(message)}" for message in messages]


def _prompt_part(message: Mapping[str, Any]) -> tuple[str, int]:
    # An assistant message's text inlined (half of a resumed session's messages; one frame each).
    if message.get("role") == "assistant":
        parts: list[str] = []
        add = parts.append
        for block in message["content"]:
            kind = block["type"]
            if kind == "text":
                add(block["text"])
            elif kind == "thinking":
                add(block["thinking"])
            else:
                add(f"{block['name']}:{jsjson.dumps_str(block.get('arguments'))}")
        part = "assistant:" + "\n".join(parts)
    elif message.get("role") == "toolResult":  # _message_text's last case, inlined as well
        parts = [str(message.get("toolName"))]
        add = parts.append
        for block in message.get("content") or []:
            if block.get("type") == "text":
                text = block["text"]
                add(text if text.__class__ is str else "\n".join([text]))  # (a non-string fails as there)
            else:
                add(f"[image:{block.get('mimeType')}:{js_len(block.get('data') or '')}]")
        part = "toolResult:" + "\n".join(parts)
    else:
        part = f"{message.get('role')}:{_message_text(message)}"
    return part, len(part) if part.isascii() else js_len(part)


def message_memo() -> MessageMemo:
    """What faux derives per message, kept between the calls of a run: each message's ``prompt``
    part with its JS length (:func:`estimate_usage`), its ``payload`` messages
    (:func:`chat_completions_payload`, handed to ``before_provider_request`` handlers) and its
    ``factory`` copy (the plain JSON a ``factory`` step is given, which it may change)."""
    return MessageMemo(
        prompt=(_prompt_part, False), payload=(_chat_messages, True), factory=(json_copy, True)
    )


def _joined_length(parts: Sequence[str], count: int | None = None) -> int:
    count = len(parts) if count is None else count
    return sum(js_len(part) for part in parts[:count]) + max(0, count - 1) * 2


def _common_prefix_utf16(a: str, b: str) -> int:
    """Length in UTF-16 code units of the common prefix (JS compares code units)."""
    if a.isascii() and b.isascii():
        ua, ub, width = a.encode("ascii"), b.encode("ascii"), 1
    else:
        ua, ub, width = a.encode("utf-16-le", "surrogatepass"), b.encode("utf-16-le", "surrogatepass"), 2
    low, high = 0, min(len(ua), len(ub))
    while low < high:  # binary search on slice equality: C-speed comparisons
        mid = (low + high + 1) // 2
        if ua[:mid] == ub[:mid]:
            low = mid
        else:
            high = mid - 1
    return low // width


def _common_prompt_prefix(
    previous: Sequence[str], current: Sequence[str], lengths: Sequence[int] | None = None
) -> int:
    """``lengths``: the JS lengths of ``current``'s parts, when known (the equal leading parts of
    ``previous`` have the same)."""
    index = common_prefix(previous, current)

    def rest(parts: Sequence[str]) -> str:
        if index == len(parts):
            return ""
        return ("\n\n" if index > 0 else "") + "\n\n".join(parts[index:])

    if lengths is None:
        common = _joined_length(previous, index)
    else:
        common = sum(lengths[:index]) + max(0, index - 1) * 2
    return common + _common_prefix_utf16(rest(previous), rest(current))


def estimate_usage(
    messages: Sequence[Mapping[str, Any]],
    reply_content: Iterable[Mapping[str, Any]],
    *,
    session_id: str | None = None,
    cache_retention: str = "short",
    prompt_cache: dict[str, list[str]] | None = None,
    memo: MessageMemo | None = None,
) -> Usage:
    """pi-ai 1.6 faux's usage: prompt and reply at 4 characters (UTF-16 units) a token.

    With a session id (and caching not ``none``) the prompt is split into ``cacheRead`` (the common
    prefix with that session's previous prompt) and ``cacheWrite`` (the rest), ``input`` is 0, and
    ``prompt_cache`` remembers this prompt. Without one, ``input`` is the prompt. ``memo`` (a
    provider's :func:`message_memo`, refreshed with ``messages``) keeps each message's part between
    the calls of a run.
    """
    lengths: list[int] | None = None
    if memo is None:
        prompt = render_prompt(messages)
        prompt_length = _joined_length(prompt)
    else:
        rendered = memo.column("prompt")
        prompt = list(map(itemgetter(0), rendered))
        lengths = list(map(itemgetter(1), rendered))
        prompt_length = sum(lengths) + max(0, len(lengths) - 1) * 2
    prompt_tokens = math.ceil(prompt_length / 4)
    output = math.ceil(js_len(_assistant_content_text(reply_content)) / 4)
    input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
    if session_id and cache_retention != "none" and prompt_cache is not None:
        previous = prompt_cache.get(session_id)
        if previous is not None:
            cache_read = math.ceil(_common_prompt_prefix(previous, prompt, lengths) / 4)
            cache_write = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        input_tokens = 0
        prompt_cache[session_id] = prompt
    return {
        "input": input_tokens,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_tokens + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


# -- the bill: one line per answered call, for benchmarks ----------------------------------


def bill(context: TranscriptContext, options: StreamOptions, usage: Usage, model: str | None = None) -> None:
    """Append this call's usage to ``$TAU_FAUX_BILL`` (a JSON-lines file), when it is set.

    The bill is what a provider would charge for the request faux received: ``bench/economy``
    prices every call of a run from it, side requests (reducer, summaries) included; ``model`` names
    the faux model that answered (the reducer's may be another than the session's). With
    ``$TAU_FAUX_BILL_PROMPTS=1`` each line also holds the rendered prompt the usage was counted on.
    """
    path = os.environ.get(BILL_ENV)
    if not path:
        return
    line: dict[str, Any] = {
        **({"model": model} if model is not None else {}),
        "sessionId": options.session_id,
        "cacheRetention": options.cache_retention,
        "system": (current_system_prompt(context["messages"]) or "")[:80],
        "usage": usage,
    }
    if os.environ.get(BILL_PROMPTS_ENV) == "1":
        line["prompt"] = render_prompt(context["messages"])
    with open(path, "ab") as out:
        out.write(jsjson.dumps(line) + b"\n")


# -- the payload for before_provider_request -----------------------------------------------


def chat_completions_payload(
    model: Model, context: TranscriptContext, memo: MessageMemo | None = None
) -> dict[str, Any]:
    """The request as an OpenAI Chat Completions payload (what ``before_provider_request`` shows for faux).

    ``memo`` (a provider's :func:`message_memo`, refreshed with the context's messages) keeps each
    message's payload messages between the calls of a run; one a handler changed is made again.
    """
    messages: list[dict[str, Any]] = []
    if memo is None:
        for message in context["messages"]:
            messages.extend(_chat_messages(message))
    else:
        for made in memo.column("payload"):
            messages.extend(made)
    payload: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
        "max_completion_tokens": model.max_tokens,
    }
    tools = current_tools(context["messages"])
    if tools:
        payload["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["parameters"],
                },
            }
            for t in tools
        ]
    return payload


def _chat_messages(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    if role == "system":
        text = system_message_text(message)
        return [{"role": "system", "content": text}] if text else []
    if role == "user":
        content = message["content"]
        if isinstance(content, str):
            return [{"role": "user", "content": [{"type": "text", "text": content}]}]
        parts = [
            {"type": "text", "text": b["text"]}
            if b.get("type") == "text"
            else {
                "type": "image_url",
                "image_url": {"url": f"data:{b.get('mimeType')};base64,{b.get('data')}"},
            }
            for b in content
        ]
        return [{"role": "user", "content": parts}]
    if role == "assistant":
        content = message["content"]
        if isinstance(content, list):
            text, calls = _assistant_parts(content)
        else:
            text = content_text(content)
            calls = [_chat_call(b) for b in content if b["type"] == "toolCall"]
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    return [
        {
            "role": "tool",
            "tool_call_id": message.get("toolCallId"),
            "content": content_text(message.get("content") or []),
        }
    ]


def _chat_call(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": jsjson.dumps_str(block.get("arguments") or {})},
    }


def _assistant_parts(content: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    """``content_text(content)`` and the Chat Completions calls of its ``toolCall`` blocks, in one
    pass (each block is looked at as the two passes would, in the same order)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            texts.append(text if isinstance(text, str) else "")
        if block["type"] == "toolCall":
            calls.append(_chat_call(block))
    return "\n".join(texts), calls
