"""Compaction: summarize old conversation so a long session fits the model's window (pi 1.6).

- :mod:`.settings`: ``compaction.*`` / ``branchSummary.*`` settings and :func:`should_compact`.
- :mod:`.estimate`: token estimates (characters / 4) and context-size estimates.
- :mod:`.cut_point`: where to cut (projected and legacy raw-entry searches).
- :mod:`.prepare`: :func:`prepare_compaction`, the plan of a compaction.
- :mod:`.file_ops`: the read / modified file lists appended to summaries.
"""

from __future__ import annotations

from .cut_point import CutPoint, find_cut_point, find_projected_cut_point, find_turn_start_index
from .estimate import (
    ContextUsageEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_messages_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
)
from .file_ops import (
    FileOperations,
    compute_file_lists,
    extract_file_ops_from_message,
    format_file_operations,
)
from .prepare import CompactionPreparation, prepare_compaction
from .settings import BranchSummarySettings, CompactionSettings, should_compact

__all__ = [
    "BranchSummarySettings",
    "CompactionPreparation",
    "CompactionSettings",
    "ContextUsageEstimate",
    "CutPoint",
    "FileOperations",
    "calculate_context_tokens",
    "compute_file_lists",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    "extract_file_ops_from_message",
    "find_cut_point",
    "find_projected_cut_point",
    "find_turn_start_index",
    "format_file_operations",
    "get_last_assistant_usage",
    "prepare_compaction",
    "should_compact",
]
