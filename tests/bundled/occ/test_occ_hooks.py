"""OCC's handlers on fakes: hooks, request counting, update_plan, the boundary decision, the
compaction and its continuation, the guards, and the estimates on the observed projection."""

from __future__ import annotations

import asyncio
import copy

import pytest
from occ_fakes import FakeCtx, FakeModel, FakeTau, assistant_call, message_entry, tool_result, user

from tau.bundled.occ.compact import (
    REMINDER_FAILED,
    REMINDER_FINISHED,
    REMINDER_SKIPPED,
    OnlineContextCompact,
)
from tau.bundled.occ.estimate import compaction_settings, context_tokens, removable_tokens
from tau.bundled.occ.state import initial_state
from tau.bundled.sol_common import SolSettings
from tau.extension import (
    AbortSignal,
    ContextEvent,
    InputEvent,
    MessageEndEvent,
    SessionBeforeCompactEvent,
    SessionBeforeTreeEvent,
    SessionCompactEvent,
    ToolError,
    ToolResultEvent,
    TurnEndEvent,
)

SETTINGS = SolSettings(online_context_compact=True)
BIG = "x" * 16_000  # 4,000 tokens


def history(output: str = BIG) -> list[dict]:
    """Turn 1 (a large command output, now done), then turn 2 ending in a plan update."""
    messages = [
        user("build it", 1),
        assistant_call("c1", "bash", {"command": "cat big.log"}, 2),
        tool_result("c1", "bash", output, 3),
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "stopReason": "stop",
            "timestamp": 4,
        },
        user("next", 5),
        assistant_call("c3", "bash", {"command": "ls"}, 6),
        tool_result("c3", "bash", "z" * 800, 6),
        assistant_call("c2", "update_plan", {"steps": []}, 7),
        tool_result("c2", "update_plan", "plan", 8),
    ]
    entries, parent = [], None
    for n, message in enumerate(messages):
        entries.append(message_entry(f"e{n}", message, parent))
        parent = f"e{n}"
    return entries


def make(entries=None, *, source="update_plan", settings=None, **ctx_kw):
    tau = FakeTau(settings if settings is not None else {"compaction": {"keepRecentTokens": 100}})
    occ = OnlineContextCompact(tau, SETTINGS, source)
    occ.install()
    ctx = FakeCtx(entries if entries is not None else history(), **ctx_kw)
    occ.restore(ctx)
    return tau, occ, ctx


def observe(occ, ctx):
    projection = ctx.session_manager.build_session_projection()
    occ.on_context(ContextEvent(messages=copy.deepcopy(projection["messages"])), ctx)


def plan_update(occ, call_id, steps, progress=None, ctx=None):
    params = {"steps": steps, **({"progress": progress} if progress else {})}
    return asyncio.run(occ.execute_update_plan(call_id, params, None, None, ctx))


def step(id, status):
    return {"id": id, "goal": f"do {id}", "status": status}


def test_the_hook_set_and_the_plan_tool():
    tau, _, _ = make()
    assert set(tau.handlers) == {
        "session_start",
        "session_tree",
        "context",
        "before_provider_request",
        "message_end",
        "tool_result",
        "input",
        "turn_end",
        "agent_settled",
        "session_before_compact",
        "session_compact",
        "session_before_tree",
        "session_shutdown",
    }
    tool = tau.tools["update_plan"]
    assert tool.execution_mode == "sequential" and tool.prompt_snippet == "Keep the working plan current"
    assert tool.description.startswith("Replace the complete working plan.")
    todo_tau, _, _ = make(source="todo")
    assert "update_plan" not in todo_tau.tools


def test_context_is_observed_never_changed():
    _, occ, ctx = make()
    messages = [user("hi", 1)]
    event = ContextEvent(messages=messages)
    assert occ.on_context(event, ctx) is None and event.messages == [user("hi", 1)]
    assert occ.observed is messages


