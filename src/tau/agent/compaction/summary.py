"""Compaction summaries: the request pi 1.6 sends, and the entry fields made from the answer.

The model is reached through an injected ``complete(context) -> assistant message`` callable, so this
module knows nothing of providers. The caller gives it the summarizer's request options (pi: the
session's model, ``cacheRetention: "none"``, reasoning at the current thinking level when the model
reasons, the session's retry policy).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from tau.common.jsjson import dumps_str
from tau.common.jsstr import js_len, ms_now
from tau.llm.messages import content_text, has_tool_calls, message_text
from tau.llm.overflow import is_context_overflow
from tau.llm.types import AssistantMessage, TranscriptContext, Usage
from tau.session.projection import convert_to_llm

from .file_ops import compute_file_lists, format_file_operations
from .prepare import CompactionPreparation
from .prompts import (
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
)

if TYPE_CHECKING:  # pragma: no cover
    from .cached import CachedSummaries

__all__ = [
    "CompactionDetails",
    "CompactionResult",
    "Complete",
    "SummarizationError",
    "build_summary_prompt",
    "build_turn_prefix_prompt",
    "combine_usage",
    "compact",
    "generate_summary",
    "generate_turn_prefix_summary",
    "needs_pi_request",
    "serialize_conversation",
    "spent_usage",
    "summarization_context",
    "summarization_failure",
]

Message = dict[str, Any]

Complete = Callable[[TranscriptContext], Awaitable[AssistantMessage]]
"""Sends one summary request and returns the final assistant message.

