"""Where a compaction cuts: pi 1.6's cut-point search, on projected entries and on raw entries.

A cut keeps the newest ``keepRecentTokens`` (estimated) of conversation and summarizes what lies
before it. It never lands on a tool result (a result must follow its call). When it lands inside a
turn (on an assistant message), the turn's beginning is summarized separately as a "turn prefix".

:func:`find_projected_cut_point` is what :func:`~tau.agent.compaction.prepare.prepare_compaction`
uses (pi 1.6 cuts on the projection, after context edits). :func:`find_cut_point` is pi's older,
exported helper on raw branch entries, kept for extensions; the two differ right after a compaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tau.common.dataclass import dataclass
from tau.session.projection import entry_to_messages

from .estimate import estimate_tokens

__all__ = ["CutPoint", "find_cut_point", "find_projected_cut_point", "find_turn_start_index"]

Entry = dict[str, Any]
ProjectedEntry = dict[str, Any]

_CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass(frozen=True)
class CutPoint:
    """A cut: keep entries from ``first_kept_entry_index`` on.

    Attributes:
        first_kept_entry_index: index of the first entry kept verbatim.
        turn_start_index: for a split turn, the index of the entry that starts the turn; else -1.
        is_split_turn: the cut lands inside a turn, after its start.
    """

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def _has_role(messages: Sequence[dict[str, Any]], roles: frozenset[str]) -> bool:
    return any(message.get("role") in roles for message in messages)


def _messages_tokens(messages: Sequence[dict[str, Any]]) -> int:
    return sum(estimate_tokens(message) for message in messages)


def _first_at_or_after(cut_points: list[int], index: int) -> int:
    # If the trailing tool results alone exceed the budget, keep their assistant call (the last
    # cut point) rather than falling back to the first message.
    return next((candidate for candidate in cut_points if candidate >= index), cut_points[-1])


def _search(
    n_messages_tokens: Callable[[int], int], cut_points: list[int], start: int, end: int, keep: int
) -> tuple[int, bool]:
    """Walk back from the newest entry summing estimates; cut where the sum reaches ``keep``."""
    accumulated = 0
    for index in range(end - 1, start - 1, -1):
        tokens = n_messages_tokens(index)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep:
            return _first_at_or_after(cut_points, index), True
    return cut_points[0], False


# --- on projected entries ({"sourceEntry", "messages"}) -----------------------------------------


def _is_compaction(projected: ProjectedEntry) -> bool:
    return projected["sourceEntry"].get("type") == "compaction"


def _starts_projected_turn(projected: ProjectedEntry) -> bool:
    return not _is_compaction(projected) and _has_role(projected["messages"], _TURN_START_ROLES)


def _find_projected_turn_start(entries: Sequence[ProjectedEntry], index: int, start: int) -> int:
    for candidate in range(index, start - 1, -1):
        if _starts_projected_turn(entries[candidate]):
            return candidate
    return -1


def _is_intrinsically_visible(projected: ProjectedEntry) -> bool:
    source = projected["sourceEntry"]
    return source.get("type") != "context_edit" and len(entry_to_messages(source)) > 0


def _is_omitted(projected: ProjectedEntry) -> bool:
    """An entry that would reach the model but a context edit removed."""
    return _is_intrinsically_visible(projected) and not projected["messages"]


def _is_recovery_omission_suffix(suffix: Sequence[ProjectedEntry]) -> bool:
    """The suffix after the cut holds only an omitted assistant attempt and its omission edits.

    That is an overflow-recovery attempt: context-invisible after the last visible input. Any other
    metadata must not move the cut past unsent input.
    """
    omitted_ids = {p["sourceEntry"].get("id") for p in suffix if _is_omitted(p)}
    for projected in suffix:
        source = projected["sourceEntry"]
        # JavaScript's ``replacement !== null``: a missing replacement counts as one.
        if (
            source.get("type") == "context_edit"
            and ("replacement" not in source or source["replacement"] is not None)
            and source.get("targetId") not in omitted_ids
        ):
            return False
    has_omitted_assistant = any(
        p["sourceEntry"].get("type") == "message"
        and (p["sourceEntry"].get("message") or {}).get("role") == "assistant"
        and _is_omitted(p)
        for p in suffix
    )
    only_invisible = all(
        not _is_compaction(p) and (not _is_intrinsically_visible(p) or _is_omitted(p)) for p in suffix
    )
    return has_omitted_assistant and only_invisible


def find_projected_cut_point(
    entries: Sequence[ProjectedEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """pi 1.6's cut on projected entries ``entries[start:end]`` keeping ``keep_recent_tokens``.

    Valid cut points are entries whose (edited) messages include a user-like or assistant message;
    compaction entries never are. Past the cut, adjacent context-invisible entries are pulled in.
    """
    cut_points = [
        index
        for index in range(start, end)
        if not _is_compaction(entries[index]) and _has_role(entries[index]["messages"], _CUT_POINT_ROLES)
    ]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut, exceeded = _search(
        lambda index: _messages_tokens(entries[index]["messages"]), cut_points, start, end, keep_recent_tokens
    )
    if exceeded and _is_recovery_omission_suffix(entries[cut + 1 : end]):
        cut += 1
    while cut > start:
        previous = entries[cut - 1]
        if _is_compaction(previous) or previous["messages"]:
            break
        cut -= 1
    starts_turn = _starts_projected_turn(entries[cut])
    turn_start = -1 if starts_turn else _find_projected_turn_start(entries, cut, start)
    return CutPoint(cut, turn_start, not starts_turn and turn_start != -1)


# --- on raw branch entries (pi's exported findCutPoint / findTurnStartIndex) ---------------------


def _starts_turn(entry: Entry) -> bool:
    return entry.get("type") != "compaction" and _has_role(entry_to_messages(entry), _TURN_START_ROLES)


def find_turn_start_index(entries: Sequence[Entry], entry_index: int, start_index: int) -> int:
    """The index of the user-like entry that starts the turn holding ``entries[entry_index]``, or -1."""
    for index in range(entry_index, start_index - 1, -1):
        if _starts_turn(entries[index]):
            return index
    return -1


def find_cut_point(entries: Sequence[Entry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """pi's legacy ``findCutPoint`` on raw branch entries ``entries[start:end]`` (no context edits)."""
    messages = [entry_to_messages(entry) for entry in entries[start:end]]

    def at(index: int) -> list[dict[str, Any]]:
        return messages[index - start]

    cut_points = [
        index
        for index in range(start, end)
        if entries[index].get("type") != "compaction" and _has_role(at(index), _CUT_POINT_ROLES)
    ]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut, _ = _search(lambda index: _messages_tokens(at(index)), cut_points, start, end, keep_recent_tokens)
    while cut > start:
        previous = entries[cut - 1]
        if previous.get("type") == "compaction" or entry_to_messages(previous):
            break
        cut -= 1
    starts_turn = _starts_turn(entries[cut])
    turn_start = -1 if starts_turn else find_turn_start_index(entries, cut, start)
    return CutPoint(cut, turn_start, not starts_turn and turn_start != -1)