def test_a_request_counts_once_and_only_after_a_context_event():
    tau, occ, ctx = make()
    occ.on_before_provider_request(None, ctx)  # a cache-warming replay: no context event
    assert occ.state["requestCount"] == 0
    observe(occ, ctx)
    occ.on_before_provider_request(None, ctx)
    occ.on_before_provider_request(None, ctx)
    assert occ.state["requestCount"] == 1 and tau.states()[-1]["requestCount"] == 1
    observe(occ, ctx)
    occ.on_message_end(MessageEndEvent(message={"role": "assistant", "content": []}), ctx)
    occ.on_before_provider_request(None, ctx)  # the answer ended that request's mark
    assert occ.state["requestCount"] == 1
    aborted = AbortSignal()
    aborted.abort()
    ctx.signal = aborted
    observe(occ, ctx)  # a build the host will not send
    occ.on_before_provider_request(None, ctx)
    assert occ.state["requestCount"] == 1
    ctx.signal = None
    observe(occ, ctx)
    occ.on_before_provider_request(None, ctx)
    assert occ.state["requestCount"] == 2 and occ.state["lastContextTokens"] > 4000


def test_update_plan_boundaries_and_text(tmp_path):
    _tau, occ, ctx = make()
    first = plan_update(occ, "p1", [step("a", "in_progress"), step("b", "pending"), step("old", "completed")])
    assert first.details == {
        "boundary": False,
        "completed_step_ids": [],
        "progress_recorded": False,
        "task_status": "active",
        "plan": [step("a", "in_progress"), step("b", "pending"), step("old", "completed")],
    }
    assert first.content[0]["text"].startswith('<sol-pi-plan task_status="active">{"steps":[{"id":"a"')
    assert occ.pending_boundary is None
    progress = {"files_changed": ["a.py"], "verification": ["pytest -q"], "decisions": ["kept it small"]}
    second = plan_update(
        occ, "p2", [step("a", "completed"), step("b", "pending"), step("old", "completed")], progress
    )
    assert second.details["boundary"] is True and second.details["completed_step_ids"] == ["a"]
    assert second.details["progress_recorded"] is True
    assert second.content[0]["text"].endswith("\nMark one pending plan step in_progress before starting it.")
    assert occ.pending_boundary == "p2"
    assert occ.state["pendingProgress"] == [
        {
            "stepId": "a",
            "goal": "do a",
            "filesChanged": ["a.py"],
            "verification": ["pytest -q"],
            "decisions": ["kept it small"],
            "nextWork": ["do b"],
        }
    ]
    with pytest.raises(ToolError, match="Plan must contain at least one valid step"):
        plan_update(occ, "p3", [step("a", "done")])
    aborted = AbortSignal()
    aborted.abort()
    with pytest.raises(ToolError, match="Plan update was aborted"):
        asyncio.run(occ.execute_update_plan("p4", {"steps": [step("a", "pending")]}, aborted, None, ctx))


def test_todo_completions_are_boundaries_with_their_progress():
    _, occ, ctx = make(source="todo")

    def todo(call_id, tasks):
        details = {"revision": 1, "tasks": tasks}
        return ToolResultEvent(
            tool_call_id=call_id, tool_name="todo", input={"action": "update"}, details=details
        )

    task = {"id": "t1", "title": "part 1", "description": "", "status": "pending", "dependencies": []}
    other = {**task, "id": "t2", "title": "part 2"}
    occ.on_tool_result(todo("c1", [task, other]), ctx)
    occ.on_tool_result(ToolResultEvent(tool_name="write", input={"path": "a.py", "content": "x"}), ctx)
    occ.on_tool_result(ToolResultEvent(tool_name="bash", input={"command": "pytest -q"}), ctx)
    nested = ToolResultEvent(tool_name="bash", input={"command": "nested"}, parent_tool_call_id="c9")
    occ.on_tool_result(nested, ctx)
    assert occ.pending_boundary is None
    done = {**task, "status": "completed", "description": "used the fast path"}
    occ.on_tool_result(todo("c2", [done, other]), ctx)
    assert occ.pending_boundary == "c2"
    assert occ.state["pendingProgress"] == [
        {
            "stepId": "t1",
            "goal": "part 1",
            "filesChanged": ["a.py"],
            "verification": ["pytest -q"],
            "decisions": ["used the fast path"],
            "nextWork": ["part 2"],
        }
    ]
    # a task that first appears completed is history
    _, fresh, _ = make(source="todo")
    fresh.on_tool_result(todo("c1", [done]), ctx)
    assert fresh.pending_boundary is None and fresh.state["plan"][0]["status"] == "completed"


