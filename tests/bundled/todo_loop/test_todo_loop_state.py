"""The loop's decisions at a settle, its latches and re-arming, and the /todoloop status lines."""

from __future__ import annotations

import pytest

from tau.bundled.todo_loop.branch import Anchor
from tau.bundled.todo_loop.state import Limits, LoopState, Observation
from tau.bundled.todo_loop.tasks import Task, TaskList

HUMAN = Anchor("aaaa0001", "please build the parser")
NEXT_HUMAN = Anchor("aaaa0002", "and now the tests")


def tasks(*statuses: str, source: str = "pi-todo:state", titles: tuple[str, ...] = ()) -> TaskList:
    names = titles or tuple(f"task {i}" for i in range(len(statuses)))
    return TaskList(source, "e", tuple(Task(f"t{i}", names[i], s) for i, s in enumerate(statuses)))


def seen(task_list: TaskList | None, anchor: Anchor | None = HUMAN, **fields) -> Observation:
    return Observation(task_list, anchor, **fields)


def settle_working(state: LoopState, limits: Limits, n: int, anchor: Anchor = HUMAN) -> list[bool]:
    """n settles, each after a successful tool call other than todo (progress every round)."""
    results = []
    for _ in range(n):
        state.saw_tool("bash", False)
        results.append(state.settle(seen(tasks("pending", "pending"), anchor), limits))
    return results


def test_open_tasks_continue_and_count_rounds():
    state = LoopState()
    assert state.settle(seen(tasks("completed", "pending")), Limits()) is True
    assert state.rounds == 1
    assert state.state_line(disabled=False) == "state: running"


@pytest.mark.parametrize(
    ("observation", "reason"),
    [
        (seen(None), "no list"),
        (seen(tasks("completed", "deferred", "deleted")), "all tasks closed"),
        (seen(tasks()), "all tasks closed"),
        (seen(tasks("pending"), todo_active=False), "todo is not an active tool"),
        (
            seen(None, unavailable="the branch is\ndisconnected"),
            "todo unavailable (the branch is disconnected)",
        ),
    ],
)
def test_what_cannot_continue_stops_for_this_settle_only(observation, reason):
    state = LoopState()
    assert state.settle(observation, Limits()) is False
    assert state.stop_reason == reason
    assert state.state_line(observation, disabled=False) == f"state: stopped: {reason}"
    # not latched: the next settle (same human message) with open tasks continues
    assert state.settle(seen(tasks("pending")), Limits()) is True
    assert state.state_line(seen(tasks("pending")), disabled=False) == "state: running"


def test_the_state_line_never_contradicts_the_list_beside_it():
    """Issue 19, item 9: not ``stopped: all tasks closed`` next to ``tasks: 1/3``."""
    state = LoopState()
    state.settle(seen(tasks("completed", "completed", "completed")), Limits())
    reopened = seen(tasks("completed", "pending", "completed"))
    lines = state.status_lines(reopened, Limits(), disabled=False)
    assert lines[0] == "state: running" and lines[-1] == "tasks: 1/3 open (source: pi-todo:state)"
    assert state.status_lines(seen(tasks("completed")), Limits(), disabled=False)[0] == (
        "state: stopped: all tasks closed"
    )


def test_the_round_cap_latches_until_the_next_human_message():
    state = LoopState()
    limits = Limits(max_rounds=2)
    assert settle_working(state, limits, 4) == [True, True, False, False]
    assert state.state_line(disabled=False) == "state: stopped: round cap (2)"
    assert state.settle(seen(tasks("in_progress", "pending")), limits) is False
    # a new human message re-arms the budget
    assert settle_working(state, limits, 3, NEXT_HUMAN) == [True, True, False]


def test_25_rounds_by_default_and_zero_is_no_cap():
    state = LoopState()
    assert settle_working(state, Limits(), 27) == [True] * 25 + [False] * 2
    assert state.stop_reason == "round cap (25)"
    unbounded = LoopState()
    limits, _ = Limits.from_settings({"todoLoop": {"maxRounds": 0}})
    assert all(settle_working(unbounded, limits, 200)) and unbounded.rounds == 200


