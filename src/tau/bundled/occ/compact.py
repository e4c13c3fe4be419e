"""Online Context Compact wired to the extension API (extensions.md §5.6.3, §5.6.5).

A plan boundary (a registered step, or a ``todo`` task, becoming completed) is a safe point to
compact. At the boundary's ``turn_end`` the economic model decides; when compaction pays, the run
is stopped (``ctx.abort()``), the compaction runs from the ``agent_settled`` that stop produces, and
a hidden reminder starts a new turn against the compacted context, all within one invocation.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

# Action Fusion's marker before a failed then_run command's output (extensions.md §5.3).
from tau.bundled.fusion.wire import FAILED as THEN_RUN_FAILED
from tau.bundled.occ.decision_record import DECISION_TYPE, decision_data
from tau.bundled.occ.economics import MEMO_TOKENS, Decision, Economics, compaction_floor, decide
from tau.bundled.occ.estimate import (
    ObservedTokens,
    boundary_keep_tokens,
    compaction_settings,
    context_tokens,
    removable_tokens,
)
from tau.bundled.occ.plan import (
    analyze_transition,
    format_plan_snapshot,
    parse_plan_steps,
    parse_progress,
    plan_from_todo,
)
from tau.bundled.occ.progress import boundary_compaction_instructions, progress_record
from tau.bundled.occ.state import (
    STATE_TYPE,
    average_increment,
    note_turn,
    record_boundary,
    record_compaction,
    record_completed_plan_handoff,
    record_correction,
    record_provider_request,
    requests_since_compaction,
    restore_state,
    with_plan,
)
from tau.bundled.occ.tool import MECHANISM, plan_tool
from tau.bundled.occ.wire import CONTINUE_TYPE, SKIPPED_TYPE
from tau.bundled.sol_common import SolSettings, format_savings_count, show_savings
from tau.bundled.sol_common.refetch import CallHistory
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len
from tau.extension import ToolError, ToolResult, tool_calls

__all__ = [
    "CONTINUE_TYPE",
    "REMINDER_FAILED",
    "REMINDER_FINISHED",
    "REMINDER_SKIPPED",
    "SKIPPED_TYPE",
    "OnlineContextCompact",
]

REMINDER_FINISHED = (
    "Online context compaction finished. The parent task is still active. Continue the remaining work "
    "from the current plan. Preserve existing step IDs when updating progress."
)
REMINDER_SKIPPED = (
    "Online context compaction was skipped. The existing context is still available. Continue the "
    "remaining work from the current plan."
)
REMINDER_FAILED = (
    "Online context compaction did not complete. The existing context is still available. Continue the "
    "remaining work from the current plan."
)
# The host's refusals that leave the context as it was: the task resumes without a compaction.
# The token-cap error is pi's for either summary of a compaction: the history's, and a split
# turn's prefix (at the first boundary of a one-prompt plan the only summary call).
RECOVERABLE_REFUSALS = (
    "Nothing to compact (session too small)",
    "Already compacted",
    "Summarization failed: generation hit the token cap and the summary is incomplete",
    "Turn prefix summarization failed: generation hit the token cap and the summary is incomplete",
)
CANCELLED = "Compaction cancelled"


@dataclass(frozen=True)
class _Debt:
    """The cache debt a compaction took on (tokens) and the tokens its savings repay."""

    debt_tokens: float
    repayment_tokens: float


class OnlineContextCompact:
    """One per extension instance. ``plan_source`` is ``"todo"`` or ``"update_plan"``."""

    def __init__(self, tau: Any, settings: SolSettings, plan_source: str = "update_plan") -> None:
        self.tau = tau
        self.settings = settings
        self.plan_source = plan_source
        self.state = restore_state([])
        self._reset_transient()
        self._calls: CallHistory | None = CallHistory()
        self._calls_from: list[dict[str, Any]] = []  # the branch the history is read from when first needed

    def _reset_transient(self) -> None:
        self.observed: list[dict[str, Any]] = []
        self.observed_tokens = ObservedTokens()
        self.observed_changes: Any = None  # the feed of the host's tracked copies (ContextEvent.changes)
        self.pending_request = False
        self.pending_boundary: str | None = None
        self.selected: Decision | None = None
        self.active_debt: _Debt | None = None
        self.in_flight = False
        self.refused = False
        self.files_changed: list[str] = []
        self.verification: list[str] = []
        self.last_decision: Decision | None = None
        self.boundary_keep: int | None = None

    @property
    def calls(self) -> CallHistory:
        """The branch's calls so far, read from the branch restored when first needed (a resumed
        session's first turn that makes a call; a run that makes none never reads them)."""
        if self._calls is None:
            self._calls, self._calls_from = _call_history(self._calls_from), []
        return self._calls

    @property
    def plan_tool_name(self) -> str:
        return "todo" if self.plan_source == "todo" else "update_plan"

    def install(self) -> None:
        if self.plan_source == "update_plan":
            self.tau.register_tool(plan_tool(self.execute_update_plan))
        for event, handler in (
            ("session_start", self.on_session_start),
            ("session_tree", self.on_session_start),
            ("context", self.on_context),
            ("before_provider_request", self.on_before_provider_request),
            ("message_end", self.on_message_end),
            ("tool_result", self.on_tool_result),
            ("input", self.on_input),
            ("turn_end", self.on_turn_end),
            ("agent_settled", self.on_agent_settled),
            ("session_before_compact", self.on_session_before_compact),
            ("session_compact", self.on_session_compact),
            ("session_before_tree", self.on_session_before_tree),
            ("session_shutdown", self.on_session_shutdown),
        ):
            self.tau.on(event, handler)

    # -- state -----------------------------------------------------------------------------------

    def restore(self, ctx: Any) -> None:
        branch = ctx.session_manager.get_branch()
        self.state = restore_state(branch)
        self._reset_transient()
        self._calls, self._calls_from = None, branch

    def save(self, state: dict[str, Any]) -> None:
        if state is self.state:
            return
        self.state = state
        try:
            self.tau.append_entry(STATE_TYPE, state)
        except Exception as exc:  # not persisted; the next change writes a full snapshot again
            sys.stderr.write(f"[online-compact] state not saved: {exc}\n")

    # -- observation -----------------------------------------------------------------------------

    def on_session_start(self, event: Any, ctx: Any) -> None:
        self.restore(ctx)

    def on_session_shutdown(self, event: Any, ctx: Any) -> None:
        self._reset_transient()

    def on_context(self, event: Any, ctx: Any) -> None:
        self.observed = event.messages  # observed, never changed
        self.observed_changes = getattr(event, "changes", None)
        signal = ctx.signal
        if signal is None or not signal.aborted:
            self.pending_request = True

    def on_before_provider_request(self, event: Any, ctx: Any) -> None:
        if not self.pending_request:
            return  # a cache-warming replay, or a build no context event announced
        self.pending_request = False
        self.save(record_provider_request(self.state, self.context_tokens(ctx)))

    def on_message_end(self, event: Any, ctx: Any) -> None:
        if isinstance(event.message, dict) and event.message.get("role") == "assistant":
            self.pending_request = False

    def on_input(self, event: Any, ctx: Any) -> dict[str, Any]:
        if event.streaming_behavior == "steer" or (event.text or "").startswith("CORRECTION:"):
            self.pending_boundary = None
            self.selected = None
            self.active_debt = None
            self.save(record_correction(self.state))
        else:
            self.save(record_completed_plan_handoff(self.state))
        self.refused = False
        return {"action": "continue"}

    def on_tool_result(self, event: Any, ctx: Any) -> None:
        if event.parent_tool_call_id:
            return
        args = event.input if isinstance(event.input, dict) else {}
        then_run = args.get("then_run") if event.tool_name in ("edit", "write") else None
        changed = not event.is_error or (isinstance(then_run, dict) and _command_failed(event.content))
        if changed and event.tool_name in ("edit", "write") and isinstance(args.get("path"), str):
            self.files_changed.append(args["path"])
        command = args.get("command") if event.tool_name == "bash" else None
        if isinstance(then_run, dict):
            command = then_run.get("command")
        if isinstance(command, str) and command:
            self.verification.append(command)
        if event.tool_name == "todo" and self.plan_source == "todo" and not event.is_error:
            self.observe_todo(event)

    # -- plan updates ----------------------------------------------------------------------------

    def observe_todo(self, event: Any) -> None:
        details = event.details if isinstance(event.details, dict) else {}
        plan = plan_from_todo(details.get("tasks"))
        if plan is None:
            return
        transition = analyze_transition(self.state["plan"], plan)
        if not transition.completed:
            if plan != self.state["plan"]:
                self.save(with_plan(self.state, plan))
            return
        step = transition.completed[0]
        task: dict[str, Any] = next((t for t in details["tasks"] if t.get("id") == step["id"]), {})
        description = task.get("description")
        record = progress_record(
            step,
            files_changed=_unique(self.files_changed),
            verification=_unique(self.verification),
            decisions=[description] if isinstance(description, str) and description else [],
            next_work=[s["goal"] for s in plan if s["status"] != "completed"],
        )
        self.boundary(event.tool_call_id, plan, record)

    def boundary(self, tool_call_id: str, plan: list[dict[str, Any]], record: dict[str, Any] | None) -> None:
        self.save(record_boundary(self.state, plan, record))
        self.files_changed, self.verification = [], []
        if self.pending_boundary is None:
            self.pending_boundary = tool_call_id

    async def execute_update_plan(
        self, tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Plan update was aborted")
        steps = parse_plan_steps(params.get("steps") if isinstance(params, dict) else None)
        if steps is None:
            raise ToolError("Plan must contain at least one valid step")
        transition = analyze_transition(self.state["plan"], steps)
        recorded = False
        if transition.completed:
            progress = parse_progress(params.get("progress"))
            record = progress_record(
                transition.completed[0],
                files_changed=progress["files_changed"] if progress else [],
                verification=progress["verification"] if progress else [],
                decisions=progress["decisions"] if progress else [],
                next_work=[step["goal"] for step in steps if step["status"] != "completed"],
            )
            recorded = progress is not None
            self.boundary(tool_call_id, steps, record)
        else:
            self.save(with_plan(self.state, steps))
        text = "\n".join([format_plan_snapshot(steps), *transition.advice])
        details = {
            "boundary": bool(transition.completed),
            "completed_step_ids": [step["id"] for step in transition.completed],
            "progress_recorded": recorded,
            "task_status": "active",
            "plan": steps,
        }
        return ToolResult(content=[{"type": "text", "text": text}], details=details)

    # -- the decision ----------------------------------------------------------------------------

    def context_tokens(self, ctx: Any) -> float:
        usage = ctx.get_context_usage() or {}
        try:
            prompt = ctx.get_system_prompt()
        except Exception:  # no prompt available: the messages alone
            prompt = ""
        return context_tokens(
            self.observed, prompt, usage.get("tokens"), self.observed_tokens, self.observed_changes
        )

    def decide(self, ctx: Any, tool_call_id: str = "") -> Decision:
        """The boundary's decision, recorded in the session as a ``custom`` entry."""
        usage = ctx.get_context_usage() or {}
        window = usage.get("contextWindow") or getattr(ctx.model, "context_window", None) or None
        compaction = compaction_settings(self.tau.get_settings(), ctx.model)
        manager = ctx.session_manager
        keep = boundary_keep_tokens(
            manager.build_session_projection(), tool_call_id, compaction.keep_recent_tokens
        )
        self.boundary_keep = keep
        archive = removable_tokens(manager.get_branch(), self.observed, keep)
        state = self.state
        remaining = sum(1 for step in state["plan"] if step["status"] != "completed")
        decision = decide(
            write_tokens=self.context_tokens(ctx),
            archive_tokens=archive,
            samples=list(state["completedBoundaryRequestCounts"]),
            remaining_boundaries=remaining,
            average_increment=average_increment(state),
            context_window=window,
            cache_write_read_ratio=self.settings.cache_write_read_ratio,
            prior_compaction_count=state["nativeCompactionCount"],
            requests_since_compaction=requests_since_compaction(state),
            debt_tokens=state["cacheDebtTokens"],
            repayment_tokens=state["cacheDebtRepaymentTokens"],
            economics=Economics(window_reserve_tokens=compaction.reserve_tokens),
            floor_tokens=compaction_floor(compaction.keep_recent_tokens, window, MEMO_TOKENS),
        )
        data = decision_data(
            decision,
            tool_call_id=tool_call_id,
            remaining_steps=remaining,
            keep_recent_tokens=keep,
        )
        try:
            self.tau.append_entry(DECISION_TYPE, data)
        except Exception as exc:  # the decision stands; only its record is lost
            sys.stderr.write(f"[online-compact] decision not recorded: {exc}\n")
        return decision

    def on_turn_end(self, event: Any, ctx: Any) -> None:
        results = [r for r in event.tool_results if isinstance(r, dict)]
        self.note_refetches(event.message, results)
        if any(r.get("toolName") != self.plan_tool_name and not r.get("isError") for r in results):
            self.refused = False
        boundary, self.pending_boundary = self.pending_boundary, None
        if boundary is None or self.selected is not None or self.refused:
            return
        message = event.message if isinstance(event.message, dict) else {}
        if message.get("role") != "assistant" or message.get("stopReason") in ("error", "aborted"):
            return
        if ctx.signal is not None and ctx.signal.aborted:
            return
        result = next((r for r in results if r.get("toolCallId") == boundary), None)
        if result is None or result.get("isError"):
            return
        decision = self.decide(ctx, boundary)
        self.last_decision = decision
        if decision.compact:
            self.selected = decision
            ctx.abort()  # synchronously: the compaction runs from the agent_settled this produces

    def note_refetches(self, message: Any, results: list[dict[str, Any]]) -> None:
        """Count a request that only fetched again what the model was given (see :func:`note_turn`)."""
        if not tool_calls(message):
            return  # a turn without calls notes nothing (and leaves the history unread)
        ratio = self.settings.cache_write_read_ratio or 0
        self.save(note_turn(self.state, self.calls, message, results, ratio))

    # -- compaction and continuation -------------------------------------------------------------

    def on_session_before_compact(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        if self.selected is not None and event.reason == "threshold":
            return {"cancel": True}  # else the host's compaction would consume the boundary's selection
        return None

    def on_session_before_tree(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        return {"cancel": True} if self.in_flight else None

    def on_session_compact(self, event: Any, ctx: Any) -> None:
        self.calls.epoch += 1
        debt = self.active_debt if not event.from_extension else None
        self.save(
            record_compaction(
                self.state, debt.debt_tokens if debt else 0, debt.repayment_tokens if debt else 0
            )
        )
        self.refused = False
        self.pending_boundary = None
        self.selected = None
        self.observed = []

    async def on_agent_settled(self, event: Any, ctx: Any) -> None:
        selected, self.selected = self.selected, None
        if selected is None:
            return
        if not ctx.is_idle():
            self.selected = selected
            return
        self.active_debt = _Debt(selected.new_debt_tokens, max(0.0, selected.saving_tokens))
        self.in_flight = True
        try:
            await self._compact_and_continue(ctx, selected)
        finally:
            self.in_flight = False
            self.active_debt = None

    async def _compact_and_continue(self, ctx: Any, selected: Decision) -> None:
        instructions = boundary_compaction_instructions(self.state["pendingProgress"])
        try:
            result = await _compact(ctx, instructions, self.boundary_keep)
        except Exception as exc:
            message = str(exc)
            if message == CANCELLED or type(exc).__name__ in ("AbortError", "CancelledError"):
                return
            if message in RECOVERABLE_REFUSALS:
                self.skipped(ctx, message)
                return
            self.continue_with(REMINDER_FAILED)
            raise
        summary = result.get("summary") if isinstance(result, dict) else None
        removed = selected.archive_tokens - js_len(summary or "") / 4
        if removed > 0:
            show_savings(ctx, MECHANISM, format_savings_count(removed, "context tokens removed"))
        self.continue_with(REMINDER_FINISHED)

    def skipped(self, ctx: Any, reason: str) -> None:
        try:
            self.tau.append_entry(SKIPPED_TYPE, {"reason": reason})
        except Exception as exc:  # the continuation matters more than the record
            sys.stderr.write(f"[online-compact] skip not recorded: {exc}\n")
        if ctx.mode == "tui":
            ctx.ui.notify(f"Online compaction skipped: {reason}", "warning")
        self.refused = True
        self.continue_with(REMINDER_SKIPPED)

    def continue_with(self, reminder: str) -> None:
        """A hidden message that starts the next turn once every ``agent_settled`` handler returned."""
        self.tau.send_message(
            {"customType": CONTINUE_TYPE, "content": reminder, "display": False}, trigger_turn=True
        )


async def _compact(ctx: Any, instructions: str, keep_recent_tokens: int | None) -> Any:
    """``ctx.compact`` awaited through its callbacks, keeping the boundary's tail."""
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def complete(result: Any) -> None:
        if not done.done():
            done.set_result(result)

    def fail(exc: BaseException) -> None:
        if not done.done():
            done.set_exception(exc)

    ctx.compact(instructions, on_complete=complete, on_error=fail, keep_recent_tokens=keep_recent_tokens)
    return await done


def _command_failed(content: Any) -> bool:
    """Whether a fused result is the error of its ``then_run`` command, the mutation itself kept
    (Action Fusion's ``[then_run:failed]`` block; a failed mutation skips the command instead)."""
    blocks = content if isinstance(content, list) else []
    return any(
        THEN_RUN_FAILED in str(block.get("text") or "").split("\n")
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _call_history(branch: list[dict[str, Any]]) -> CallHistory:
    """The calls of ``branch`` in order, each compaction a new epoch (on a start or a branch switch)."""
    history = CallHistory()
    record = history.record
    # entry_message(entry, "assistant") and named_calls(message) inlined: a resume reads every entry.
    for entry in branch:
        kind = entry.get("type")
        if kind == "compaction":
            history.epoch += 1
            continue
        if kind != "message" or not isinstance(entry, dict):
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    record(str(block.get("name")), block.get("arguments"))
    return history


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