def test_a_fused_edit_whose_command_failed_still_changed_its_file():
    _, occ, ctx = make(source="todo")
    fused = {"path": "a.py", "edits": [], "then_run": {"command": "pytest -q"}}
    failed = [
        {"type": "text", "text": "Successfully replaced 1 block(s) in a.py."},
        {"type": "text", "text": "[then_run:failed]\nE   assert 41 == 42"},
    ]
    occ.on_tool_result(ToolResultEvent(tool_name="edit", input=fused, content=failed, is_error=True), ctx)
    # a timed-out command keeps the mutation's text, then the marker paragraph
    timed_out = [
        {"type": "text", "text": "Wrote b.py\n\n[then_run:failed]\n\nCommand timed out after 5 seconds"}
    ]
    other = {"path": "b.py", "content": "x", "then_run": {"command": "make"}}
    occ.on_tool_result(ToolResultEvent(tool_name="write", input=other, content=timed_out, is_error=True), ctx)
    # a mutation that failed skipped its command and changed nothing
    skipped = [
        {"type": "text", "text": "No match in c.py\n\n[then_run:skipped] The file mutation did not complete"}
    ]
    third = {"path": "c.py", "edits": [], "then_run": {"command": "make"}}
    occ.on_tool_result(ToolResultEvent(tool_name="edit", input=third, content=skipped, is_error=True), ctx)
    plain = {"path": "d.py", "edits": []}
    occ.on_tool_result(ToolResultEvent(tool_name="edit", input=plain, content=failed, is_error=True), ctx)
    assert occ.files_changed == ["a.py", "b.py"]
    assert occ.verification == ["pytest -q", "make", "make"]


def test_every_boundary_decision_is_recorded_with_its_figures():
    tau, occ, ctx = make()
    at_boundary(occ, ctx)
    (data,) = [data for kind, data in tau.entries if kind == "sol-pi-online-context-decision-v1"]
    decision = occ.last_decision
    assert data == {
        "toolCallId": "c2",
        "compact": True,
        "reason": "economic",
        "writeTokens": round(decision.write_tokens),
        "archiveTokens": round(decision.archive_tokens),
        "memoTokens": 1000,
        "savingTokens": round(decision.saving_tokens),
        "newDebtTokens": round(decision.new_debt_tokens),
        "horizonRequests": decision.horizon.expected,
        "effectiveHorizonRequests": decision.effective_horizon_requests,
        "breakevenRequests": round(decision.breakeven_requests, 2),
        "combinedBreakevenRequests": round(decision.combined_breakeven_requests, 2),
        "remainingSteps": 2,
        "keepRecentTokens": 7,
        "cacheWriteReadRatio": 12.5,
        "priorCompactions": 0,
        "requestsSinceCompaction": None,
    }
    # everything before the boundary's plan call (6 tokens, its result 1) is removable
    assert data["archiveTokens"] == 2 + 8 + 4000 + 1 + 1 + 5 + 200 and data["horizonRequests"] == 12
    assert data["keepRecentTokens"] == 6 + 1
    # a declined boundary is recorded too, with its reason
    tau, occ, ctx = make(history("x" * 2000))
    at_boundary(occ, ctx)
    (data,) = [data for kind, data in tau.entries if kind == "sol-pi-online-context-decision-v1"]
    assert (data["compact"], data["reason"], data["archiveTokens"]) == (False, "non_positive_saving", 717)


def economic_state(occ):
    occ.state = {
        **initial_state(),
        "plan": [step("a", "completed"), step("b", "pending"), step("c", "pending")],
        "completedBoundaryRequestCounts": [5, 6],
        "requestCount": 11,
        "lastBoundaryRequestCount": 11,
    }


def at_boundary(occ, ctx):
    """An economic state, the context observed, and the turn of the boundary ``c2`` ending."""
    economic_state(occ)
    observe(occ, ctx)
    occ.pending_boundary = "c2"
    occ.on_turn_end(turn_end(), ctx)


def turn_end(call_id="c2", is_error=False, stop_reason="toolUse"):
    return TurnEndEvent(
        message={"role": "assistant", "content": [], "stopReason": stop_reason},
        tool_results=[tool_result(call_id, "update_plan", "plan", 7, is_error)],
    )


