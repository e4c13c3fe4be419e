"""OCC's persistent state: restore, accounting, boundaries, compaction, correction, handoff."""

from __future__ import annotations

from tau.bundled.occ.state import (
    STATE_TYPE,
    average_increment,
    initial_state,
    parse_state,
    record_boundary,
    record_compaction,
    record_completed_plan_handoff,
    record_correction,
    record_provider_request,
    requests_since_compaction,
    restore_state,
)

SPEC_EXAMPLE = {
    "version": 1,
    "epoch": 2,
    "plan": [{"id": "build", "goal": "build it", "status": "completed"}],
    "awaitingPlanRestatement": False,
    "pendingProgress": [
        {
            "stepId": "build",
            "goal": "build it",
            "filesChanged": ["src/a.ts"],
            "verification": ["tests passed"],
            "decisions": ["kept it small"],
            "nextWork": ["verify"],
        }
    ],
    "requestCount": 14,
    "lastCompactionRequestCount": 9,
    "lastBoundaryRequestCount": 12,
    "completedBoundaryRequestCounts": [4, 6, 5],
    "lastContextTokens": 81234,
    "positiveContextDeltaTotal": 12000,
    "positiveContextDeltaCount": 6,
    "nativeCompactionCount": 1,
    "cacheDebtTokens": 150000.0,
    "cacheDebtRepaymentTokens": 59000.0,
}


def custom(data, entry_id="x"):
    return {"type": "custom", "id": entry_id, "customType": STATE_TYPE, "data": data}


def test_the_initial_state():
    state = initial_state()
    assert state["plan"] == [] and state["requestCount"] == 0 and state["lastCompactionRequestCount"] is None
    assert average_increment(state) is None and requests_since_compaction(state) is None


def test_restore_takes_the_latest_valid_snapshot():
    older = {**SPEC_EXAMPLE, "epoch": 1}
    branch = [
        custom(older, "a"),
        custom(SPEC_EXAMPLE, "b"),
        custom({**SPEC_EXAMPLE, "requestCount": -1}, "c"),
        custom({**SPEC_EXAMPLE, "lastBoundaryRequestCount": 15}, "d"),
        custom({"version": 2}, "e"),
        custom("garbage", "f"),
        {"type": "custom", "customType": "other", "data": {**SPEC_EXAMPLE, "epoch": 9}},
        {"type": "message", "message": {"role": "user", "content": "hi"}},
    ]
    # snapshots written before refetches were counted (issue 25) restore with none counted
    assert restore_state(branch) == {**SPEC_EXAMPLE, "refetchRequestCount": 0, "lastBoundaryRefetchCount": 0}
    assert restore_state([]) == initial_state()


def test_legacy_snapshots_and_invalid_numbers():
    legacy = {
        k: v
        for k, v in SPEC_EXAMPLE.items()
        if k not in ("awaitingPlanRestatement", "lastCompactionRequestCount")
    }
    restored = parse_state(legacy)
    assert restored["lastCompactionRequestCount"] is None and restored["awaitingPlanRestatement"] is False
    assert parse_state({**SPEC_EXAMPLE, "awaitingPlanRestatement": True})["awaitingPlanRestatement"] is False
    for bad in (
        {"cacheDebtTokens": float("inf")},
        {"cacheDebtTokens": -1},
        {"requestCount": 2**53},
        {"epoch": 1.5},
        {"epoch": True},
        {"plan": [{"id": "a", "goal": "b", "status": "done"}]},
        {"completedBoundaryRequestCounts": [1, -2]},
    ):
        assert parse_state({**SPEC_EXAMPLE, **bad}) is None, bad


def test_request_accounting_growth_and_debt_repayment():
    state = {**initial_state(), "cacheDebtTokens": 250.0, "cacheDebtRepaymentTokens": 100.0}
    state = record_provider_request(state, 1000)
    assert (state["requestCount"], state["positiveContextDeltaCount"], state["cacheDebtTokens"]) == (
        1,
        0,
        150,
    )
    state = record_provider_request(state, 1500)
    state = record_provider_request(state, 1400)
    state = record_provider_request(state, 2400)
    assert state["positiveContextDeltaTotal"] == 1500 and state["positiveContextDeltaCount"] == 2
    assert average_increment(state) == 750 and state["lastContextTokens"] == 2400
    assert (state["cacheDebtTokens"], state["cacheDebtRepaymentTokens"]) == (0, 0)


def test_boundary_intervals():
    state = initial_state()
    for _ in range(4):
        state = record_provider_request(state, 10)
    plan = [{"id": "a", "goal": "A", "status": "completed"}]
    state = record_boundary(state, plan, {"stepId": "a"})
    for _ in range(6):
        state = record_provider_request(state, 10)
    state = record_boundary(state, plan, None)
    assert state["completedBoundaryRequestCounts"] == [4, 6] and state["lastBoundaryRequestCount"] == 10
    assert state["pendingProgress"] == [{"stepId": "a"}] and state["plan"] == plan


def test_compaction_keeps_plan_samples_and_growth_and_accumulates_debt():
    state = record_compaction(SPEC_EXAMPLE, 1000, 500)
    assert (
        state["epoch"] == 3
        and state["lastCompactionRequestCount"] == 14
        and state["nativeCompactionCount"] == 2
    )
    assert state["pendingProgress"] == [] and state["plan"] == SPEC_EXAMPLE["plan"]
    assert state["completedBoundaryRequestCounts"] == [4, 6, 5] and state["lastContextTokens"] == 81234
    assert (state["cacheDebtTokens"], state["cacheDebtRepaymentTokens"]) == (151_000, 59_500)
    assert requests_since_compaction(state) == 0 and SPEC_EXAMPLE["epoch"] == 2


def test_correction_clears_the_plan_growth_and_debt():
    state = record_correction(SPEC_EXAMPLE)
    assert state["epoch"] == 3 and state["plan"] == [] and state["pendingProgress"] == []
    assert state["completedBoundaryRequestCounts"] == [] and state["lastBoundaryRequestCount"] == 14
    assert state["lastContextTokens"] is None and average_increment(state) is None
    assert (state["cacheDebtTokens"], state["cacheDebtRepaymentTokens"]) == (0, 0)


def test_a_completed_plan_hands_off_and_keeps_unpaid_debt():
    state = record_completed_plan_handoff(SPEC_EXAMPLE)
    assert state["epoch"] == 3 and state["plan"] == [] and state["completedBoundaryRequestCounts"] == []
    assert state["cacheDebtTokens"] == 150_000 and state["lastBoundaryRequestCount"] == 14
    unfinished = {**SPEC_EXAMPLE, "plan": [{"id": "a", "goal": "A", "status": "pending"}]}
    assert record_completed_plan_handoff(unfinished) is unfinished
    assert record_completed_plan_handoff(state) is state  # empty plan: idempotent
