"""Agent messages of the coding agent and their conversion to model messages (pi 1.6 ``messages.ts``).

Besides the model roles (``system``, ``user``, ``assistant``, ``toolResult``), a session projects
four agent-only roles: ``custom`` (extension messages), ``bashExecution`` (``!cmd``),
``branchSummary`` and ``compactionSummary``. :func:`convert_to_llm` turns them into user messages
with pi's exact wording, once per request.

Messages are plain dicts with pi's camelCase keys. Session files are read without validation, so
every function here accepts missing or mistyped fields and behaves as pi's JavaScript would where
that is well defined (a missing field is left out, as ``JSON.stringify`` drops ``undefined``).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from tau.common.jsjson import js_number
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "IMAGES_DISABLED_TEXT",
    "MODEL_ROLES",
    "bash_execution_to_text",
    "block_images",
    "content_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
    "js_date_ms",
    "js_string",
    "js_truthy",
]

Message = dict[str, Any]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
IMAGES_DISABLED_TEXT = "Image reading is disabled."
# The roles of the messages a model is sent as they are; the agent-only roles are converted or dropped.
MODEL_ROLES = frozenset({"system", "user", "assistant", "toolResult"})

_MISSING: Any = object()


# --- JavaScript semantics the conversions depend on -------------------------------------------


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: ``[]`` and ``{}`` are true, ``0``, ``NaN``, ``""`` and ``null`` false."""
    if value is None or value is False or value is _MISSING:
        return False
    if value is True:
        return True
    if isinstance(value, int | float):
        return value == value and value != 0
    if isinstance(value, str):
        return value != ""
    return True


def js_string(value: Any) -> str:
    """``String(value)`` as a template literal or ``+`` would give it (missing = ``undefined``)."""
    if isinstance(value, str):
        return value
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        if isinstance(value, float) and math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


