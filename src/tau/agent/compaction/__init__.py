"""Compaction: summarize old conversation so a long session fits the model's window (pi 1.6).

- :mod:`.settings`: ``compaction.*`` / ``branchSummary.*`` settings and :func:`should_compact`.
- :mod:`.estimate`: token estimates (characters / 4) and context-size estimates.
- :mod:`.cut_point`: where to cut (projected and legacy raw-entry searches).
- :mod:`.prepare`: :func:`prepare_compaction`, the plan of a compaction.
- :mod:`.summary`: the summary requests and the ``compaction`` entry fields.
- :mod:`.request`: the ``complete`` callable over a provider (options, retries).
- :mod:`.branch_summary`: summaries of branches left during tree navigation.
- :mod:`.file_ops`: the read / modified file lists appended to summaries.

The names below are imported on first use: a run that never compacts loads only what it touches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.agent.compaction.branch_summary import (
        BranchPreparation,
        BranchSummaryResult,
        collect_entries_for_branch_summary,
        generate_branch_summary,
        prepare_branch_entries,
    )
    from tau.agent.compaction.cut_point import (
        CutPoint,
        find_cut_point,
        find_projected_cut_point,
        find_turn_start_index,
    )
    from tau.agent.compaction.estimate import (
        ContextUsageEstimate,
        calculate_context_tokens,
        estimate_context_tokens,
        estimate_messages_tokens,
        estimate_projected_context_tokens,
        estimate_tokens,
        get_last_assistant_usage,
    )
    from tau.agent.compaction.file_ops import (
        FileOperations,
        compute_file_lists,
        extract_file_ops_from_message,
        format_file_operations,
    )
    from tau.agent.compaction.prepare import CompactionPreparation, prepare_compaction
    from tau.agent.compaction.prompts import BRANCH_SUMMARY_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT
    from tau.agent.compaction.request import summary_complete, summary_options
    from tau.agent.compaction.settings import BranchSummarySettings, CompactionSettings, should_compact
    from tau.agent.compaction.summary import (
        CompactionResult,
        Complete,
        SummarizationError,
        compact,
        generate_summary,
        serialize_conversation,
    )

_EXPORTS: dict[str, str] = {
    "BRANCH_SUMMARY_PREAMBLE": "tau.agent.compaction.prompts",
    "BranchPreparation": "tau.agent.compaction.branch_summary",
    "BranchSummaryResult": "tau.agent.compaction.branch_summary",
    "BranchSummarySettings": "tau.agent.compaction.settings",
    "CompactionPreparation": "tau.agent.compaction.prepare",
    "CompactionResult": "tau.agent.compaction.summary",
    "CompactionSettings": "tau.agent.compaction.settings",
    "Complete": "tau.agent.compaction.summary",
    "ContextUsageEstimate": "tau.agent.compaction.estimate",
    "CutPoint": "tau.agent.compaction.cut_point",
    "FileOperations": "tau.agent.compaction.file_ops",
    "SUMMARIZATION_SYSTEM_PROMPT": "tau.agent.compaction.prompts",
    "SummarizationError": "tau.agent.compaction.summary",
    "calculate_context_tokens": "tau.agent.compaction.estimate",
    "collect_entries_for_branch_summary": "tau.agent.compaction.branch_summary",
    "compact": "tau.agent.compaction.summary",
    "compute_file_lists": "tau.agent.compaction.file_ops",
    "estimate_context_tokens": "tau.agent.compaction.estimate",
    "estimate_messages_tokens": "tau.agent.compaction.estimate",
    "estimate_projected_context_tokens": "tau.agent.compaction.estimate",
    "estimate_tokens": "tau.agent.compaction.estimate",
    "extract_file_ops_from_message": "tau.agent.compaction.file_ops",
    "find_cut_point": "tau.agent.compaction.cut_point",
    "find_projected_cut_point": "tau.agent.compaction.cut_point",
    "find_turn_start_index": "tau.agent.compaction.cut_point",
    "format_file_operations": "tau.agent.compaction.file_ops",
    "generate_branch_summary": "tau.agent.compaction.branch_summary",
    "generate_summary": "tau.agent.compaction.summary",
    "get_last_assistant_usage": "tau.agent.compaction.estimate",
    "prepare_branch_entries": "tau.agent.compaction.branch_summary",
    "prepare_compaction": "tau.agent.compaction.prepare",
    "serialize_conversation": "tau.agent.compaction.summary",
    "should_compact": "tau.agent.compaction.settings",
    "summary_complete": "tau.agent.compaction.request",
    "summary_options": "tau.agent.compaction.request",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
