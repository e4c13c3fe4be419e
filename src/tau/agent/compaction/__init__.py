"""Compaction: summarize old conversation so a long session fits the model's window (pi 1.6).

- :mod:`.settings`: ``compaction.*`` / ``branchSummary.*`` settings and :func:`should_compact`.
- :mod:`.estimate`: token estimates (characters / 4) and context-size estimates.
- :mod:`.cut_point`: where to cut (projected and legacy raw-entry searches).
- :mod:`.prepare`: :func:`prepare_compaction`, the plan of a compaction.
- :mod:`.summary`: the summary requests and the ``compaction`` entry fields.
- :mod:`.request`: the ``complete`` callable over a provider (options, retries).
- :mod:`.branch_summary`: summaries of branches left during tree navigation.
- :mod:`.file_ops`: the read / modified file lists appended to summaries.
"""

from __future__ import annotations

from .branch_summary import (
    BranchPreparation,
    BranchSummaryResult,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
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
from .prompts import BRANCH_SUMMARY_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT
from .request import summary_complete, summary_options
from .settings import BranchSummarySettings, CompactionSettings, should_compact
from .summary import (
    CompactionResult,
    Complete,
    SummarizationError,
    compact,
    generate_summary,
    serialize_conversation,
)

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "BranchPreparation",
    "BranchSummaryResult",
    "BranchSummarySettings",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "Complete",
    "ContextUsageEstimate",
    "CutPoint",
    "FileOperations",
    "SummarizationError",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compact",
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
    "generate_branch_summary",
    "generate_summary",
    "get_last_assistant_usage",
    "prepare_branch_entries",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
    "summary_complete",
    "summary_options",
]
