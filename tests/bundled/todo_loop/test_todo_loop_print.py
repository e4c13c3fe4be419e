"""End to end: one ``tau -p`` run in which the model plans three tasks with ``todo``, stops after the
first, and todo-loop carries it to the end (faux model; the bundled ``todo`` and ``todo-loop``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from todo_loop_planner import SPEC

from tau_process import run_tau

# only the two extensions under test: the bundled todo (the real tool) and todo-loop
OTHERS_OFF = [
    arg
    for name in ("action-fusion", "observation-pack", "evidence-reducer", "online-compact")
    for arg in ("--disable-extension", name)
]


def run_print(
    tmp_path: Path, agent_dir: Path, *mode: str, prompts: tuple[str, ...] = ("Build the three parts",), **env: str
) -> tuple[subprocess.CompletedProcess, list[dict]]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": SPEC}]))
    done = run_tau(
        [
            *(mode or ("-p",)),
            "--model",
            "faux/faux-1",
            "--faux-script",
            str(script),
            *OTHERS_OFF,
            *prompts,
        ],
        cwd=project,
        env=env,
    )
    (session_file,) = (agent_dir / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    return done, entries


def final_answers(entries: list[dict]) -> list[str]:
    return [
        e["message"]["content"][0]["text"]
        for e in entries
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"]["stopReason"] == "stop"
    ]


def test_the_loop_carries_a_three_task_plan_to_the_end_in_one_run(tmp_path, isolated_agent_dir):
    done, entries = run_print(tmp_path, isolated_agent_dir)
    assert (done.returncode, done.stdout) == (0, "Finished part 3.\n")
    # each hidden continuation is announced on stderr, never on stdout (issue 19)
    assert done.stderr.splitlines() == [
        "todo-loop: continuing, 2 tasks open (round 1/25)",
        "todo-loop: continuing, 1 task open (round 2/25)",
    ]
    assert final_answers(entries) == ["Finished part 1.", "Finished part 2.", "Finished part 3."]
    markers = [e for e in entries if e["type"] == "custom_message"]
    assert [(m["customType"], m["display"]) for m in markers] == [("todo-loop:continue", False)] * 2
    # each marker follows a final answer, and the model's next turn follows it
    by_id = {e.get("id"): e for e in entries}
    for marker in markers:
        before = by_id[marker["parentId"]]["message"]
        assert before["role"] == "assistant" and before["stopReason"] == "stop"
    (last_state,) = [e for e in entries if e.get("customType") == "pi-todo:state"][-1:]
    assert [task["status"] for task in last_state["data"]["tasks"]] == ["completed"] * 3


def test_the_loop_waits_while_the_next_prompt_of_a_multi_prompt_run_is_waiting(tmp_path, isolated_agent_dir):
    """Issue 25, item 6: `tau -p P1 P2`: after P1 the human's P2 is already given, so the loop does not
    continue P1's run; after the last prompt it carries the plan to the end as usual."""
    done, entries = run_print(
        tmp_path, isolated_agent_dir, prompts=("Build the three parts", "Now finish the next part")
    )
    assert (done.returncode, done.stdout) == (0, "Finished part 3.\n")
    assert done.stderr.splitlines() == ["todo-loop: continuing, 1 task open (round 1/25)"]
    assert final_answers(entries) == ["Finished part 1.", "Finished part 2.", "Finished part 3."]
    humans = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(humans) == 2
    # the one marker comes after the second prompt's answer, none in the first prompt's run
    marker_at = next(i for i, e in enumerate(entries) if e["type"] == "custom_message")
    second_prompt_at = next(
        i for i, e in enumerate(entries) if e["type"] == "message" and e["message"] is humans[1]
    )
    assert marker_at > second_prompt_at


def test_without_the_loop_the_same_run_stops_after_the_first_task(tmp_path, isolated_agent_dir):
    done, entries = run_print(tmp_path, isolated_agent_dir, TAU_TODO_LOOP_DISABLED="1")
    assert (done.returncode, done.stdout, done.stderr) == (0, "Finished part 1.\n", "")
    assert [e for e in entries if e["type"] == "custom_message"] == []


@pytest.mark.parametrize("mode", [("-p",), ("--mode", "json")])
def test_a_stop_with_tasks_open_says_why_on_stderr(tmp_path, isolated_agent_dir, mode):
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (isolated_agent_dir / "settings.json").write_text(json.dumps({"todoLoop": {"maxRounds": 1}}))
    done, _ = run_print(tmp_path, isolated_agent_dir, *mode)
    assert done.returncode == 0
    if mode == ("-p",):
        assert done.stdout == "Finished part 2.\n"
    else:  # stdout stays the event stream
        assert all("type" in json.loads(line) for line in done.stdout.splitlines())
        assert "todo-loop: stopped" not in done.stdout and "todo-loop: continuing" not in done.stdout
    assert done.stderr.splitlines() == [
        "todo-loop: continuing, 2 tasks open (round 1/1)",
        "todo-loop: stopped with 1 task open: round cap (1)",
    ]


def test_json_mode_keeps_stdout_to_the_events_and_notices_on_stderr(tmp_path, isolated_agent_dir):
    done, _ = run_print(tmp_path, isolated_agent_dir, "--mode", "json")
    assert done.returncode == 0
    events = [json.loads(line) for line in done.stdout.splitlines()]  # every stdout line is an event
    assert events and all(isinstance(event, dict) and "type" in event for event in events)
    assert "todo-loop: continuing" not in done.stdout
    assert done.stderr.splitlines() == [
        "todo-loop: continuing, 2 tasks open (round 1/25)",
        "todo-loop: continuing, 1 task open (round 2/25)",
    ]
