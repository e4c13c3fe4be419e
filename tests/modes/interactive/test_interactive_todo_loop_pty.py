"""Issue 19, item 1: in the terminal the loop is visible, a dim line per hidden continuation and one
when it stops with tasks open (``tau`` on a pty with the faux model, the screen rendered by pyte)."""

from __future__ import annotations

import json
import re

import pytest
from test_interactive_pty import ENTER, TIMEOUT, Tau

from tau_process import run_tau

pexpect = pytest.importorskip("pexpect")

# Scrollback is written by rich (``ESC[2m``), the live area by prompt_toolkit (``ESC[0;2m``): a line
# is dim when an SGR sequence carrying attribute 2 comes right before it, whichever wrote it.
DIM = r"\x1b\[(?:\d*;)*2(?:;\d*)*m"


def dim(output: str, line: str) -> bool:
    return re.search(DIM + re.escape(line), output) is not None


PLAN = {"action": "add", "baseRevision": 0, "tasks": [{"title": "parse"}, {"title": "test"}]}


class RecordingTau(Tau):
    """A terminal that also keeps the raw output, for the styles pyte does not model (dim)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.raw = b""

    def pump(self, seconds: float = 0.05) -> None:
        try:
            data = self.child.read_nonblocking(1 << 16, timeout=seconds)
        except pexpect.TIMEOUT:
            return
        self.raw += data
        self.stream.feed(data)


def test_each_hidden_continuation_and_the_stop_show_a_dim_line(tmp_path):
    script = tmp_path / "script.json"
    answers = ["Answer one.", "Answer two.", "Answer three.", "Answer four."]
    script.write_text(json.dumps([{"tool": "todo", "args": PLAN}, *({"text": a} for a in answers)]))
    work = tmp_path / "work"
    work.mkdir()
    tau = RecordingTau(work, script)
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.send("plan and do it" + ENTER)
        stopped = "todo-loop: stopped with 2 tasks open: stalled (3 rounds without progress)"
        tau.wait_text(stopped)
        lines = [line.strip() for line in tau.text().splitlines() if line.strip()]
        shown = [line for line in lines if line.startswith(("Answer", "todo-loop:"))]
        assert shown == [
            "Answer one.",
            "todo-loop: continuing, 2 tasks open (round 1/25)",
            "Answer two.",
            "todo-loop: continuing, 2 tasks open (round 2/25)",
            "Answer three.",
            "todo-loop: continuing, 2 tasks open (round 3/25)",
            "Answer four.",
            stopped,
        ]
        output = tau.raw.decode("utf-8", "replace")
        for line in (f"todo-loop: continuing, 2 tasks open (round {n}/25)" for n in (1, 2, 3)):
            assert dim(output, line), line
        assert dim(output, stopped)
        assert "Answer one." in output and not dim(output, "Answer one.")  # only the loop's lines are dim
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()


def test_a_resumed_history_marks_each_hidden_continuation(tmp_path):
    """``tau -c`` showed the answers of a continued run one after another, with nothing between them."""
    script = tmp_path / "script.json"
    answers = ["Answer one.", "Answer two.", "Answer three.", "Answer four."]
    script.write_text(json.dumps([{"tool": "todo", "args": PLAN}, *({"text": a} for a in answers)]))
    work = tmp_path / "work"
    work.mkdir()
    faux = ["--model", "faux/faux-1", "--faux-script", str(script)]
    ran = run_tau([*faux, "-p", "plan and do it"], cwd=work)
    assert ran.returncode == 0 and ran.stderr.count("todo-loop: continuing") == 3, ran.stderr
    tau = RecordingTau(work, script, "-c")
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.wait_text("Answer four.")
        lines = [line.strip() for line in tau.text().splitlines() if line.strip()]
        shown = [line for line in lines if line.startswith(("Answer", "todo-loop:"))]
        continued = "todo-loop: continued (hidden message)"
        assert shown == [a for answer in answers for a in (answer, continued)][:-1]
        assert dim(tau.raw.decode("utf-8", "replace"), continued)
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