def test_an_economical_boundary_stops_the_run():
    _, occ, ctx = make()
    at_boundary(occ, ctx)
    assert ctx.aborts == 1 and occ.selected is not None and occ.selected.reason == "economic"
    assert occ.selected.archive_tokens > 4000 and occ.pending_boundary is None


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (turn_end(is_error=True), "the plan update failed"),
        (turn_end(stop_reason="aborted"), "the turn was aborted"),
        (turn_end(call_id="other"), "the boundary's result is not in this turn"),
    ],
)
def test_no_stop_without_a_clean_boundary(event, why):
    _, occ, ctx = make()
    economic_state(occ)
    observe(occ, ctx)
    occ.pending_boundary = "c2"
    occ.on_turn_end(event, ctx)
    assert ctx.aborts == 0 and occ.selected is None, why


def test_defer_when_the_cut_leaves_too_little():
    _, occ, ctx = make(history("x" * 2000))
    at_boundary(occ, ctx)
    assert ctx.aborts == 0 and occ.last_decision.reason == "non_positive_saving"


def settle(occ, ctx):
    return asyncio.run(occ.on_agent_settled(None, ctx))


def selected(occ, ctx):
    at_boundary(occ, ctx)
    assert occ.selected is not None


def test_compaction_after_settle_then_a_hidden_continuation():
    tau, occ, ctx = make()
    selected(occ, ctx)
    occ.state["pendingProgress"] = [
        {
            "stepId": "a",
            "goal": "do a",
            "filesChanged": [],
            "verification": [],
            "decisions": [],
            "nextWork": [],
        }
    ]
    settle(occ, ctx)
    (instructions,) = ctx.compactions
    assert ctx.kept == [7]  # the boundary's plan call and its result stay; the step before it goes
    assert instructions.startswith(
        "Preserve completed work, verification results, important decisions, and remaining work."
    )
    assert '{"stepId":"a","goal":"do a"}' in instructions
    assert tau.sent == [
        (
            {"customType": "sol-pi-online-context-compact", "content": REMINDER_FINISHED, "display": False},
            True,
        )
    ]
    assert occ.selected is None and occ.in_flight is False


def test_a_busy_session_keeps_the_selection():
    _, occ, ctx = make()
    selected(occ, ctx)
    ctx.idle = False
    settle(occ, ctx)
    assert ctx.compactions == [] and occ.selected is not None


@pytest.mark.parametrize(
    "message",
    [
        "Nothing to compact (session too small)",
        "Already compacted",
        "Summarization failed: generation hit the token cap and the summary is incomplete",
        "Turn prefix summarization failed: generation hit the token cap and the summary is incomplete",
    ],
)
def test_a_refusal_resumes_with_the_existing_context(message):
    tau, occ, ctx = make(mode="tui")
    selected(occ, ctx)
    ctx.compact_outcome = RuntimeError(message)
    settle(occ, ctx)
    assert ("sol-pi-online-context-compact-skipped", {"reason": message}) in tau.entries
    assert ctx.ui.notices == [(f"Online compaction skipped: {message}", "warning")]
    assert tau.sent == [
        ({"customType": "sol-pi-online-context-compact", "content": REMINDER_SKIPPED, "display": False}, True)
    ]
    assert occ.refused is True and occ.state["nativeCompactionCount"] == 0 and tau.states() == []
    # plan-only turns cannot retry until real tool work
    economic_state(occ)
    occ.pending_boundary = "c2"
    occ.on_turn_end(turn_end(), ctx)
    assert occ.selected is None
    work = TurnEndEvent(
        message={"role": "assistant", "content": [], "stopReason": "toolUse"},
        tool_results=[tool_result("b1", "bash", "ok", 9), tool_result("c3", "update_plan", "plan", 9)],
    )
    occ.pending_boundary = "c3"
    occ.on_turn_end(work, ctx)
    assert occ.refused is False and occ.selected is not None


def test_a_cancelled_compaction_schedules_nothing():
    tau, occ, ctx = make()
    selected(occ, ctx)
    ctx.compact_outcome = RuntimeError("Compaction cancelled")
    settle(occ, ctx)
    assert tau.sent == [] and occ.in_flight is False


def test_another_failure_still_continues_then_reports():
    tau, occ, ctx = make()
    selected(occ, ctx)
    ctx.compact_outcome = RuntimeError("provider exploded")
    with pytest.raises(RuntimeError, match="provider exploded"):
        settle(occ, ctx)
    assert tau.sent == [
        ({"customType": "sol-pi-online-context-compact", "content": REMINDER_FAILED, "display": False}, True)
    ]