def test_a_model_that_does_nothing_is_stopped_after_max_stalls_continuations():
    state = LoopState()
    same = tasks("pending", "pending")
    results = [state.settle(seen(same), Limits(max_stalls=3)) for _ in range(6)]
    # three continuations, each followed by no progress; the third stall stops (latched)
    assert results == [True, True, True, False, False, False]
    assert (state.rounds, state.stalls) == (3, 3)
    assert state.state_line(disabled=False) == "state: stopped: stalled (3 rounds without progress)"


@pytest.mark.parametrize(
    "churn",
    [
        [tasks("pending", "pending"), tasks("in_progress", "pending")] * 3,  # toggling a status
        [tasks("pending", titles=(f"take {n}",)) for n in range(6)],  # renaming a task
        [tasks(*["pending"] * n) for n in range(1, 7)],  # adding tasks
    ],
)
def test_churning_the_list_without_closing_a_task_is_no_progress(churn):
    """Issue 18, item 2: a stall compares progress, not ids, titles and statuses."""
    state = LoopState()
    results = [state.settle(seen(task_list), Limits()) for task_list in churn]
    assert results[:4] == [True, True, True, False]


def test_closing_a_task_seen_open_is_progress_but_not_a_new_one():
    state = LoopState()
    limits = Limits(max_stalls=1)
    assert state.settle(seen(tasks("pending", "pending")), limits)
    assert state.settle(seen(tasks("completed", "pending")), limits)  # t0 was open: progress
    extra = TaskList(
        "pi-todo:state", "e", (*tasks("completed", "pending").tasks, Task("new", "new", "completed"))
    )
    assert not state.settle(seen(extra), limits)  # only a task added and closed since: a stall


def test_work_by_todo_itself_or_a_failed_tool_is_no_progress():
    state = LoopState()
    limits = Limits(max_stalls=1)
    assert state.settle(seen(tasks("pending")), limits)
    state.saw_tool("todo", False)
    state.saw_tool("bash", True)
    assert not state.settle(seen(tasks("pending")), limits)


def test_progress_resets_the_stall_count():
    state = LoopState()
    limits = Limits(max_stalls=2)
    assert state.settle(seen(tasks("pending", "pending")), limits)
    assert state.settle(seen(tasks("pending", "pending")), limits)  # stall 1
    assert state.stalls == 1
    state.saw_tool("edit", False)
    assert state.settle(seen(tasks("pending", "pending")), limits)  # progress
    assert state.stalls == 0
    assert state.settle(seen(tasks("pending", "pending")), limits)  # stall 1 again
    assert not state.settle(seen(tasks("pending", "pending")), limits)  # stall 2: stop
    assert state.state_line(disabled=False) == "state: stopped: stalled (2 rounds without progress)"


def test_a_stall_latch_clears_on_a_new_human_message():
    state = LoopState()
    for _ in range(3):
        state.settle(seen(tasks("pending")), Limits(max_stalls=1))
    assert state.latched is not None
    assert state.settle(seen(tasks("pending"), NEXT_HUMAN), Limits(max_stalls=1)) is True


def test_a_human_message_during_the_run_ends_it():
    """Issue 18, item 5: after a steer the model's final answer is not continued."""
    state = LoopState()
    state.start_run(prompted=True)
    state.saw_human()  # the prompt itself
    assert state.settle(seen(tasks("pending")), Limits()) is True
    state.saw_human()  # a steer: "STOP working on this"
    assert state.settle(seen(tasks("pending"), NEXT_HUMAN), Limits()) is False
    assert state.stop_reason == "a human message arrived during the run"
    state.end_run()
    state.start_run(prompted=True)
    state.saw_human()
    assert state.settle(seen(tasks("pending"), Anchor("aaaa0003", "go on")), Limits()) is True


def test_a_run_started_by_a_custom_message_has_no_prompt_to_skip():
    state = LoopState()
    state.start_run(prompted=False)
    state.saw_human()
    assert state.settle(seen(tasks("pending")), Limits()) is False


