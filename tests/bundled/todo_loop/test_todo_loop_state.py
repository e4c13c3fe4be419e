"""The loop's decisions at a settle, its latches and re-arming, and the /todoloop status lines."""

from __future__ import annotations

import pytest

from tau.bundled.todo_loop.branch import Anchor, Scan
from tau.bundled.todo_loop.state import Limits, LoopState
from tau.bundled.todo_loop.tasks import Task, TaskList

HUMAN = Anchor("aaaa0001", "please build the parser")
NEXT_HUMAN = Anchor("aaaa0002", "and now the tests")


def tasks(*statuses: str, source: str = "pi-todo:state") -> TaskList:
    return TaskList(source, "e", tuple(Task(f"t{i}", f"task {i}", s) for i, s in enumerate(statuses)))


def scan(task_list: TaskList | None, anchor: Anchor | None = HUMAN) -> Scan:
    return Scan(task_list, anchor)


def settle_progressing(state: LoopState, limits: Limits, n: int, anchor: Anchor = HUMAN) -> list[bool]:
    """n settles, each with a different snapshot (progress every round)."""
    results = []
    for i in range(n):
        statuses = ["completed"] * (i % 5) + ["pending"] * 3
        results.append(state.settle(scan(tasks(*statuses), anchor), limits))
    return results


def test_open_tasks_continue_and_count_rounds():
    state = LoopState()
    assert state.settle(scan(tasks("completed", "pending")), Limits()) is True
    assert state.rounds == 1
    assert state.state_line(disabled=False) == "state: running"


@pytest.mark.parametrize(
    ("task_list", "reason"),
    [
        (None, "no list"),
        (tasks("completed", "deferred", "deleted"), "all tasks closed"),
        (tasks(), "all tasks closed"),
    ],
)
def test_no_list_or_nothing_open_stops_for_this_settle_only(task_list, reason):
    state = LoopState()
    assert state.settle(scan(task_list), Limits()) is False
    assert state.state_line(disabled=False) == f"state: stopped: {reason}"
    # not latched: the next settle (same human message) with open tasks continues
    assert state.settle(scan(tasks("pending")), Limits()) is True
    assert state.state_line(disabled=False) == "state: running"


def test_the_round_cap_latches_until_the_next_human_message():
    state = LoopState()
    limits = Limits(max_rounds=2)
    assert settle_progressing(state, limits, 4) == [True, True, False, False]
    assert state.state_line(disabled=False) == "state: stopped: round cap (2)"
    assert state.settle(scan(tasks("in_progress", "pending")), limits) is False
    # a new human message re-arms the budget
    assert settle_progressing(state, limits, 3, NEXT_HUMAN) == [True, True, False]


def test_no_cap_by_default():
    state = LoopState()
    assert all(settle_progressing(state, Limits(), 200))
    assert state.rounds == 200


def test_a_zero_cap_never_continues():
    assert LoopState().settle(scan(tasks("pending")), Limits(max_rounds=0)) is False


def test_stalls_stop_at_the_max_stalls_th_round_without_progress():
    state = LoopState()
    same = tasks("pending", "pending")
    results = [state.settle(scan(same), Limits(max_stalls=3)) for _ in range(6)]
    # the first continuation, two rounds without progress continued, the third stops (latched)
    assert results == [True, True, True, False, False, False]
    assert state.rounds == 3
    assert state.stalls == 3
    assert state.state_line(disabled=False) == "state: stopped: stalled (3 rounds without progress)"


def test_progress_resets_the_stall_count():
    state = LoopState()
    limits = Limits(max_stalls=2)
    assert state.settle(scan(tasks("pending", "pending")), limits)
    assert state.settle(scan(tasks("pending", "pending")), limits)  # stall 1
    assert state.stalls == 1
    assert state.settle(scan(tasks("completed", "pending")), limits)  # progress
    assert state.stalls == 0
    assert state.settle(scan(tasks("completed", "pending")), limits)  # stall 1 again
    assert not state.settle(scan(tasks("completed", "pending")), limits)  # stall 2: stop
    assert state.state_line(disabled=False) == "state: stopped: stalled (2 rounds without progress)"


def test_one_allowed_stall_stops_at_the_first_round_without_progress():
    state = LoopState()
    assert state.settle(scan(tasks("pending")), Limits(max_stalls=1))
    assert not state.settle(scan(tasks("pending")), Limits(max_stalls=1))


