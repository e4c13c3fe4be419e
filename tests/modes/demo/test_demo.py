"""``tau demo``: the scripted session runs offline in a throwaway repository, shows each mechanism at
work, leaves a session file that passes ``tau session check``, and ends with its savings report.
(How long it takes is not asserted here: a loaded machine decides that, not the demo.)"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tau.modes.demo import repo as demo_repo
from tau.modes.demo import tau_command
from tau_process import run_tau, tau_env


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` (``args[0]`` is the module: ``tau``, ``tau.modes.demo``, ...)."""
    module, *rest = args
    return run_tau(rest, module=module, cwd=cwd, timeout=300)


def test_the_demo_runs_a_checked_session_and_reports_its_savings(tmp_path):
    done = run(["tau.modes.demo", "--dir", str(tmp_path / "demo")], tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # the plan, the fused fix, the loop, the packed log and its recall, the end
    assert out.count("  → todo add ") == 3
    assert "[Action Fusion: then_run" in out and "[then_run:succeeded] test_calc: 1 passed" in out
    assert out.count("todo-loop: tasks are still open") == 2
    assert "search 'ERROR'  [ObservationPack]" in out and "1 match in the stored log, line 614" in out
    assert "model: Done: add() is fixed" in out
    assert (tmp_path / "demo" / "repo" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # the session file is named, passes the check, and its report follows
    line = next(line for line in out.splitlines() if line.startswith("session file: "))
    session_file = Path(line.removeprefix("session file:").strip())
    assert session_file.is_file()
    check = run(["tau", "session", "check", str(session_file)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no problems" in check.stdout
    # a tau session: what was billed, against stock pi replayed with the fusion and the recall undone
    assert "stock pi (estimate)" in out and "tau (measured)" in out
    assert "1 fused call kept" in out and "1 result packed in the replay, 1 recall kept" in out
    assert "undone for the baseline: 1 fused command split, 0 receipts restored (0 not), 1 recall and" in out
    full = run(["tau.modes.savings", "--json", str(session_file)], tmp_path)
    report = json.loads(full.stdout)
    assert report["kind"] == "tau" and report["undone"]["unfused"] == report["undone"]["recalls"] == 1
    assert report["requests"] == 13 and report["tau"]["inputTokens"] < report["baseline"]["inputTokens"]
    # Issue 19, item 10: the fusion the session already did is credited (the row read +0.0%)
    fusion = report["mechanisms"]["actionFusion"]
    assert fusion["used"] and fusion["fusedCalls"] == 1
    assert fusion["requests"] == report["baseline"]["requests"] - 1  # the command's own request saved
    assert fusion["inputTokens"] < report["baseline"]["inputTokens"]
    # Issue 28: kept as it ran, fusion also keeps its then_run declaration on every request (the
    # baseline has none), which costs about what the saved request saves in a session this short.
    [row] = [line for line in out.splitlines() if line.startswith("  Action Fusion ")]
    assert re.search(r" [-+]\d+\.\d%  1 fused call kept$", row), row


def test_without_git_the_repository_is_a_plain_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_repo.shutil, "which", lambda name: None)
    assert demo_repo.make_repo(tmp_path / "r") is False
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["build.log", "calc.py", "test_calc.py"]


def test_with_git_the_files_are_committed(tmp_path):
    if demo_repo.shutil.which("git") is None:
        return
    assert demo_repo.make_repo(tmp_path / "r") is True
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path / "r", capture_output=True, text=True
    )
    assert status.stdout == ""


def test_the_log_is_large_enough_to_be_packed():
    log = demo_repo.build_log()
    assert len(log.encode()) > 10 * 1024 and log.splitlines()[613].split()[1] == "ERROR"


def test_the_demo_keeps_everything_in_its_directory_and_says_how_to_inspect_it(tmp_path):
    """Issue 19: the demo left /tmp/tau-demo-* behind and its hints assumed `tau` on PATH."""
    scratch, agent = tmp_path / "tmp", tmp_path / "agent"
    scratch.mkdir()
    env = tau_env({"TMPDIR": str(scratch), "TAU_AGENT_DIR": str(agent)})

    def demo(*args: str) -> subprocess.CompletedProcess:
        return run_tau(list(args), module="tau.modes.demo", cwd=tmp_path, env=env)

    first = demo("--quiet")
    assert first.returncode == 0, first.stderr
    home = agent / "demo"
    assert first.stdout.startswith(f"demo directory: {home} (the next tau demo replaces it)\n")
    assert sorted(p.name for p in home.iterdir()) == [".tau-demo", "agent", "faux-script.json", "repo", "tmp"]
    assert list(scratch.iterdir()) == []  # nothing in the temporary directory
    # the inspect lines run as printed: this interpreter with -m tau, not a `tau` that may not be on PATH
    [check] = [
        line.split(":", 1)[1].strip() for line in first.stdout.splitlines() if line.startswith("inspect it:")
    ]
    assert check.startswith(f"{sys.executable} -m tau session check ")
    ran = subprocess.run(
        shlex.split(check), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0 and "no problems" in ran.stdout, ran.stdout + ran.stderr

    second = demo("--quiet")  # the next run replaces the directory: one session, not two
    assert second.returncode == 0, second.stderr
    assert len(list((home / "agent" / "sessions").glob("*/*.jsonl"))) == 1


def test_a_directory_the_demo_did_not_make_is_left_alone(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    done = run(["tau.modes.demo", "--dir", str(mine)], tmp_path)
    assert done.returncode == 1 and "was not made by tau demo; it is left alone" in done.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_the_tau_command_is_the_program_actually_running(tmp_path, monkeypatch):
    program = tmp_path / "bin" / "tau"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert tau_command(str(program)) == str(program.resolve())  # not on PATH: its path
    monkeypatch.setenv("PATH", str(program.parent))
    assert tau_command(str(program)) == "tau"  # on PATH and the same program: its name
    assert tau_command(str(tmp_path / "tau" / "__main__.py")) == f"{sys.executable} -m tau"


def test_the_plan_reads_as_a_checklist(tmp_path):
    done = run(["tau.modes.demo", "--dir", str(tmp_path / "demo")], tmp_path)
    assert done.returncode == 0, done.stderr
    checklist = (
        '  → todo update "Fix add() in calc.py" → completed\n'
        "      ☑ Fix add() in calc.py\n"
        "      ☐ Check build.log for warnings\n"
        "      ☐ Report the first error in the log\n"
        "      1 of 3 done\n"
    )
    assert checklist in done.stdout
    assert "baseRevision" not in done.stdout
