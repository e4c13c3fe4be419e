"""Cache-friendly summary requests (tau's own; decisions.md, "Compaction").

pi sends every summary as a new, uncached request: its summarizer system prompt and the
conversation serialized as one text. By then the provider has the session's last request in its
prompt cache: the same system prompt, tools and messages. A cache-friendly request sends exactly
that request again, under the same session id and cache retention, followed by the messages added
since and one instruction message, so nearly all of its input is a cache read. The instruction names
the part of the conversation the summary replaces (it quotes the beginning of the first message that
stays) and asks for pi's summary format, with no tool call (by instruction: changing ``tool_choice``
would change the cached prefix).

The answer becomes the same ``compaction`` (or ``branch_summary``) entry pi stores.
:func:`~tau.agent.compaction.summary.compact` falls back to pi's request when the cached one
calls a tool anyway or overflows the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len, ms_now
from tau.llm.types import TranscriptContext

from .estimate import estimate_tokens
from .prompts import (
    BRANCH_SUMMARY_PROMPT,
    CACHED_REQUEST_PREAMBLE,
    SUMMARIZATION_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
)

if TYPE_CHECKING:
    from .summary import Complete

__all__ = [
    "QUOTE_CHARS",
    "CachedSummaries",
    "LastRequest",
    "branch_instruction",
    "fits_window",
    "history_instruction",
    "quote",
    "turn_prefix_instruction",
]

Message = dict[str, Any]
QUOTE_CHARS = 300  # how much of a message the instruction quotes to name it


@dataclass(frozen=True)
class LastRequest:
    """The session's last agent request as it was sent: the prefix the provider has cached.

    Attributes:
        messages: the request's messages (system messages with the prompt and tools included).
        options: its stream options (session id, cache retention, reasoning, headers).
        provider: the model's provider.
        model_id: the model's id.
        leaf_id: the session's leaf when it was sent (the newest entry the request holds).
    """

    messages: list[Message]
    options: Any
    provider: str
    model_id: str
    leaf_id: str | None


def quote(message: Message) -> str:
    """How ``message`` begins, as pi serializes a conversation (``[User]: …``), at most 300 characters."""
    from .summary import serialize_conversation  # the summary machinery: loaded when a compaction runs

    text = serialize_conversation([message])
    if js_len(text) <= QUOTE_CHARS:
        return text
    return text[:QUOTE_CHARS] + " …"


def _with_focus(text: str, custom_instructions: str | None) -> str:
    return f"{text}\n\nAdditional focus: {custom_instructions}" if custom_instructions else text


def _request(scope: str, instructions: str, custom_instructions: str | None) -> str:
    return _with_focus(f"{CACHED_REQUEST_PREAMBLE}\n\n{scope}\n\n{instructions}", custom_instructions)


def _up_to(until: str | None, split: bool) -> str:
    if until is None:
        return (
            "Your summary replaces every message above; the newer messages stay in the context as they are."
        )
    if split:
        return (
            "Your summary replaces every message above up to, but not including, the message that begins "
            "as follows; the current turn, which starts with that message, is summarized separately:\n"
            f"<turn-start>\n{until}\n</turn-start>"
        )
    return (
        "Your summary replaces every message above up to, but not including, the message that begins "
        f"as follows; that message and the ones after it stay in the context as they are:\n"
        f"<first-kept-message>\n{until}\n</first-kept-message>"
    )


def history_instruction(
    until: str | None,
    *,
    previous_summary: bool,
    custom_instructions: str | None = None,
    split: bool = False,
) -> str:
    """The instruction of a history summary: what comes before the message quoted by ``until``
    (``None``: every message of the request); ``split``: that message starts a turn summarized apart."""
    if previous_summary:
        scope = (
            "The conversation above begins with the summary of an earlier compaction. "
            + _up_to(until, split)
            + "\nThe messages after the earlier summary are the new messages to incorporate into it."
        )
        return _request(scope, UPDATE_SUMMARIZATION_PROMPT.split("\n\n", 1)[1], custom_instructions)
    instructions = SUMMARIZATION_PROMPT.removeprefix("The messages above are a conversation to summarize. ")
    return _request(_up_to(until, split), instructions, custom_instructions)


def turn_prefix_instruction(turn_start: str, kept: str | None, custom_instructions: str | None = None) -> str:
    """The instruction of a split turn's prefix summary: from ``turn_start`` up to ``kept`` (``None``:
    to the end of the request's messages)."""
    if kept is None:
        end = "to the end of the messages above"
        quoted = f"<turn-start>\n{turn_start}\n</turn-start>"
    else:
        end = "up to, but not including, the first kept message below"
        quoted = (
            f"<turn-start>\n{turn_start}\n</turn-start>\n<first-kept-message>\n{kept}\n</first-kept-message>"
        )
    scope = (
        f"The current turn is split: its beginning, from the message that begins as follows {end}, is "
        "replaced by a checkpoint; the messages before that turn are summarized separately, and the "
        f"later messages stay as they are.\n{quoted}"
    )
    instructions = TURN_PREFIX_SUMMARIZATION_PROMPT.split("\n\n", 1)[1]
    for said, meant in (
        ("the progress shown above", "the progress in that part of the turn"),
        ("explicitly present above", "explicitly present in that part of the turn"),
    ):
        instructions = instructions.replace(said, meant)
    return _request(scope, instructions, custom_instructions)


def branch_instruction(
    first: str | None, *, custom_instructions: str | None = None, replace_instructions: bool = False
) -> str:
    """The instruction of a branch summary: the branch from the message ``first`` quotes to the end."""
    if first is None:
        scope = "The user is leaving this whole conversation to go back to its start; summarize all of it."
    else:
        scope = (
            "The user is leaving the branch of the conversation that begins with the message quoted "
            "below, to go back to the point before it; summarize that message and everything after it:\n"
            f"<branch-start>\n{first}\n</branch-start>"
        )
    if replace_instructions and custom_instructions:
        return _request(scope, custom_instructions, None)
    return _request(scope, BRANCH_SUMMARY_PROMPT, custom_instructions)


def fits_window(messages: list[Message], instruction: str, context_window: int, headroom: int) -> bool:
    """Whether the cached request, with ``headroom`` tokens left for the summary, fits the window."""
    if context_window <= 0:
        return True
    tokens = sum(estimate_tokens(message) for message in messages) + -(-js_len(instruction) // 4)
    return tokens + headroom <= context_window


@dataclass
class CachedSummaries:
    """The cache-friendly requests of one compaction or branch summary.

    Attributes:
        messages: the last request's messages, then the messages added since (converted for the model).
        complete: sends a request with the agent's session id and cache retention.
        kept: :func:`quote` of the first message the compaction keeps, ``None`` when it is newer than
            every message sent (the summary replaces them all); for a branch summary, of the
            branch's first message.
        turn_start: for a split turn, :func:`quote` of the message that starts the turn.
        context_window: the model's window (0: unknown).
        headroom: tokens the summary needs left in the window.
    """

    messages: list[Message]
    complete: Complete
    kept: str | None = None
    turn_start: str | None = None
    context_window: int = 0
    headroom: int = 0

    def context(self, instruction: str) -> TranscriptContext | None:
        """The request for ``instruction``, or ``None`` when it would not fit the window."""
        if not fits_window(self.messages, instruction, self.context_window, self.headroom):
            return None
        ask = {"role": "user", "content": [{"type": "text", "text": instruction}], "timestamp": ms_now()}
        # ``messages`` are model messages already (convert_to_llm's output), held as plain dicts
        return cast("TranscriptContext", {"messages": [*self.messages, ask]})
