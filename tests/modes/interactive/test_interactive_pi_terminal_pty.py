"""Issue 32 in a real terminal: the rest of pi 1.6's terminal (``tau -r``, ``!cmd``, the slash commands,
quitting during a run, ...), ``tau`` on a pty with the faux model, the screen rendered by pyte.

Waits are for screen content, never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_interactive_pty import ENTER, ESC, TIMEOUT, Tau

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[3]
FOOTER = "faux/faux-1 • off • ctx"
CTRL_C = "\x03"


def start(tmp_path: Path, steps: list[dict], *extra: str, name: str = "script.json") -> Tau:
    script = tmp_path / name
    script.write_text(json.dumps(steps))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Tau(work, script, *extra)


def quit_tau(tau: Tau) -> None:
    tau.send("/quit" + ENTER)
    tau.child.expect(pexpect.EOF, timeout=TIMEOUT)


def session_files() -> list[Path]:
    return sorted(Path(os.environ["TAU_AGENT_DIR"]).glob("sessions/**/*.jsonl"))


def user_texts(path: Path) -> list[str]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [
        r["message"]["content"][0]["text"]
        for r in records
        if r.get("type") == "message" and r["message"]["role"] == "user"
    ]


def print_run(tmp_path: Path, prompt: str, *extra: str) -> None:
    """A finished ``tau -p`` session in ``tmp_path/work``."""
    script = tmp_path / f"p-{prompt.replace(' ', '-')}.json"
    script.write_text(json.dumps([{"text": f"re: {prompt}"}]))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau",
            "-p",
            "--model",
            "faux/faux-1",
            "--faux-script",
            str(script),
            *extra,
            prompt,
        ],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done


def test_resume_flag_picks_a_session_then_sends_the_prompt(tmp_path):
    print_run(tmp_path, "older task")
    print_run(tmp_path, "newer task")
    tau = start(tmp_path, [{"text": "continued here"}], "-r", "and now this")
    try:
        tau.wait_text("Resume session")
        assert "newer task" in tau.text() and "older task" in tau.text()
        assert "sessions of every directory" in tau.text()
        tau.send(ENTER)  # the newest is selected first
        tau.wait_text("continued here")
        quit_tau(tau)
    finally:
        tau.close()
    newer = next(path for path in session_files() if "newer task" in user_texts(path))
    assert user_texts(newer) == ["newer task", "and now this"]
    assert len(session_files()) == 2  # nothing new was written


def test_resume_flag_with_nothing_picked_leaves(tmp_path):
    print_run(tmp_path, "a task")
    tau = start(tmp_path, [], "-r")
    try:
        tau.wait_text("Resume session")
        tau.send(ESC)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
        tau.stream.feed(tau.child.before)
        assert "No session selected" in tau.text()
    finally:
        tau.close()
    tau.child.close()
    assert tau.child.exitstatus == 0
    assert len(session_files()) == 1