# ECMAScript date-time string format (the only one every engine must accept).
_ISO_DATE = lazy_pattern(
    r"([+-]\d{6}|\d{4})(?:-(\d\d)(?:-(\d\d))?)?"
    r"(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(Z|[+-]\d\d:\d\d)?)?"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_TIME = 8.64e15


def js_date_ms(value: Any) -> int | None:
    """``new Date(value).getTime()`` for a number or an ISO string; ``None`` where JS gives ``NaN``.

    ``null`` is 0 and booleans are 0/1 (JavaScript's ``ToNumber``); a missing value is ``NaN``.
    Only ECMAScript's date-time format is parsed (what pi writes); the engine-specific legacy
    formats V8 also accepts give ``None``. A date-time without an offset is taken as UTC.
    """
    if value is _MISSING:
        return None
    if value is None or isinstance(value, bool):
        return int(bool(value))
    if isinstance(value, list):
        value = js_string(value)  # ToPrimitive: the array joined with commas
    if isinstance(value, int | float):
        if value != value or abs(value) > _MAX_TIME:
            return None
        return int(value)
    if not isinstance(value, str):
        return None
    match = _ISO_DATE.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    try:
        moment = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    ms = (moment - _EPOCH) // timedelta(milliseconds=1) + int((fraction or "0")[:3].ljust(3, "0"))
    if offset and offset != "Z":
        sign = 1 if offset[0] == "+" else -1
        ms -= sign * (int(offset[1:3]) * 60 + int(offset[4:6])) * 60_000
    return ms if abs(ms) <= _MAX_TIME else None


# --- reading a message's content ------------------------------------------------------------


def content_text(content: Any, separator: str = "\n") -> str:
    """The text of a message content: the string itself, or its text blocks joined by ``separator``.

    Anything else is ``""``: blocks that are not objects are skipped, and a text block whose text is
    missing or not a string counts as empty. ``tau.llm.messages`` exports this for the layers above.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        text if isinstance(text := block.get("text"), str) else ""
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


# --- agent messages made from session entries ---------------------------------------------------


def create_custom_message(entry: dict[str, Any]) -> Message:
    """A ``custom_message`` entry as the agent message ``{role: "custom", ...}``."""
    message: Message = {"role": "custom"}
    if "customType" in entry:
        message["customType"] = entry["customType"]
    content = entry.get("content")
    message["content"] = [] if content is None else content
    if "display" in entry:
        message["display"] = entry["display"]
    if "details" in entry:
        message["details"] = entry["details"]
    message["timestamp"] = js_date_ms(entry.get("timestamp", _MISSING))
    return message


def create_branch_summary_message(entry: dict[str, Any]) -> Message:
    """A ``branch_summary`` entry as the agent message ``{role: "branchSummary", ...}``."""
    message: Message = {"role": "branchSummary", "summary": entry.get("summary")}
    if "fromId" in entry:
        message["fromId"] = entry["fromId"]
    message["timestamp"] = js_date_ms(entry.get("timestamp", _MISSING))
    return message


def create_compaction_summary_message(entry: dict[str, Any]) -> Message:
    """A ``compaction`` entry's summary as the agent message ``{role: "compactionSummary", ...}``."""
    message: Message = {"role": "compactionSummary"}
    if "summary" in entry:
        message["summary"] = entry["summary"]
    if "tokensBefore" in entry:
        message["tokensBefore"] = entry["tokensBefore"]
    message["timestamp"] = js_date_ms(entry.get("timestamp", _MISSING))
    return message


# --- agent messages → model messages -------------------------------------------------------------


def bash_execution_to_text(message: Message) -> str:
    """The user text a ``bashExecution`` message becomes: command, fenced output, exit status."""
    text = f"Ran `{js_string(message.get('command', _MISSING))}`\n"
    output = message.get("output", _MISSING)
    text += f"```\n{js_string(output)}\n```" if js_truthy(output) else "(no output)"
    exit_code = message.get("exitCode")
    if js_truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and not _is_js_zero(exit_code):
        text += f"\n\nCommand exited with code {js_string(exit_code)}"
    full_path = message.get("fullOutputPath", _MISSING)
    if js_truthy(message.get("truncated")) and js_truthy(full_path):
        text += f"\n\n[Output truncated. Full output: {js_string(full_path)}]"
    return text


def _is_js_zero(value: Any) -> bool:
    # ``value !== 0``: strict, so only the numbers 0 and -0 count (not false, not "0").
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


def _user_text(message: Message, text: str) -> Message:
    converted: Message = {"role": "user", "content": [{"type": "text", "text": text}]}
    if "timestamp" in message:
        converted["timestamp"] = message["timestamp"]
    return converted


def _convert_one(message: Any) -> Message | None:
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if isinstance(role, str) and role in MODEL_ROLES:
        return message
    if role == "custom":
        content = message.get("content", _MISSING)
        converted: Message = {"role": "user"}
        if isinstance(content, str):
            converted["content"] = [{"type": "text", "text": content}]
        elif content is not _MISSING:
            converted["content"] = content
        if "timestamp" in message:
            converted["timestamp"] = message["timestamp"]
        return converted
    if role == "bashExecution":
        if js_truthy(message.get("excludeFromContext")):
            return None
        return _user_text(message, bash_execution_to_text(message))
    if role == "compactionSummary":
        summary = js_string(message.get("summary", _MISSING))
        return _user_text(message, COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX)
    if role == "branchSummary":
        summary = js_string(message.get("summary", _MISSING))
        return _user_text(message, BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX)
    return None


def convert_to_llm(messages: list[Message], *, block_images: bool = False) -> list[Message]:
    """pi's ``convertToLlm``: agent messages → the messages a provider is sent.

    ``system``, ``user``, ``assistant`` and ``toolResult`` messages pass through as the same
    objects; ``custom``, ``bashExecution`` and the two summaries become user messages; a
    ``bashExecution`` with ``excludeFromContext`` and unknown roles are dropped. With
    ``block_images`` (setting ``images.blockImages``), see :func:`block_images`.
    """
    converted = []
    for message in messages:
        result = _convert_one(message)
        if result is not None:
            converted.append(result)
    if block_images:
        return [_without_images(message) for message in converted]
    return converted


def block_images(messages: list[Message]) -> list[Message]:
    """Replace image blocks of user and toolResult messages by ``Image reading is disabled.``.

    Consecutive copies of that text are collapsed into one; messages without images are returned
    unchanged (the same objects).
    """
    return [_without_images(message) for message in messages]


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def _is_disabled_text(block: Any) -> bool:
    return (
        isinstance(block, dict) and block.get("type") == "text" and block.get("text") == IMAGES_DISABLED_TEXT
    )


def _without_images(message: Message) -> Message:
    content = message.get("content")
    if message.get("role") not in ("user", "toolResult") or not isinstance(content, list):
        return message
    if not any(_is_image(block) for block in content):
        return message
    mapped = [
        {"type": "text", "text": IMAGES_DISABLED_TEXT} if _is_image(block) else block for block in content
    ]
    # pi compares each block with its predecessor in the mapped list, so a run collapses to one.
    kept = [
        block
        for index, block in enumerate(mapped)
        if not (index > 0 and _is_disabled_text(block) and _is_disabled_text(mapped[index - 1]))
    ]
    return {**message, "content": kept}