def test_block_latches_until_the_anchor_moves():
    state = LoopState()
    state.settle(seen(tasks("pending")), Limits())
    state.block("need the\nAPI key", HUMAN)
    assert state.state_line(disabled=False) == "state: stopped: blocked (need the API key)"
    assert state.settle(seen(tasks("pending", "completed")), Limits()) is False
    assert state.settle(seen(tasks("pending"), NEXT_HUMAN), Limits()) is True


def test_aborted_is_not_latched():
    state = LoopState()
    state.aborted()
    assert state.state_line(seen(tasks("pending")), disabled=False) == "state: stopped: aborted"
    assert state.settle(seen(tasks("pending")), Limits()) is True


def test_pause_and_resume():
    state = LoopState()
    state.paused = True
    assert state.settle(seen(tasks("pending")), Limits()) is False
    assert state.rounds == 0 and state.stop_reason == "paused"
    assert state.state_line(disabled=False) == "state: paused"
    state.paused = False
    assert state.state_line(seen(tasks("pending")), disabled=False) == "state: running"
    assert state.settle(seen(tasks("pending")), Limits()) is True


def test_the_kill_switch_wins_in_the_state_line():
    state = LoopState()
    state.paused = True
    assert state.state_line(disabled=True) == "state: disabled (kill switch)"


def test_status_lines():
    state = LoopState()
    long_anchor = Anchor("abcd1234", "x" * 50 + "\n\n  and   then " + "y" * 30)
    settle_working(state, Limits(max_rounds=5), 2, long_anchor)
    lines = state.status_lines(
        seen(tasks("pending", "completed", "in_progress", source="rpiv-todo-state"), long_anchor),
        Limits(max_rounds=5),
        disabled=False,
    )
    assert lines == [
        "state: running",
        'anchor: abcd1234 "' + "x" * 50 + ' and then"',
        "rounds: 2/5",
        "stalls: 0/3",
        "tasks: 2/3 open (source: rpiv-todo-state)",
    ]


def test_status_lines_without_anchor_or_list_and_without_a_cap():
    lines = LoopState().status_lines(Observation(None, None), Limits(max_rounds=None), disabled=False)
    assert lines == [
        "state: stopped: no list",
        "anchor: none",
        "rounds: 0/∞",
        "stalls: 0/3",
        "tasks: 0/0 (source: none)",
    ]
    unavailable = LoopState().status_lines(seen(None, unavailable="quarantined"), Limits(), disabled=False)
    assert unavailable[0] == "state: stopped: todo unavailable (quarantined)"
    assert unavailable[-1] == "tasks: unavailable (source: pi-todo:state)"


def test_status_shows_the_budget_re_armed_once_a_human_wrote():
    state = LoopState()
    settle_working(state, Limits(), 3)
    assert (
        state.status_lines(seen(tasks("pending"), NEXT_HUMAN), Limits(), disabled=False)[2] == "rounds: 0/25"
    )


@pytest.mark.parametrize(
    ("settings", "expected", "problems"),
    [
        ({}, Limits(25, 3), 0),
        ({"todoLoop": {"maxRounds": 10, "maxStalls": 5}}, Limits(10, 5), 0),
        ({"todoLoop": {"maxRounds": None, "maxStalls": None}}, Limits(25, 3), 0),
        ({"todoLoop": {"maxRounds": 0}}, Limits(None, 3), 0),
        ({"todoLoop": {"maxRounds": "10"}}, Limits(25, 3), 1),
        ({"todoLoop": {"maxRounds": -1, "maxStalls": True}}, Limits(25, 3), 2),
        ({"todoLoop": {"maxStalls": 2.5}}, Limits(25, 3), 1),
        ({"todoLoop": {"maxStalls": 0}}, Limits(25, 3), 1),
        ({"todoLoop": {"maxRounds": 1, "maxStalls": 1}}, Limits(1, 1), 0),
        ({"todoLoop": []}, Limits(25, 3), 1),
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
        'settings.json: todoLoop.maxRounds must be a non-negative integer (0: no cap), got "10"; using the default 25'
    ]
