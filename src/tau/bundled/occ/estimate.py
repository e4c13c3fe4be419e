"""What OCC measures before deciding (extensions.md §5.6.3): context size and removable history.

Both are priced on the *observed* projection, the messages OCC's ``context`` handler saw last, after
every other context transformer (ObservationPack placeholders count at their small projected
size). A history entry OCC cannot match to exactly one observed message counts nothing: the
estimate never substitutes raw sizes, so it can only underestimate the saving.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tau.common.jsstr import js_len
from tau.extension import estimate_tokens, find_cut_point

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "CompactionSettings",
    "compaction_settings",
    "context_tokens",
    "removable_tokens",
]

DEFAULT_KEEP_RECENT_TOKENS = 20_000
DEFAULT_RESERVE_TOKENS = 16_384


@dataclass(frozen=True)
class CompactionSettings:
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def compaction_settings(settings: dict[str, Any], model: Any) -> CompactionSettings:
    """``compaction.keepRecentTokens`` / ``reserveTokens``, a ``modelOverrides["<provider>/<id>"]``
    entry for the current model first, each falling back to the defaults on its own."""
    block = settings.get("compaction") if isinstance(settings, dict) else None
    block = block if isinstance(block, dict) else {}
    overrides = block.get("modelOverrides")
    key = f"{getattr(model, 'provider', '')}/{getattr(model, 'id', '')}"
    override = overrides.get(key) if isinstance(overrides, dict) and model is not None else None
    override = override if isinstance(override, dict) else {}

    def pick(name: str, default: int) -> int:
        for source in (override, block):
            if _positive(source.get(name)):
                return source[name]
        return default

    return CompactionSettings(
        pick("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS), pick("reserveTokens", DEFAULT_RESERVE_TOKENS)
    )


def context_tokens(observed: list[dict[str, Any]], system_prompt: Any, reported: Any) -> float:
    """``max(provider-reported tokens, estimate of the observed messages + the system prompt)``."""
    if isinstance(system_prompt, list):
        system_prompt = "\n".join(str(part) for part in system_prompt)
    prompt_tokens = math.ceil(len(str(system_prompt or "").encode("utf-8", "replace")) / 4)
    estimate = sum(estimate_tokens(message) for message in observed) + prompt_tokens
    usable = _positive(reported)
    return max(reported, estimate) if usable else estimate


def _key(message: dict[str, Any]) -> tuple[Any, ...]:
    return (
        message.get("role"),
        message.get("timestamp"),
        message.get("toolCallId"),
        message.get("customType"),
    )


def _observed_index(observed: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    index: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for message in observed:
        if isinstance(message, dict):
            index.setdefault(_key(message), []).append(message)
    return index


def _projected_messages(projection: dict[str, Any]) -> dict[Any, list[dict[str, Any]]]:
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for item in projection.get("entries") or []:
        source = item.get("sourceEntry") or {}
        by_id.setdefault(source.get("id"), []).extend(item.get("messages") or [])
    return by_id


_PENDING_ABORT = {
    "type": "message",
    "id": "occ-pending-abort",
    "message": {"role": "assistant", "content": [], "stopReason": "aborted"},
}


def removable_tokens(
    branch: list[dict[str, Any]],
    projection: dict[str, Any],
    observed: list[dict[str, Any]],
    keep_recent_tokens: int,
) -> int:
    """Tokens the next compaction would remove: history before the host's cut, plus the previous summary.

    The branch gets a trailing aborted assistant entry, the one the boundary stop will leave.
    """
    entries = [*branch, _PENDING_ABORT]
    last = next((i for i in range(len(entries) - 1, -1, -1) if entries[i].get("type") == "compaction"), -1)
    start, summary_tokens = 0, 0
    if last >= 0:
        kept = entries[last].get("firstKeptEntryId")
        start = next((i for i, e in enumerate(entries) if e.get("id") == kept), last + 1)
        summary_tokens = math.ceil(js_len(str(entries[last].get("summary") or "")) / 4)
    cut = find_cut_point(entries, start, len(entries), keep_recent_tokens)
    end = (
        cut.turn_start_index
        if cut.is_split_turn and cut.turn_start_index >= 0
        else cut.first_kept_entry_index
    )
    history = [e for e in entries[start:end] if e.get("type") != "compaction"]
    if not any(e.get("type") in ("message", "custom_message", "branch_summary") for e in history):
        return 0
    index = _observed_index(observed)
    projected = _projected_messages(projection)
    total = 0
    for entry in history:
        for message in projected.get(entry.get("id"), []):
            if not isinstance(message, dict) or message.get("role") == "system":
                continue  # retained system checkpoints are not removed
            matches = index.get(_key(message), [])
            if len(matches) == 1:
                total += estimate_tokens(matches[0])
    return total + summary_tokens
