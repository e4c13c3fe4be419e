"""``tau demo``: the scripted session runs offline in a throwaway repository, shows each mechanism at
work, leaves a session file that passes ``tau session check``, and ends with its savings report.
(How long it takes is not asserted here: a loaded machine decides that, not the demo.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tau.modes.demo import repo as demo_repo

REPO = Path(__file__).resolve().parents[3]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_demo_runs_a_checked_session_and_reports_its_savings(tmp_path):
    done = run(["tau.modes.demo", "--dir", str(tmp_path / "demo")], tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # the plan, the fused fix, the loop, the packed log and its recall, the end
    assert out.count("  → todo add ") == 3
    assert "[Action Fusion: then_run" in out and "[then_run:succeeded] test_calc: 1 passed" in out
    assert out.count("todo-loop: tasks are still open") == 2
    assert "search 'ERROR'  [ObservationPack]" in out and "1 match(es) in the stored log, line 614" in out
    assert "model: Done: add() is fixed" in out
    assert (tmp_path / "demo" / "repo" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # the session file is named, passes the check, and its report follows
    line = next(line for line in out.splitlines() if line.startswith("session file: "))
    session_file = Path(line.removeprefix("session file: "))
    assert session_file.is_file()
    check = run(["tau", "session", "check", str(session_file)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no problems" in check.stdout
    # a tau session: what was billed, against stock pi replayed with the fusion and the recall undone
    assert "stock pi (estimate)" in out and "tau (measured)" in out
    assert "1 fused calls kept" in out and "1 results packed in the replay, 1 recalls kept" in out
    full = run(["tau.modes.savings", "--json", str(session_file)], tmp_path)
    report = json.loads(full.stdout)
    assert report["kind"] == "tau" and report["undone"]["unfused"] == report["undone"]["recalls"] == 1
    assert report["requests"] == 13 and report["tau"]["inputTokens"] < report["baseline"]["inputTokens"]


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
