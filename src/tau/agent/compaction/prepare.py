"""What a compaction summarizes and keeps: pi 1.6's ``prepareCompaction`` on the projected branch."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.session.projection import build_session_projection

from .cut_point import find_projected_cut_point
from .estimate import estimate_projected_context_tokens
from .file_ops import FileOperations, extract_file_ops_from_message
from .settings import CompactionSettings

__all__ = ["CompactionPreparation", "prepare_compaction"]

Entry = dict[str, Any]
Message = dict[str, Any]


@dataclass
class CompactionPreparation:
    """Everything the summary needs, computed without calling a model.

    Attributes:
        first_kept_entry_id: id of the first entry kept verbatim (the stored ``firstKeptEntryId``).
        messages_to_summarize: agent messages summarized and dropped (system messages left out).
        turn_prefix_messages: for a split turn, the start of the turn that is cut (summarized apart).
        is_split_turn: the cut lands inside a turn.
        turn_start_entry_id: for a split turn, the id of the entry that starts it; else ``None``.
        tokens_before: the estimated context size before compacting (the stored ``tokensBefore``).
        previous_summary: the summary of the compaction in effect, updated instead of replaced.
        file_ops: files read and changed in the summarized messages and the previous compaction.
        settings: the settings the cut was made with.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[Message]
    turn_prefix_messages: list[Message]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None = None
    turn_start_entry_id: str | None = None
    file_ops: FileOperations = field(default_factory=FileOperations)
    settings: CompactionSettings = field(default_factory=CompactionSettings)


def _summarizable(projected_entries: list[dict[str, Any]]) -> list[Message]:
    # System messages are prompt state, not conversation; the compaction entry carries their replay.
    return [
        message
        for projected in projected_entries
        if projected["sourceEntry"].get("type") != "compaction"
        for message in projected["messages"]
        if message.get("role") != "system"
    ]


def _previous_file_ops(previous: Entry | None) -> FileOperations:
    file_ops = FileOperations()
    # Only a summary pi made itself records file lists (``fromHook``: an extension's summary).
    if previous is not None and not previous.get("fromHook") and previous.get("details"):
        file_ops.add_details(previous["details"])
    return file_ops


def prepare_compaction(branch: list[Entry], settings: CompactionSettings) -> CompactionPreparation | None:
    """Plan a compaction of ``branch`` (root→leaf entries, header excluded).

    ``None`` when the branch already ends with a compaction, or when there is nothing to
    summarize (the whole conversation fits in ``keep_recent_tokens``).
    """
    if branch and branch[-1].get("type") == "compaction":
        return None
    projection = build_session_projection(branch)
    entries = projection["entries"]
    # The newest compaction is projected first; older ones inside its kept range project nothing.
    previous_index = next(
        (i for i, p in enumerate(entries) if p["sourceEntry"].get("type") == "compaction" and p["messages"]),
        -1,
    )
    previous = entries[previous_index]["sourceEntry"] if previous_index >= 0 else None
    start = previous_index + 1
    tokens_before = estimate_projected_context_tokens(projection, branch)["tokens"]
    cut = find_projected_cut_point(entries, start, len(entries), settings.keep_recent_tokens)

    if cut.first_kept_entry_index >= len(entries):
        return None
    first_kept_id = entries[cut.first_kept_entry_index]["sourceEntry"].get("id")
    if not first_kept_id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _summarizable(entries[start:history_end])
    turn_prefix = (
        _summarizable(entries[cut.turn_start_index : cut.first_kept_entry_index]) if cut.is_split_turn else []
    )
    if not to_summarize and not turn_prefix:
        return None

    file_ops = _previous_file_ops(previous)
    for message in to_summarize + turn_prefix:
        extract_file_ops_from_message(message, file_ops)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous.get("summary") if previous is not None else None,
        turn_start_entry_id=entries[cut.turn_start_index]["sourceEntry"].get("id")
        if cut.is_split_turn
        else None,
        file_ops=file_ops,
        settings=settings,
    )