def test_a_stall_latch_clears_on_a_new_human_message():
    state = LoopState()
    for _ in range(3):
        state.settle(scan(tasks("pending")), Limits(max_stalls=1))
    assert state.latched is not None
    assert state.settle(scan(tasks("pending"), NEXT_HUMAN), Limits(max_stalls=1)) is True


def test_block_latches_until_the_anchor_moves():
    state = LoopState()
    state.settle(scan(tasks("pending")), Limits())
    state.block("need the\nAPI key", HUMAN)
    assert state.state_line(disabled=False) == "state: stopped: blocked (need the API key)"
    assert state.settle(scan(tasks("pending", "completed")), Limits()) is False
    assert state.settle(scan(tasks("pending"), NEXT_HUMAN), Limits()) is True


def test_aborted_is_not_latched():
    state = LoopState()
    state.aborted()
    assert state.state_line(disabled=False) == "state: stopped: aborted"
    assert state.settle(scan(tasks("pending")), Limits()) is True


def test_pause_and_resume():
    state = LoopState()
    state.paused = True
    assert state.settle(scan(tasks("pending")), Limits()) is False
    assert state.rounds == 0
    assert state.state_line(disabled=False) == "state: paused"
    state.paused = False
    assert state.settle(scan(tasks("pending")), Limits()) is True


def test_the_kill_switch_wins_in_the_state_line():
    state = LoopState()
    state.paused = True
    assert state.state_line(disabled=True) == "state: disabled (kill switch)"


def test_status_lines():
    state = LoopState()
    long_anchor = Anchor("abcd1234", "x" * 50 + "\n\n  and   then " + "y" * 30)
    settle_progressing(state, Limits(max_rounds=5), 2, long_anchor)
    lines = state.status_lines(
        scan(tasks("pending", "completed", "in_progress", source="rpiv-todo-state"), long_anchor),
        Limits(max_rounds=5),
        disabled=False,
    )
    assert lines == [
        "state: running",
        'anchor: abcd1234 "' + "x" * 50 + ' and then"',
        "rounds: 2/5",
        "stalls: 0/3",
        "tasks: 2/3 (source: rpiv-todo-state)",
    ]


def test_status_lines_without_anchor_or_list_and_no_cap():
    lines = LoopState().status_lines(Scan(None, None), Limits(), disabled=False)
    assert lines == [
        "state: running",
        "anchor: none",
        "rounds: 0/∞",
        "stalls: 0/3",
        "tasks: 0/0 (source: none)",
    ]


def test_status_shows_the_budget_re_armed_once_a_human_wrote():
    state = LoopState()
    settle_progressing(state, Limits(), 3)
    assert (
        state.status_lines(scan(tasks("pending"), NEXT_HUMAN), Limits(), disabled=False)[2] == "rounds: 0/∞"
    )


@pytest.mark.parametrize(
    ("settings", "expected", "problems"),
    [
        ({}, Limits(None, 3), 0),
        ({"todoLoop": {"maxRounds": 10, "maxStalls": 5}}, Limits(10, 5), 0),
        ({"todoLoop": {"maxRounds": None}}, Limits(None, 3), 0),
        ({"todoLoop": {"maxRounds": "10"}}, Limits(None, 3), 1),
        ({"todoLoop": {"maxRounds": -1, "maxStalls": True}}, Limits(None, 3), 2),
        ({"todoLoop": {"maxStalls": 2.5}}, Limits(None, 3), 1),
        ({"todoLoop": {"maxStalls": 0}}, Limits(None, 3), 1),
        ({"todoLoop": {"maxRounds": 0, "maxStalls": 1}}, Limits(0, 1), 0),
        ({"todoLoop": []}, Limits(None, 3), 1),
    ],
)
def test_limits_from_settings(settings, expected, problems):
    limits, found = Limits.from_settings(settings)
    assert limits == expected
    assert len(found) == problems
    assert all(problem.startswith("settings.json: todoLoop") for problem in found)


def test_a_settings_problem_names_the_value_and_the_fallback():
    _, problems = Limits.from_settings({"todoLoop": {"maxRounds": "10"}})
    assert problems == [
        "settings.json: todoLoop.maxRounds must be a non-negative integer or null, got '10'; using no cap"
    ]