def test_threshold_compaction_is_cancelled_only_while_a_boundary_is_selected():
    _, occ, ctx = make()
    threshold = SessionBeforeCompactEvent(reason="threshold")
    assert occ.on_session_before_compact(threshold, ctx) is None
    selected(occ, ctx)
    assert occ.on_session_before_compact(threshold, ctx) == {"cancel": True}
    assert occ.on_session_before_compact(SessionBeforeCompactEvent(reason="manual"), ctx) is None
    assert occ.on_session_before_compact(SessionBeforeCompactEvent(reason="overflow"), ctx) is None


def test_tree_navigation_is_refused_during_the_compaction():
    _, occ, ctx = make()
    selected(occ, ctx)
    seen = []

    def compact(custom_instructions=None, *, on_complete=None, on_error=None, keep_recent_tokens=None):
        seen.append(occ.on_session_before_tree(SessionBeforeTreeEvent(), ctx))
        on_complete({"summary": "s"})

    ctx.compact = compact
    settle(occ, ctx)
    assert seen == [{"cancel": True}]
    assert occ.on_session_before_tree(SessionBeforeTreeEvent(), ctx) is None


def test_session_compact_records_the_debt_of_our_compaction_only():
    _tau, occ, ctx = make()
    selected(occ, ctx)
    decision = occ.selected

    def compact(custom_instructions=None, *, on_complete=None, on_error=None, keep_recent_tokens=None):
        occ.on_session_compact(SessionCompactEvent(), ctx)
        on_complete({"summary": "s"})

    ctx.compact = compact
    settle(occ, ctx)
    state = occ.state
    assert state["nativeCompactionCount"] == 1 and state["lastCompactionRequestCount"] == 11
    assert state["cacheDebtTokens"] == decision.new_debt_tokens
    assert state["cacheDebtRepaymentTokens"] == decision.saving_tokens
    occ.on_session_compact(SessionCompactEvent(from_extension=True), ctx)  # a summary an extension supplied
    assert (
        occ.state["cacheDebtTokens"] == decision.new_debt_tokens and occ.state["nativeCompactionCount"] == 2
    )


def test_input_correction_and_completed_plan_handoff():
    _, occ, ctx = make()
    occ.state = {
        **initial_state(),
        "plan": [step("a", "completed")],
        "cacheDebtTokens": 50.0,
        "completedBoundaryRequestCounts": [3],
    }
    assert occ.on_input(InputEvent(text="next task"), ctx) == {"action": "continue"}
    assert (
        occ.state["plan"] == []
        and occ.state["cacheDebtTokens"] == 50
        and occ.state["completedBoundaryRequestCounts"] == []
    )
    occ.state = {**occ.state, "plan": [step("b", "pending")]}
    occ.on_input(InputEvent(text="CORRECTION: not that"), ctx)
    assert occ.state["plan"] == [] and occ.state["cacheDebtTokens"] == 0
    occ.state = {**occ.state, "plan": [step("b", "pending")], "cacheDebtTokens": 5.0}
    occ.on_input(InputEvent(text="faster", streaming_behavior="steer"), ctx)
    assert occ.state["cacheDebtTokens"] == 0


def test_state_is_restored_from_the_branch_at_session_start():
    tau, occ, ctx = make()
    plan_update(occ, "p1", [step("a", "pending")])
    saved = tau.states()[-1]
    ctx.session_manager.entries.append(
        {"type": "custom", "id": "s1", "customType": "sol-pi-online-context-state-v1", "data": saved}
    )
    _, other, _ = make(ctx.session_manager.entries)
    assert other.state["plan"] == [step("a", "pending")]


# -- the estimates -------------------------------------------------------------------------------


def test_compaction_settings_with_model_overrides():
    model = FakeModel("faux", "faux-1")
    settings = {
        "compaction": {
            "keepRecentTokens": 5000,
            "reserveTokens": 9000,
            "modelOverrides": {"faux/faux-1": {"keepRecentTokens": 700}},
        }
    }
    assert compaction_settings(settings, model) == type(compaction_settings({}, None))(700, 9000)
    assert compaction_settings({}, model).keep_recent_tokens == 20_000
    assert compaction_settings({}, model).reserve_tokens == 16_384
    other = FakeModel("faux", "faux-2")
    assert compaction_settings(settings, other).keep_recent_tokens == 5000


