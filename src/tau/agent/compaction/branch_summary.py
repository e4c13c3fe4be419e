"""Branch summaries for tree navigation: pi 1.6 ``branch-summarization.ts``.

When the user moves to another point of the session tree, the branch being left (from the old leaf
back to the common ancestor) can be summarized into a ``branch_summary`` entry placed at the new
position, so its work is not lost to the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from tau.common.dataclass import dataclass
from tau.llm.messages import has_tool_calls, message_text
from tau.llm.types import AssistantMessage, Usage
from tau.session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from tau.session.projection import convert_to_llm, project_entry

from .estimate import estimate_tokens
from .file_ops import (
    FileOperations,
    compute_file_lists,
    extract_file_ops_from_message,
    format_file_operations,
)
from .prompts import BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT
from .summary import (
    Complete,
    needs_pi_request,
    serialize_conversation,
    spent_usage,
    summarization_context,
    summarization_failure,
)

if TYPE_CHECKING:  # pragma: no cover
    from .cached import CachedSummaries

__all__ = [
    "BranchPreparation",
    "BranchSummaryResult",
    "SessionTree",
    "collect_entries_for_branch_summary",
    "generate_branch_summary",
    "prepare_branch_entries",
]

Entry = dict[str, Any]
Message = dict[str, Any]

DEFAULT_CONTEXT_WINDOW = 128_000


class SessionTree(Protocol):
    """The read-only part of a session manager that branch collection needs."""

    def get_branch(self, from_id: str | None = None) -> list[Entry]:
        """Entries from the root to ``from_id``."""
        ...

    def get_entry(self, entry_id: str) -> Entry | None:
        """The entry with ``entry_id``, or ``None``."""
        ...


@dataclass
class BranchPreparation:
    """The messages of a branch that fit the budget, newest kept first.

    Attributes:
        messages: agent messages in chronological order (tool results left out: the calls say enough).
        file_ops: files read and changed on the whole branch, budget or not.
        total_tokens: estimated tokens of ``messages``.
    """

    messages: list[Message]
    file_ops: FileOperations = field(default_factory=FileOperations)
    total_tokens: int = 0


@dataclass
class BranchSummaryResult:
    """The outcome of :func:`generate_branch_summary`; exactly one of ``summary``, ``aborted``, ``error``.

    Attributes:
        summary: the text to store (preamble, the model's summary, file lists).
        usage: the summary request's usage.
        read_files: files only read on the branch (the stored ``details.readFiles``).
        modified_files: files written or edited (``details.modifiedFiles``).
        aborted: the request was aborted.
        error: why the summary failed.
    """

    summary: str | None = None
    usage: Usage | None = None
    read_files: list[str] | None = None
    modified_files: list[str] | None = None
    aborted: bool = False
    error: str | None = None


def collect_entries_for_branch_summary(
    session: SessionTree, old_leaf_id: str | None, target_id: str
) -> tuple[list[Entry], str | None]:
    """The entries from the old leaf back to its common ancestor with ``target_id``, chronological.

    Returns ``(entries, common_ancestor_id)``. Compaction entries on the way are included: their
    summaries become context.
    """
    if not old_leaf_id:
        return [], None
    old_path = {entry.get("id") for entry in session.get_branch(old_leaf_id)}
    common = next(
        (entry.get("id") for entry in reversed(session.get_branch(target_id)) if entry.get("id") in old_path),
        None,
    )
    entries = []
    current: str | None = old_leaf_id
    while current and current != common:
        entry = session.get_entry(current)
        if entry is None:
            break
        entries.append(entry)
        current = entry.get("parentId")
    entries.reverse()
    return entries, common


def _message_of(entry: Entry, edit: Entry | None) -> Message | None:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") == "toolResult":
            return None
        if edit is None:
            return message
        projected = project_entry(entry, edit)
        return projected[0] if projected else None
    if kind == "custom_message":
        if edit is None:
            return create_custom_message(entry)
        projected = project_entry(entry, edit)
        return projected[0] if projected else None
    if kind == "branch_summary":
        return create_branch_summary_message(entry)
    if kind == "compaction":
        return create_compaction_summary_message(entry)
    return None


def _is_summary_entry(entry: Entry) -> bool:
    return entry.get("type") in ("compaction", "branch_summary")


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """Pick the newest messages of ``entries`` that fit ``token_budget`` (0: no limit).

    File operations are gathered from every entry, and from the ``details`` of earlier branch
    summaries pi made, so nested summaries keep the files of the branches they replaced.
    """
    file_ops = FileOperations()
    for entry in entries:
        if entry.get("type") == "branch_summary" and not entry.get("fromHook") and entry.get("details"):
            file_ops.add_details(entry["details"])
    # The latest context edit per target hides or replaces that entry's message.
    edits = {entry.get("targetId"): entry for entry in entries if entry.get("type") == "context_edit"}

    kept: list[Message] = []
    total = 0
    for entry in reversed(entries):
        message = _message_of(entry, edits.get(entry.get("id")))
        if message is None:
            continue
        extract_file_ops_from_message(message, file_ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            # A summary is worth squeezing in while the budget is less than 90% used.
            if _is_summary_entry(entry) and total < token_budget * 0.9:
                kept.append(message)
                total += tokens
            break
        kept.append(message)
        total += tokens
    kept.reverse()
    return BranchPreparation(messages=kept, file_ops=file_ops, total_tokens=total)


def build_branch_summary_prompt(
    messages: Sequence[Message], *, custom_instructions: str | None = None, replace_instructions: bool = False
) -> str:
    """The user text of a branch summary request; ``replace_instructions`` swaps pi's instructions out."""
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    else:
        instructions = BRANCH_SUMMARY_PROMPT
    conversation = serialize_conversation(convert_to_llm(list(messages)))
    return f"<conversation>\n{conversation}\n</conversation>\n\n{instructions}"


async def generate_branch_summary(
    entries: Sequence[Entry],
    complete: Complete,
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    cached: CachedSummaries | None = None,
) -> BranchSummaryResult:
    """Summarize the abandoned branch ``entries`` (chronological) within the model's window.

    The stored text is ``The user explored a different conversation branch before returning
    here.\\nSummary of that exploration:\\n\\n`` + the model's summary + the file lists. Failures are
    returned (``error``, ``aborted``), never raised. With ``cached`` (its ``kept`` quoting the
    branch's first message) the cache-friendly request is sent first; pi's request follows when it
    would not fit, called a tool, or overflowed.
    """
    budget = (context_window or DEFAULT_CONTEXT_WINDOW) - reserve_tokens
    prepared = prepare_branch_entries(entries, budget)
    if not prepared.messages:
        return BranchSummaryResult(summary="No content to summarize")
    prompt = build_branch_summary_prompt(
        prepared.messages, custom_instructions=custom_instructions, replace_instructions=replace_instructions
    )
    response: AssistantMessage | None = None
    spent: Usage | None = None
    if cached is not None:
        from .cached import branch_instruction

        instruction = branch_instruction(
            cached.kept, custom_instructions=custom_instructions, replace_instructions=replace_instructions
        )
        context = cached.context(instruction)
        if context is not None:
            response = await cached.complete(context)
            if needs_pi_request(response):
                spent = response.get("usage")
                response = None
    if response is None:
        response = await complete(summarization_context(prompt))
        if spent is not None:
            response = {**response, "usage": spent_usage(spent, response.get("usage"))}
    if response.get("stopReason") == "aborted":
        return BranchSummaryResult(aborted=True)
    failure = summarization_failure(response, "Branch summarization")
    if failure:
        return BranchSummaryResult(error=failure)
    if has_tool_calls(response):
        return BranchSummaryResult(error="Branch summarization attempted to call a tool")
    read_files, modified_files = compute_file_lists(prepared.file_ops)
    summary = (
        BRANCH_SUMMARY_PREAMBLE + message_text(response) + format_file_operations(read_files, modified_files)
    )
    return BranchSummaryResult(
        summary=summary, usage=response.get("usage"), read_files=read_files, modified_files=modified_files
    )
