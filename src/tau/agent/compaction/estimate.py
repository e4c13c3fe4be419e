"""Token estimates as pi 1.6 makes them: characters / 4, rounded up, counted in UTF-16 code units.

Estimates decide when to compact and where to cut, so they must equal pi's to the token: a
different count moves a cut point. Messages are agent messages (plain dicts) as the projection
gives them, including the agent-only roles ``custom``, ``bashExecution``, ``branchSummary`` and
``compactionSummary``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from tau.common.jsjson import dumps
from tau.common.jsstr import js_len
from tau.llm.transcript import current_system_message

__all__ = [
    "ContextUsageEstimate",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    "get_last_assistant_usage",
]

Message = dict[str, Any]

# An image counts as 4,800 characters (1,200 tokens), whatever its size.
ESTIMATED_IMAGE_CHARS = 4800


class ContextUsageEstimate(TypedDict):
    """How many tokens the context holds: provider-reported usage plus estimates after it."""

    tokens: int
    usageTokens: int
    trailingTokens: int
    lastUsageIndex: int | None


def _ceil_quarter(chars: int) -> int:
    return -(-chars // 4)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            text = block["text"]
            chars += len(text) if text.isascii() else js_len(text)
        elif kind == "image":
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def _json_len(value: Any) -> int:
    raw = dumps(value)
    return len(raw) if raw.isascii() else js_len(raw.decode("utf-8", "surrogatepass"))


def _system_chars(message: Mapping[str, Any]) -> int:
    chars = _content_chars(message.get("content"))
    sections = message.get("sections")
    if isinstance(sections, dict):
        chars += sum(js_len(text) for text in sections.values() if isinstance(text, str) and text)
    if message.get("toolsAdded") is not None:
        chars += _json_len(message["toolsAdded"])
    return chars


def _assistant_chars(message: Mapping[str, Any]) -> int:
    # Every message of a resumed session's first request is estimated: js_len inlined for ASCII.
    content = message.get("content")
    chars = 0
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = block.get("text") or ""
        elif kind == "thinking":
            text = block.get("thinking") or ""
        elif kind == "toolCall":
            name = block.get("name") or ""
            chars += (len(name) if name.isascii() else js_len(name)) + _json_len(block.get("arguments"))
            continue
        else:
            continue
        chars += len(text) if text.isascii() else js_len(text)
    return chars


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """pi's ``estimateTokens``: the message's characters / 4, rounded up (0 for unknown roles)."""
    role = message.get("role")
    if role == "system":
        chars = _system_chars(message)
    elif role in ("user", "custom", "toolResult"):
        chars = _content_chars(message.get("content"))
    elif role == "assistant":
        chars = _assistant_chars(message)
    elif role == "bashExecution":
        chars = js_len(message.get("command") or "") + js_len(message.get("output") or "")
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_len(message.get("summary") or "")
    else:
        return 0
    return _ceil_quarter(chars)


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """The sum of :func:`estimate_tokens` over ``messages`` (pi's estimate after a compaction)."""
    return sum(estimate_tokens(message) for message in messages)


def calculate_context_tokens(usage: dict[str, Any]) -> int:
    """Context size a provider reported: ``totalTokens``, or the sum of its parts when that is 0."""
    total = usage.get("totalTokens")
    if total:
        return total
    return sum(usage.get(key) or 0 for key in ("input", "output", "cacheRead", "cacheWrite"))


def _assistant_usage(message: Message) -> dict[str, Any] | None:
    # Error, aborted and all-zero usage records say nothing about the context size.
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict) or calculate_context_tokens(usage) <= 0:
        return None
    return usage


def get_last_assistant_usage(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The usage of the newest ``message`` entry whose assistant message has a usable one."""
    for entry in reversed(entries):
        if entry.get("type") == "message" and isinstance(entry.get("message"), dict):
            usage = _assistant_usage(entry["message"])
            if usage is not None:
                return usage
    return None


def estimate_context_tokens(messages: list[Message]) -> ContextUsageEstimate:
    """pi's ``estimateContextTokens``: the last usable usage plus estimates of the messages after it.

    Without any usable usage, the sum of the estimates of all messages.
    """
    for index in range(len(messages) - 1, -1, -1):
        usage = _assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = estimate_messages_tokens(messages[index + 1 :])
            return {
                "tokens": usage_tokens + trailing,
                "usageTokens": usage_tokens,
                "trailingTokens": trailing,
                "lastUsageIndex": index,
            }
    estimated = estimate_messages_tokens(messages)
    return {"tokens": estimated, "usageTokens": 0, "trailingTokens": estimated, "lastUsageIndex": None}


def _usage_entry_id(projection: dict[str, Any], message_index: int) -> str | None:
    # From the end: the last usage is almost always among the newest messages.
    after = len(projection["messages"])
    if message_index >= after:
        return None
    for projected in reversed(projection["entries"]):
        first = after - len(projected["messages"])
        if message_index >= first:
            return projected["sourceEntry"].get("id")
        after = first
    return None


def _usage_is_current(projection: dict[str, Any], branch: list[dict[str, Any]], message_index: int) -> bool:
    # Usage reported before a later context edit or compaction describes a context that is gone:
    # walking back from the leaf, the usage's entry must come before any such entry.
    entry_id = _usage_entry_id(projection, message_index)
    for index in range(len(branch) - 1, -1, -1):
        entry = branch[index]
        if entry.get("type") in ("context_edit", "compaction"):
            return False
        if entry_id is not None and entry.get("id") == entry_id:
            return True
    return False


def estimate_projected_context_tokens(
    projection: dict[str, Any], branch: list[dict[str, Any]]
) -> ContextUsageEstimate:
    """pi's ``estimateProjectedContextTokens`` for a session projection of ``branch``.

    Trusts the last usage only when no ``context_edit`` or ``compaction`` entry follows it on the
    branch; otherwise the estimate of the collapsed system message plus every non-system message.
    """
    messages = projection["messages"]
    estimate = estimate_context_tokens(messages)
    index = estimate["lastUsageIndex"]
    if index is not None and _usage_is_current(projection, branch, index):
        return estimate
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    tokens += estimate_messages_tokens([m for m in messages if m.get("role") != "system"])
    return {"tokens": tokens, "usageTokens": 0, "trailingTokens": tokens, "lastUsageIndex": None}