Like a provider stream's result, it reports failures as ``stopReason: "error"`` (or ``"aborted"``)
rather than raising.
"""

# A tool result longer than this is cut in a summary request: its full text is not needed there.
TOOL_RESULT_MAX_CHARS = 2000

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"


class SummarizationError(Exception):
    """The summary model failed, stopped at its token cap, or called a tool: nothing was stored."""


class CompactionDetails(TypedDict):
    """``details`` of a compaction (or branch summary) entry pi made itself."""

    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionResult(TypedDict):
    """The fields of the ``compaction`` entry to append (pi's ``CompactionResult``)."""

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    usage: Usage
    details: CompactionDetails


# --- serialization -------------------------------------------------------------------------------


def _slice_head(text: str, max_units: int) -> str:
    """At most ``max_units`` UTF-16 code units of ``text``, never half a surrogate pair."""
    if text.isascii():
        return text[:max_units]
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > max_units:
            return text[:index]
    return text


def _truncate_for_summary(text: str, max_chars: int) -> str:
    length = js_len(text)
    if length <= max_chars:
        return text
    return f"{_slice_head(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _tool_call_text(block: dict[str, Any]) -> str:
    args = block.get("arguments")
    pairs = ", ".join(
        f"{key}={dumps_str(value)}" for key, value in (args if isinstance(args, dict) else {}).items()
    )
    return f"{block.get('name')}({pairs})"


def _assistant_parts(message: Message) -> list[str]:
    content = message.get("content")
    blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    parts = []
    if any(block.get("type") == "text" for block in blocks):
        parts.append(f"[Assistant]: {content_text(blocks)}")
    calls = [_tool_call_text(block) for block in blocks if block.get("type") == "toolCall"]
    if calls:
        parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
    return parts


def serialize_conversation(messages: Sequence[Message]) -> str:
    """Model messages as plain text, so the summarizer reads them instead of continuing them.

    ``[User]:``, ``[Assistant]:``, ``[Assistant tool calls]: name(key=JSON, ...); ...`` and
    ``[Tool result]:`` (cut to 2,000 characters), separated by blank lines. Thinking is left out:
    replayed thinking is often not what the model saw, and it can outgrow the context it summarizes.
    """
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            text = content_text(message.get("content"), "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(message))
        elif role == "toolResult":
            text = content_text(message.get("content"), "")
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


# --- requests ------------------------------------------------------------------------------------


def _with_focus(instructions: str, custom_instructions: str | None) -> str:
    return (
        f"{instructions}\n\nAdditional focus: {custom_instructions}" if custom_instructions else instructions
    )


def build_summary_prompt(
    messages: Sequence[Message],
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
) -> str:
    """The user text of a history summary request for agent ``messages``.

    ``<conversation>`` with the serialized messages, then ``<previous-summary>`` and the update
    instructions when a previous summary exists, else the initial instructions.
    """
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    prompt = f"<conversation>\n{serialize_conversation(convert_to_llm(list(messages)))}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return prompt + _with_focus(instructions, custom_instructions)


def build_turn_prefix_prompt(messages: Sequence[Message], *, custom_instructions: str | None = None) -> str:
    """The user text of a split turn's second request: the cut turn's beginning, checkpointed."""
    conversation = serialize_conversation(convert_to_llm(list(messages)))
    prompt = f"# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
    return _with_focus(prompt, custom_instructions)


def summarization_context(prompt_text: str, *, timestamp: int | None = None) -> TranscriptContext:
    """A standalone request: pi's summarization system prompt and one user message."""
    return {
        "messages": [
            {"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT, "timestamp": 0},
            {
                "role": "user",
                "content": [{"type": "text", "text": prompt_text}],
                "timestamp": ms_now() if timestamp is None else timestamp,
            },
        ]
    }


def summarization_failure(response: AssistantMessage, label: str) -> str | None:
    """Why ``response`` must not become a checkpoint (an error, or partial text at the token cap)."""
    stop = response.get("stopReason")
    if stop == "error":
        return f"{label} failed: {response.get('errorMessage') or 'Unknown error'}"
    if stop == "length":
        return f"{label} failed: generation hit the token cap and the summary is incomplete"
    return None


def _answer(response: AssistantMessage, label: str) -> tuple[str, Usage]:
    failure = summarization_failure(response, label)
    if failure:
        raise SummarizationError(failure)
    if has_tool_calls(response):
        raise SummarizationError(f"{label} attempted to call a tool")
    return message_text(response), response.get("usage")


def needs_pi_request(response: AssistantMessage) -> bool:
    """A cache-friendly summary answer that cannot be used: it called a tool, or overflowed the window."""
    overflow = response.get("stopReason") == "error" and is_context_overflow(response)
    return overflow or has_tool_calls(response)


def spent_usage(first: Any, second: Usage) -> Usage:
    """``second``, plus the usage of a cache-friendly attempt ``first`` that was not used."""
    if isinstance(first, dict) and isinstance(first.get("cost"), dict) and isinstance(second, dict):
        return combine_usage(first, second)
    return second


async def _request(
    complete: Complete,
    prompt_text: str,
    label: str,
    cached: tuple[Complete, TranscriptContext | None] | None = None,
) -> tuple[str, Usage]:
    """One summary: the cache-friendly request first when there is one, else (or when it called a
    tool or overflowed the window) pi's request; the usage of both when both were sent."""
    spent: Usage | None = None
    if cached is not None and cached[1] is not None:
        response = await cached[0](cached[1])
        if not needs_pi_request(response):
            return _answer(response, label)
        spent = response.get("usage")
    text, usage = _answer(await complete(summarization_context(prompt_text)), label)
    return text, spent_usage(spent, usage)


async def generate_summary(
    messages: Sequence[Message],
    complete: Complete,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    cached: tuple[Complete, TranscriptContext | None] | None = None,
) -> tuple[str, Usage]:
    """Summarize ``messages`` (or fold them into ``previous_summary``): ``(text, usage)``.

    ``cached``: a cache-friendly request to send first (see :func:`_request`).

    Raises:
        SummarizationError: the response failed, hit its token cap, or called a tool.
    """
    prompt = build_summary_prompt(
        messages, previous_summary=previous_summary, custom_instructions=custom_instructions
    )
    return await _request(complete, prompt, "Summarization", cached)


async def generate_turn_prefix_summary(
    messages: Sequence[Message],
    complete: Complete,
    *,
    custom_instructions: str | None = None,
    cached: tuple[Complete, TranscriptContext | None] | None = None,
) -> tuple[str, Usage]:
    """Checkpoint the beginning of a split turn: ``(text, usage)``; raises like :func:`generate_summary`."""
    prompt = build_turn_prefix_prompt(messages, custom_instructions=custom_instructions)
    return await _request(complete, prompt, "Turn prefix summarization", cached)


def combine_usage(first: Mapping[str, Any], second: Usage) -> Usage:
    """The sum of two usage records; the cost is provider-reported only when both parts are."""
    combined: dict[str, Any] = {
        key: first[key] + second[key] for key in ("input", "output", "cacheRead", "cacheWrite")
    }
    for optional in ("cacheWrite1h", "reasoning"):
        if optional in first or optional in second:
            combined[optional] = first.get(optional, 0) + second.get(optional, 0)
    combined["totalTokens"] = first["totalTokens"] + second["totalTokens"]
    costs = {
        key: first["cost"][key] + second["cost"][key]
        for key in ("input", "output", "cacheRead", "cacheWrite")
    }
    costs["total"] = first["cost"]["total"] + second["cost"]["total"]
    costs["totalFromProvider"] = (
        first["cost"].get("totalFromProvider") is True and second["cost"].get("totalFromProvider") is True
    )
    combined["cost"] = costs
    return combined  # type: ignore[return-value]


async def compact(
    preparation: CompactionPreparation,
    complete: Complete,
    *,
    custom_instructions: str | None = None,
    cached: CachedSummaries | None = None,
) -> CompactionResult:
    """Summarize a prepared compaction; the result holds the fields of the entry to append.

    A split turn makes two requests, the history (skipped when nothing precedes the turn: then the
    previous summary or ``No prior history.`` stands in) and the turn prefix, merged as
    ``<history>\\n\\n---\\n\\n**Turn Context (split turn):**\\n\\n<prefix>``. The file lists are
    appended to the summary as ``<read-files>`` / ``<modified-files>`` blocks.

    Args:
        preparation: a :class:`~tau.agent.compaction.prepare.CompactionPreparation`.
        complete: sends one request (see :data:`Complete`).
        custom_instructions: ``/compact <text>``: appended as ``Additional focus: <text>``.
        cached: the cache-friendly requests (:mod:`.cached`); each part falls back to pi's request
            when its cached one would not fit the window, called a tool, or overflowed.

    Raises:
        SummarizationError: a summary request failed; nothing is to be stored.
    """
    previous = preparation.previous_summary
    split = preparation.is_split_turn and bool(preparation.turn_prefix_messages)
    history_cached = prefix_cached = None
    if cached is not None and (cached.turn_start is not None or not split):
        from .cached import history_instruction, turn_prefix_instruction

        until = cached.turn_start if split and cached.turn_start is not None else cached.kept
        history_cached = (
            cached.complete,
            cached.context(
                history_instruction(
                    until,
                    previous_summary=previous is not None,
                    custom_instructions=custom_instructions,
                    split=split,
                )
            ),
        )
        if split and cached.turn_start is not None:
            prefix_cached = (
                cached.complete,
                cached.context(turn_prefix_instruction(cached.turn_start, cached.kept, custom_instructions)),
            )
    if split:
        history: str = "No prior history." if previous is None else previous
        history_usage: Usage | None = None
        if preparation.messages_to_summarize:
            history, history_usage = await generate_summary(
                preparation.messages_to_summarize,
                complete,
                previous_summary=previous,
                custom_instructions=custom_instructions,
                cached=history_cached,
            )
        prefix, prefix_usage = await generate_turn_prefix_summary(
            preparation.turn_prefix_messages,
            complete,
            custom_instructions=custom_instructions,
            cached=prefix_cached,
        )
        summary = history + SPLIT_TURN_SEPARATOR + prefix
        usage = combine_usage(history_usage, prefix_usage) if history_usage is not None else prefix_usage
    else:
        summary, usage = await generate_summary(
            preparation.messages_to_summarize,
            complete,
            previous_summary=previous,
            custom_instructions=custom_instructions,
            cached=history_cached,
        )
    read_files, modified_files = compute_file_lists(preparation.file_ops)
    return {
        "summary": summary + format_file_operations(read_files, modified_files),
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "tokensBefore": preparation.tokens_before,
        "usage": usage,
        "details": {"readFiles": read_files, "modifiedFiles": modified_files},
    }