def test_context_tokens_take_the_larger_of_usage_and_estimate():
    messages = [user("x" * 400, 1)]
    assert context_tokens(messages, "p" * 40, None) == 100 + 10
    assert context_tokens(messages, ["p" * 20, "q" * 19], 5000) == 5000
    assert context_tokens(messages, "", 0) == 100


def test_removable_history_is_priced_on_the_observed_projection():
    entries = history()
    projection = FakeCtx(entries).session_manager.build_session_projection()
    observed = copy.deepcopy(projection["messages"])
    # turn 1 (2 + 8 + 4,000 + 1) and the prefix of the split turn 2 ("next", the ls call, its output)
    assert removable_tokens(entries, observed, 100) == 2 + 8 + 4000 + 1 + 1 + 5 + 200
    # an ObservationPack placeholder in the observed copy: priced at its small size
    packed = copy.deepcopy(observed)
    packed[2]["content"] = [{"type": "text", "text": "[placeholder]"}]
    assert removable_tokens(entries, packed, 100) == 2 + 8 + 4 + 1 + 1 + 5 + 200
    # unseen and ambiguous messages count nothing
    unseen = [m for m in observed if m.get("toolCallId") != "c1" or m["role"] != "toolResult"]
    assert removable_tokens(entries, unseen, 100) == 2 + 8 + 1 + 1 + 5 + 200
    twice = [*observed, copy.deepcopy(observed[2])]
    assert removable_tokens(entries, twice, 100) == 2 + 8 + 1 + 1 + 5 + 200
    # a large tail to keep leaves nothing removable
    assert removable_tokens(entries, observed, 20_000) == 0


def test_removable_history_across_compactions():
    entries = history()
    compaction = {
        "type": "compaction",
        "id": "k1",
        "parentId": "e8",
        "summary": "s" * 4000,
        "firstKeptEntryId": "e4",
        "tokensBefore": 5000,
        "timestamp": "2026-11-30T00:00:01.000Z",
    }
    later = [
        message_entry("f0", user("more", 10), "k1"),
        message_entry("f1", assistant_call("c5", "bash", {"command": "make"}, 11), "f0"),
        message_entry("f2", tool_result("c5", "bash", "y" * 8000, 12), "f1"),
        message_entry(
            "f3",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "stopReason": "stop",
                "timestamp": 13,
            },
            "f2",
        ),
        message_entry("f4", user("again " * 20, 14), "f3"),
    ]
    branch = [*entries, compaction, *later]
    projection = FakeCtx(branch).session_manager.build_session_projection()
    observed = copy.deepcopy(projection["messages"])
    removable = removable_tokens(branch, observed, 10)
    # the previous summary (1,000 tokens) and the history after the first kept entry, not the big c1 output
    assert 3000 < removable < 4000


def calls_turn(*calls, text="out"):
    """A turn whose assistant message makes ``calls`` (``(name, args)``), each answered with ``text``."""
    content = [{"type": "toolCall", "id": f"r{n}", "name": name, "arguments": args} for n, (name, args) in enumerate(calls)]
    return TurnEndEvent(
        message={"role": "assistant", "content": content, "stopReason": "toolUse"},
        tool_results=[tool_result(f"r{n}", name, text, 9) for n, (name, _) in enumerate(calls)],
    )


