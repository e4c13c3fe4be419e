"""Which tool results ObservationPack packs, and their content-derived identity (extensions.md §5.4)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from tau.bundled.reducer.wire import RECEIPT_PREFIX
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "FULL_SENDS",
    "THRESHOLD_BYTES",
    "Observation",
    "arguments_observation",
    "count_lines",
    "estimate_tokens",
    "is_observation_id",
    "observation_of",
    "surely_small",
    "text_observation",
]

THRESHOLD_BYTES = 10 * 1024
FULL_SENDS = 2
RECEIPT_LINE = RECEIPT_PREFIX  # a reducer receipt is never packed
_ID = lazy_pattern(r"^obs_[a-f0-9]{24}$")
# Any code point is at most 4 UTF-8 bytes: shorter texts cannot pass the threshold (no encode needed).
_MAX_UTF8_PER_CHAR = 4


@dataclass(frozen=True)
class Observation:
    """A packable tool result: its text, the stored bytes, and the figures the placeholder shows."""

    id: str
    content_hash: str
    tool_name: str
    text: str
    data: bytes
    lines: int
    tokens: int

    @property
    def bytes(self) -> int:
        return len(self.data)


def estimate_tokens(text: str) -> int:
    """ceil(UTF-16 code units / 4), SoL-Pi's estimate."""
    return math.ceil(js_len(text) / 4)


def count_lines(text: str) -> int:
    """Newlines, plus one when the text does not end with one; 0 for an empty text."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def is_observation_id(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and _ID.match(value) is not None


def _has_receipt(text: str) -> bool:
    index = text.find(RECEIPT_LINE)
    while index >= 0:
        end = index + len(RECEIPT_LINE)
        if (index == 0 or text[index - 1] == "\n") and (end == len(text) or text[end] == "\n"):
            return True
        index = text.find(RECEIPT_LINE, index + 1)
    return False


def result_text(message: dict[str, Any], *, errors: bool = False) -> str | None:
    """The joined text of a successful (or, with ``errors``, any) text-only tool result; ``None``
    for anything else."""
    if message.get("role") != "toolResult" or (message.get("isError") and not errors):
        return None
    content = message.get("content")
    if not isinstance(content, list) or not content:
        return None
    if any(
        not isinstance(b, dict) or b.get("type") != "text" or not isinstance(b.get("text"), str)
        for b in content
    ):
        return None
    return "\n".join(block["text"] for block in content)


def observation_id(tool_name: str, tool_call_id: str, content_hash: str) -> str:
    identity = f"{tool_name}\0{tool_call_id}\0{content_hash}".encode("utf-8", "surrogatepass")
    return "obs_" + hashlib.sha256(identity).hexdigest()[:24]


def surely_small(text: str) -> bool:
    """Whether ``text`` cannot pass the threshold whatever its characters (no encoding needed)."""
    return len(text) * _MAX_UTF8_PER_CHAR <= THRESHOLD_BYTES


def observation_of(message: dict[str, Any]) -> Observation | None:
    """The observation of an eligible tool result (over 10 KiB, text only, no receipt), else ``None``."""
    text = result_text(message)
    if text is None or surely_small(text):
        return None
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= THRESHOLD_BYTES or _has_receipt(text):
        return None
    content_hash = hashlib.sha256(data).hexdigest()
    tool_name = str(message.get("toolName", ""))
    return Observation(
        id=observation_id(tool_name, str(message.get("toolCallId", "")), content_hash),
        content_hash=content_hash,
        tool_name=tool_name,
        text=text,
        data=data,
        lines=count_lines(text),
        tokens=estimate_tokens(text),
    )


def _observation(tool_name: str, identity: str, text: str) -> Observation:
    data = text.encode("utf-8", "surrogatepass")
    content_hash = hashlib.sha256(data).hexdigest()
    return Observation(
        id=observation_id(tool_name, identity, content_hash),
        content_hash=content_hash,
        tool_name=tool_name,
        text=text,
        data=data,
        lines=count_lines(text),
        tokens=estimate_tokens(text),
    )


def text_observation(message: dict[str, Any]) -> Observation | None:
    """The observation of any text-only tool result, an error included, that holds no receipt
    (what stale packing may replace, whatever its size; the caller applies its floor)."""
    text = result_text(message, errors=True)
    if not text or _has_receipt(text):
        return None
    return _observation(str(message.get("toolName", "")), str(message.get("toolCallId", "")), text)


def arguments_observation(call: Mapping[str, Any]) -> Observation | None:
    """The observation of a tool call's arguments (the JSON text of its ``arguments`` object)."""
    arguments = call.get("arguments")
    if not isinstance(arguments, dict) or not arguments:
        return None
    text = jsjson.dumps_str(arguments)
    return _observation(str(call.get("name", "")), f"{call.get('id', '')}#arguments", text)
