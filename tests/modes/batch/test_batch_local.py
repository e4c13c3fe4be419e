"""``tau batch`` on the local backend (issue 20): a pool of processes, faux tasks, results and reruns."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from batch_support import (
    assert_batch_output,
    assert_recall_works,
    cli,
    eight_tasks,
    faux_task,
    interrupt_when,
    packed_task,
    results,
    write_tasks,
)

from tau_process import popen_tau


def test_eight_tasks_on_two_workers(tmp_path):
    tasks = eight_tasks(tmp_path / "repos")
    out = tmp_path / "out"
    code, _, err = cli(
        ["batch", str(write_tasks(tmp_path / "tasks.jsonl", tasks)), "--out", str(out), "--workers", "2"]
    )
    assert code == 0, err
    assert err.strip().splitlines()[-1] == f"tau batch: 8 ok; results in {out / 'results.jsonl'}"
    assert sorted(results(out)) == sorted(task["id"] for task in tasks)
    assert_batch_output(out, [task["id"] for task in tasks])
    assert sorted(path.name for path in (out / "sessions").glob("*.jsonl")) == sorted(
        f"{task['id']}.jsonl" for task in tasks
    )
    # cwd tasks worked where they were told, setup tasks in a fresh directory tau made
    assert (tmp_path / "repos" / "repo0" / "out.txt").read_text() == "cwd-0\n"
    assert (out / "work" / "setup-0" / "seed.txt").read_text() == "seed 0\n"
    assert (out / "work" / "setup-0" / "out.txt").read_text() == "setup-0\n"
    assert not (out / "work" / "cwd-0").exists()
    two_prompts = [json.loads(line) for line in (out / "sessions" / "setup-3.jsonl").read_text().splitlines()]
    users = [
        e["message"]["content"][0]["text"] for e in two_prompts if e.get("message", {}).get("role") == "user"
    ]
    assert users == ["first", "second"]


def test_archives_land_beside_the_sessions_and_obs_recall_reads_them(tmp_path):
    out = tmp_path / "out"
    code, _, err = cli(
        ["batch", str(write_tasks(tmp_path / "t.jsonl", [packed_task("packed")])), "--out", str(out)]
    )
    assert code == 0, err
    assert_recall_works(out, "packed")


def test_timeout_and_failed_setup_are_reported_and_the_rest_run_then_a_rerun_skips_the_ok_ones(tmp_path):
    tasks = [
        faux_task("fine-1", setup="true"),
        # 8 s: ample for a loaded machine to start the session and reach the bash call, so the aborted
        # session has a file to check; 600 s of sleep is never reached
        {**faux_task("slow"), "faux_script": [{"bash": "sleep 600"}, {"text": "never"}], "timeout_s": 8},
        faux_task("broken", setup="echo no such repository >&2; exit 3"),
        faux_task("fine-2"),
    ]
    out = tmp_path / "out"
    argv = ["batch", str(write_tasks(tmp_path / "tasks.jsonl", tasks)), "--out", str(out), "--workers", "2"]
    code, _, err = cli(argv)
    assert code == 1, err
    found = results(out)
    assert [found[name]["status"] for name in ("fine-1", "slow", "broken", "fine-2")] == [
        "ok",
        "timeout",
        "error",
        "ok",
    ]
    assert found["slow"]["exit_reason"] == "timed out after 8s"
    assert found["slow"]["session"] == "sessions/slow.jsonl"
    assert cli(["session", "check", str(out / "sessions" / "slow.jsonl")])[0] == 0  # aborted and saved
    assert found["broken"]["exit_reason"] == "setup failed (exit 3): no such repository"
    assert (found["broken"]["session"], found["broken"]["requests"]) == (None, 0)
    assert not (out / "sessions" / "broken.jsonl").exists()  # a failed setup runs no agent
    assert "2 ok, 1 error, 1 timeout" in err
    assert "\x1b[2K" not in err  # no progress bar: stderr is not a terminal

    kept = {name: (out / "sessions" / f"{name}.jsonl").read_bytes() for name in ("fine-1", "fine-2")}
    code, _, err = cli([*argv, "--progress"])  # the bar on stderr, forced on although stderr is no terminal
    assert code == 1
    assert "2 skipped (ok before)" in err
    assert "] 4/4 tasks  1 error, 1 timeout, 2 skipped (ok before)\r\x1b[2K" in err
    again = results(out)
    assert list(again) == ["fine-1", "slow", "broken", "fine-2"]  # one line per task, in file order
    assert {name: again[name] for name in ("fine-1", "fine-2")} == {
        name: found[name] for name in ("fine-1", "fine-2")
    }
    assert {name: (out / "sessions" / f"{name}.jsonl").read_bytes() for name in kept} == kept
    assert again["slow"]["status"] == "timeout" and again["broken"]["status"] == "error"
    # the previous attempts are kept beside the new ones
    assert (out / "sessions" / "slow.attempt-1.jsonl").is_file()
    assert (out / "work" / "broken.attempt-1").is_dir()


def test_a_task_whose_prompt_is_refused_is_an_error_without_a_session_file(tmp_path):
    """No key for the task's model: the session never holds a message, so there is no file to name."""
    task = {"id": "nokey", "prompt": "hi", "model": "anthropic/claude-sonnet-4-6"}
    out = tmp_path / "out"
    code, _, err = cli(["batch", str(write_tasks(tmp_path / "t.jsonl", [task])), "--out", str(out)])
    assert code == 1, err
    found = results(out)["nokey"]
    assert (found["status"], found["session"], found["requests"]) == ("error", None, 0)
    assert found["exit_reason"].startswith('No API key found for "anthropic"')
    assert not (out / "sessions" / "nokey.jsonl").exists()


