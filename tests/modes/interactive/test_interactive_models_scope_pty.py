"""pi's model cycling in a real terminal (issue 32's audit): ``--models`` names the scope, the start
says it (``Model scope: … (Ctrl+P to cycle)``), Ctrl+P goes forward and Alt+P back, each switch is
said and shown in the footer, and recorded in the session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import COLUMNS, ENTER, ROWS, TIMEOUT, Tau, Terminal

from tau_process import tau_command, tau_env

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

SHAPE = {"api": "faux", "baseUrl": "http://localhost:0", "reasoning": True, "input": ["text", "image"]}


class ScopedTau(Tau):
    """``tau`` with no ``--model``: the scope picks it."""

    def __init__(self, cwd: Path, script: Path, *extra: str) -> None:
        self.screen = Terminal(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        env = tau_env({"TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)})
        program, *args = tau_command("--faux-script", script, *extra)
        try:
            self.child = pexpect.spawn(program, args, cwd=str(cwd), env=env, dimensions=(ROWS, COLUMNS))
        except (OSError, pexpect.ExceptionPexpect) as exc:
            pytest.skip(f"cannot allocate a pseudo-terminal here ({exc}); the pty tests need one")
        self.screen.child = self.child


def test_ctrl_p_cycles_through_the_scope(tmp_path):
    agent = Path(os.environ["TAU_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    models = [{"id": i, "name": i, **SHAPE} for i in ("faux-1", "faux-2", "faux-3")]
    (agent / "models.json").write_text(json.dumps({"providers": {"faux": {"models": models}}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "answered by the scope"}]))
    work = tmp_path / "work"
    work.mkdir()
    tau = ScopedTau(work, script, "--models", "faux-1,faux-3:high")
    try:
        tau.wait_text("Model scope: faux-1, faux-3:high (Ctrl+P to cycle)")
        tau.wait_text("faux/faux-1 • medium")
        tau.send("\x10")  # Ctrl+P
        tau.wait_text("Switched to faux-3 (thinking: high)")
        tau.wait_text("faux/faux-3 • high")
        tau.send("\x10")
        tau.wait_text("Switched to faux-1 (thinking: high)")  # no level of its own: the session's stays
        tau.send("\x1bp")  # Alt+P: back
        tau.wait(lambda: tau.text().count("Switched to faux-3") == 2, "the second switch to faux-3")
        tau.send("hello" + ENTER)
        tau.wait_text("answered by the scope")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    [path] = sorted(agent.glob("sessions/**/*.jsonl"))
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [e["modelId"] for e in entries if e["type"] == "model_change"][-3:] == [
        "faux-3",
        "faux-1",
        "faux-3",
    ]
    [answer] = [e["message"] for e in entries if e.get("message", {}).get("role") == "assistant"]
    assert answer["model"] == "faux-3"