def test_refetch_requests_are_not_request_horizon_samples():
    """Issue 25: a step that took 6 requests, 3 of them re-reading a file and re-running a command
    the model had already seen, is a sample of 3: the model's own churn does not lengthen the
    horizon (which would make compacting look more worth it)."""
    _, occ, ctx = make()
    occ.state = {**initial_state(), "plan": [step("a", "in_progress"), step("b", "pending")]}
    work = [
        calls_turn(("read", {"path": "a.py"})),
        calls_turn(("bash", {"command": "grep -n x a.py"})),
        calls_turn(("read", {"path": "a.py"})),  # the same read, nothing changed: a refetch
        calls_turn(("bash", {"command": "grep -n x a.py"})),  # a refetch
        calls_turn(("obs_recall", {"id": "obs_0123456789abcdef01234567"})),  # a refetch
        calls_turn(("edit", {"path": "a.py", "edits": []}), ("read", {"path": "a.py"})),  # new work
    ]
    for event in work:
        occ.save({**occ.state, "requestCount": occ.state["requestCount"] + 1})
        occ.on_turn_end(event, ctx)
    assert occ.state["refetchRequestCount"] == 3
    occ.observe_todo(ToolResultEvent(tool_call_id="t", tool_name="todo", input={}, content=[], details={"tasks": [
        {"id": "a", "title": "a", "status": "completed"}, {"id": "b", "title": "b", "status": "pending"}]}, is_error=False))
    assert occ.state["completedBoundaryRequestCounts"] == [3]
    # after an edit, reading the file again is new work, and so is a test run after a change
    occ.on_turn_end(calls_turn(("read", {"path": "a.py"})), ctx)
    assert occ.state["refetchRequestCount"] == 4  # nothing changed since the last read
    occ.on_turn_end(calls_turn(("write", {"path": "b.py", "content": ""}), ("bash", {"command": "grep -n x a.py"})), ctx)
    assert occ.state["refetchRequestCount"] == 4


def test_a_refetch_of_compacted_content_counts_against_the_next_decision():
    """Issue 25: after a compaction, re-running a command whose output the compaction removed costs
    one more request (its context read, its output written again); that is added to the cache debt,
    so the next boundary that would have compacted is deferred until the debt is earned back."""
    _, occ, ctx = make()
    observe(occ, ctx)
    occ.on_session_compact(SessionCompactEvent(compaction_entry={}, from_extension=False), ctx)
    occ.save({**occ.state, "lastContextTokens": 100_000})
    debt = occ.state["cacheDebtTokens"]
    big = "y" * 8_000  # 2,000 tokens written again
    occ.on_turn_end(calls_turn(("bash", {"command": "cat big.log"}), text=big), ctx)  # run before the compaction
    assert occ.state["refetchRequestCount"] == 1
    assert occ.state["cacheDebtTokens"] == debt + 100_000 + 12.5 * 2_000
    # a command first run after the compaction is no refetch, and a second run of it is not compacted content
    occ.on_turn_end(calls_turn(("bash", {"command": "ls -la"})), ctx)
    occ.on_turn_end(calls_turn(("bash", {"command": "ls -la"})), ctx)
    assert occ.state["refetchRequestCount"] == 2 and occ.state["cacheDebtTokens"] == debt + 125_000
    # the next boundary: economic without the refetch's debt, deferred with it
    state = {**occ.state, "plan": [step("a", "completed"), step("b", "pending"), step("c", "pending")],
             "completedBoundaryRequestCounts": [5, 6], "requestCount": 30, "lastBoundaryRequestCount": 30,
             "lastCompactionRequestCount": 10, "cacheDebtRepaymentTokens": 4_000}
    occ.state = {**state, "cacheDebtTokens": 0}
    observe(occ, ctx)
    assert occ.decide(ctx, "c2").reason == "economic"
    occ.state = state
    assert occ.decide(ctx, "c2").reason == "deferred_carried_debt"


def test_a_resumed_session_s_calls_count_as_made_before_its_first_turn():
    """The calls of the restored branch are read when a turn first makes calls (not at every start),
    and they are the history the branch had: re-running its command after a turn without calls is
    a refetch, and after a compaction a refetch of compacted content."""
    _, occ, ctx = make()
    occ.save({**occ.state, "lastContextTokens": 100_000})
    talk = TurnEndEvent(message={"role": "assistant", "content": [{"type": "text", "text": "hm"}]}, tool_results=[])
    occ.on_turn_end(talk, ctx)
    occ.on_session_compact(SessionCompactEvent(compaction_entry={}, from_extension=False), ctx)
    debt = occ.state["cacheDebtTokens"]
    occ.on_turn_end(calls_turn(("bash", {"command": "cat big.log"}), text="y" * 800), ctx)
    assert occ.state["refetchRequestCount"] == 1
    assert occ.state["cacheDebtTokens"] == debt + 100_000 + 12.5 * 200
    occ.on_turn_end(calls_turn(("bash", {"command": "make"})), ctx)  # never run on this branch
    assert occ.state["refetchRequestCount"] == 1