def test_bad_lines_are_reported_with_their_numbers_before_anything_runs(tmp_path):
    good = faux_task("good")
    lines = [
        json.dumps(good),
        "",
        "{not json",
        json.dumps({**faux_task("typo"), "promt": "x"}),
        json.dumps(faux_task("good")),
        json.dumps({**faux_task("both"), "cwd": ".", "setup": "true"}),
        json.dumps({**faux_task("slow"), "timeout_s": 0}),
        json.dumps({**faux_task("cfg"), "settings": {"compaction": {"enabled": "yes"}}}),
        json.dumps({"id": "../escape", "prompt": []}),
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    code, _, err = cli(["batch", str(path), "--out", str(out)])
    assert code == 2
    problems = err.strip().splitlines()
    assert problems[-1] == "tau batch: nothing was run"
    numbered = [line.removeprefix(f"tau batch: {path}:").split(":", 1)[0] for line in problems[:-1]]
    assert numbered == ["3", "4", "5", "6", "7", "8", "9", "9"]
    assert "unknown key 'promt'" in problems[1]
    assert "also the id of line 1" in problems[2]
    assert "not both" in problems[3]
    assert "timeout_s must be a positive number" in problems[4]
    assert "compaction.enabled must be" in problems[5]
    assert not out.exists()


def test_ctrl_c_cancels_running_sessions_and_saves_them(tmp_path, isolated_agent_dir):
    tasks = [
        {**faux_task(f"long-{n}"), "faux_script": [{"bash": "sleep 600"}, {"text": "never"}]}
        for n in range(2)
    ] + [faux_task(f"later-{n}") for n in range(3)]
    out = tmp_path / "out"
    command = ["batch", str(write_tasks(tmp_path / "t.jsonl", tasks)), "--out", str(out)]
    process = popen_tau(
        [*command, "--workers", "2"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # as a script's background job starts it: SIGINT inherited ignored, tau batch still cancels
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    err = interrupt_when(
        process, lambda: all(_has_bash_call(out / "sessions" / f"long-{n}.jsonl") for n in range(2)), 180
    )
    assert process.returncode == 130, err
    found = results(out)
    assert [found[f"long-{n}"]["status"] for n in range(2)] == ["cancelled", "cancelled"]
    assert all(found[f"later-{n}"]["status"] == "cancelled" for n in range(3))
    for n in range(2):
        assert cli(["session", "check", str(out / "sessions" / f"long-{n}.jsonl")])[0] == 0
    assert "cancelling" in err


def _has_bash_call(path: Path) -> bool:
    try:
        return '"toolCall"' in path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False


def test_ctrl_c_while_tasks_are_still_submitted_cancels_too(tmp_path, isolated_agent_dir):
    """A large batch takes a while to submit: a Ctrl+C then must not wait for the running tasks."""
    from tau.modes.batch.local import run_local
    from tau.modes.batch.tasks import load_tasks

    tasks = [
        {**faux_task(f"long-{n}"), "faux_script": [{"bash": "sleep 600"}, {"text": "never"}]}
        for n in range(2)
    ] + [faux_task(f"later-{n}") for n in range(3)]
    out = tmp_path / "out"

    class InterruptedSubmission(list):
        def __iter__(self):
            for n, task in enumerate(list.__iter__(self)):
                if n == 2:  # both long tasks run their command: Ctrl+C before the third is submitted
                    deadline = time.monotonic() + 180
                    while not all(_has_bash_call(out / "sessions" / f"long-{k}.jsonl") for k in range(2)):
                        assert time.monotonic() < deadline, "the long tasks did not start"
                        time.sleep(0.2)
                    raise KeyboardInterrupt
                yield task

    reported: dict[str, dict] = {}
    submitted = InterruptedSubmission(load_tasks(str(write_tasks(tmp_path / "t.jsonl", tasks))))
    with pytest.raises(KeyboardInterrupt):
        run_local(submitted, out, 2, lambda task, payload: reported.__setitem__(task.id, payload["result"]))
    assert {name: result["status"] for name, result in reported.items()} == {
        name: "cancelled" for name in ("long-0", "long-1", "later-0", "later-1", "later-2")
    }
    assert reported["later-0"]["exit_reason"] == "cancelled before it started"
    for n in range(2):
        assert cli(["session", "check", str(out / "sessions" / f"long-{n}.jsonl")])[0] == 0
