"""Issue 19 (the first hour) in a real terminal: ``tau`` on a pty with the faux model, the screen
rendered by pyte. Waits are for screen content, never fixed sleeps."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import COLUMNS, ENTER, TIMEOUT, Tau

pexpect = pytest.importorskip("pexpect")

FOOTER = "faux/faux-1 • off • ctx"
CTRL_C = "\x03"


def start(tmp_path: Path, steps: list[dict]) -> Tau:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    work = tmp_path / "work"
    work.mkdir()
    tau = Tau(work, script)
    tau.wait_text(FOOTER)
    return tau


def quit_tau(tau: Tau) -> None:
    tau.send("/quit" + ENTER)
    tau.child.expect(pexpect.EOF, timeout=TIMEOUT)


def session_files() -> list[Path]:
    return sorted(Path(os.environ["TAU_AGENT_DIR"]).glob("sessions/**/*.jsonl"))


def test_help_and_an_unknown_command_are_answered_on_screen_and_cost_no_request(tmp_path):
    """`/help` was sent to the model as a prompt (and cost a request)."""
    tau = start(tmp_path, [{"text": "the model was asked"}])
    try:
        tau.send("/help" + ENTER)
        tau.wait_text("Commands (never sent to the model):")
        for command in ("/compact", "/tree", "/resume", "/todo", "/todoloop", "/hotkeys", "/quit"):
            assert f"  {command} " in tau.text(), tau.text()
        tau.send("/halp" + ENTER)
        tau.wait_text("Unknown command /halp: /help lists the commands")
        assert "the model was asked" not in tau.text()
        tau.send("\x15")  # Ctrl+U: the mistyped command stays in the editor to be corrected
        quit_tau(tau)
    finally:
        tau.close()
    assert session_files() == []  # no prompt reached the session, so no file was written


def test_a_ctrl_c_that_clears_the_editor_is_not_the_first_quit_press(tmp_path):
    """Two quick Ctrl+C after typing: the first clears the text, the second only warns."""
    tau = start(tmp_path, [])
    try:
        tau.send("draft")
        tau.wait_text("› draft")
        tau.send(CTRL_C + CTRL_C)  # one write: both presses well inside the double-press window
        tau.wait_text("Press Ctrl+C again to quit")
        tau.send("still here")  # tau is still running: the editor takes the text
        tau.wait_text("› still here")
        assert "draft" not in tau.text()
        tau.send("\x15")  # Ctrl+U: an empty editor for /quit
        quit_tau(tau)
    finally:
        tau.close()


def test_long_tool_rows_wrap_under_their_text_not_at_column_0(tmp_path):
    """A long command, or output, wrapped back to column 0 and broke the rows' indentation."""
    words = " ".join(f"word{i:02d}" for i in range(25))  # 174 characters: wider than the terminal
    assert len(words) > COLUMNS
    tau = start(tmp_path, [{"bash": f"echo {words}"}, {"text": "listed"}])
    try:
        tau.send("run it" + ENTER)
        tau.wait_text("listed")
        lines = [line for line in tau.text().splitlines() if "word" in line]
        assert lines[0].startswith("✓ $ echo word00 "), tau.text()
        assert len(lines) >= 4, tau.text()  # the title and the output both wrapped
        for line in lines[1:]:
            assert line.startswith("  word"), tau.text()
        shown = " ".join(line.strip() for line in lines).removeprefix("✓ $ echo ")
        assert (
            shown.split() == (words + " " + words).split()
        )  # every word once in the title, once in the output
        quit_tau(tau)
    finally:
        tau.close()
