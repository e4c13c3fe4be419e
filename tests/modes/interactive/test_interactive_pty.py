"""``tau`` in a real pseudo-terminal (pexpect), its screen rendered by pyte, on the faux model.

Waits are for screen content (generous timeouts for loaded CI machines), never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tau_process import run_tau, tau_command, tau_env

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

ROWS, COLUMNS = 40, 100
TIMEOUT = 60.0
ENTER, ESC = "\r", "\x1b"


class Terminal(pyte.Screen):
    """A pyte screen that answers the application's cursor position requests, as a terminal does."""

    child = None

    def write_process_input(self, data: str) -> None:
        if self.child is not None:
            self.child.send(data)


class Tau:
    """One ``tau`` process on a pty."""

    def __init__(self, cwd: Path, script: Path, *extra: str) -> None:
        self.screen = Terminal(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        env = tau_env({"TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)})
        program, *args = tau_command("--model", "faux/faux-1", "--faux-script", str(script), *extra)
        try:
            self.child = pexpect.spawn(program, args, cwd=str(cwd), env=env, dimensions=(ROWS, COLUMNS))
        except (OSError, pexpect.ExceptionPexpect) as exc:
            pytest.skip(f"cannot allocate a pseudo-terminal here ({exc}); the pty tests need one")
        self.screen.child = self.child

    def pump(self, seconds: float = 0.05) -> None:
        try:
            self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=seconds))
        except pexpect.TIMEOUT:
            pass

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait(self, condition, what: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            if not self.child.isalive():
                self.pump()
                raise AssertionError(f"tau exited waiting for {what}; screen:\n{self.text()}")
            self.pump()

    def wait_text(self, text: str, timeout: float = TIMEOUT) -> None:
        self.wait(lambda: text in self.text(), repr(text), timeout)

    def send(self, data: str) -> None:
        self.child.send(data)

    def resize(self, rows: int, columns: int) -> None:
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def tau_pty(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"text": "This answer is **streamed** in pieces."},
                {"bash": "printf 'clear\\033[2J\\033]0;pwned\\007 ok\\n'"},
                {"text": "tool done"},
                {"bash": "sleep 30"},
                # the turn aborted during the tool call may still take a step: both answers read the same
                {"text": "pasted ok"},
                {"text": "pasted ok"},
            ]
        )
    )
    work = tmp_path / "work"
    work.mkdir()
    terminal = Tau(work, script)
    yield terminal
    terminal.close()


def _running(token: str) -> bool:
    """Whether a process whose command line holds ``token`` is alive (zombies excluded)."""
    for proc in Path("/proc").iterdir():
        try:
            if token in (proc / "cmdline").read_bytes().decode(errors="replace"):
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    return True
        except (OSError, IndexError):
            continue
    return False


def _session_lines() -> list[dict]:
    agent_dir = Path(os.environ["TAU_AGENT_DIR"])
    files = sorted(agent_dir.glob("sessions/**/*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]


def test_a_session_in_a_terminal(tau_pty):
    tau = tau_pty
    tau.wait_text("faux/faux-1 • off • ctx")  # the footer: the editor is live

    tau.send("hello" + ENTER)
    tau.wait_text("This answer is streamed in pieces.")

    tau.send("run the tool" + ENTER)
    tau.wait_text("tool done")
    text = tau.text()
    assert "✓ $ printf" in text and "clear ok" in text, text
    assert "This answer is streamed" in text  # the tool's clear-screen sequence did not clear it

    tau.send("sleep please" + ENTER)
    tau.wait_text("⋯ $ sleep 30")
    started = time.monotonic()
    tau.send(ESC)
    tau.wait_text("Aborted: This operation was aborted")
    assert time.monotonic() - started < 20
    assert "✗ $ sleep 30" in tau.text()

    tau.resize(24, 60)
    tau.wait(lambda: "─" * 60 in tau.text() and "faux/faux-1 • off" in tau.text(), "the narrow layout")
    assert "─" * 61 not in tau.text()
    tau.resize(ROWS, COLUMNS)
    tau.wait(lambda: "─" * COLUMNS in tau.text(), "the wide layout")

    tau.send("\x1b[200~pasted\x1b[2J\x1b]0;t\x07 \u202eright\x00\x1b[201~")
    tau.wait_text("pasted right")
    tau.send(ENTER)
    tau.wait_text("pasted ok")

    tau.send("/tree" + ENTER)
    tau.wait_text("Session tree")
    assert "user: sleep please" in tau.text()
    tau.send(ESC)
    tau.wait(lambda: "Session tree" not in tau.text(), "the tree to close")

    tau.send("/quit" + ENTER)
    tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    tau.child.close()
    assert tau.child.exitstatus == 0

    entries = _session_lines()  # every line is JSON: the file is intact
    prompts = [
        e["message"]["content"][0]["text"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert prompts == ["hello", "run the tool", "sleep please", "pasted right"]


def test_sigterm_during_a_tool_call_ends_tau_and_its_command(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"bash": "sleep 30.4321"}, {"text": "never"}]))
    work = tmp_path / "work"
    work.mkdir()
    tau = Tau(work, script)
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.send("sleep" + ENTER)
        tau.wait_text("⋯ $ sleep 30.4321")
        if not Path("/proc").is_dir():
            pytest.skip("needs /proc to see the command's process")
        tau.wait(lambda: _running("30.4321"), "the command to start")
        started = time.monotonic()
        tau.child.kill(15)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
        tau.child.close()
        assert time.monotonic() - started < 20
        assert tau.child.exitstatus == 0
        deadline = time.monotonic() + TIMEOUT
        while _running("30.4321") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running("30.4321")  # the command's process group went with tau
        entries = _session_lines()
        assert entries[0]["type"] == "session"
    finally:
        tau.close()


def test_resume_switches_to_another_session_of_the_directory(tmp_path):
    script = tmp_path / "script.json"
    # the restarted runtime reads the faux script again from its start: every step answers the same
    script.write_text(json.dumps([{"text": "answered"}, {"text": "answered"}]))
    work = tmp_path / "work"
    work.mkdir()
    tau = Tau(work, script)
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.send("remember me" + ENTER)
        tau.wait_text("answered")
        tau.send("/new" + ENTER)
        tau.wait_text("Started a new session")
        tau.send("/resume" + ENTER)
        # the picker's header and its rows may reach the terminal in separate writes
        tau.wait(
            lambda: "remember me" in tau.text().split("Resume Session", 1)[-1], "the session in the picker"
        )
        tau.send(ENTER)
        notice = "Started a new session"

        def resumed() -> bool:  # switched in place: the resumed history and a live footer after the notice
            after = tau.text().rsplit(notice, 1)[-1]
            return "remember me" in after and "faux/faux-1 • off • ctx" in after

        tau.wait(resumed, "the resumed session")
        tau.send("continue here" + ENTER)
        tau.wait(lambda: tau.text().rsplit(notice, 1)[-1].count("answered") == 2, "the answer after resume")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    prompts = [
        e["message"]["content"][0]["text"]
        for e in _session_lines()
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert prompts == ["remember me", "continue here"]


class Tmux:
    """One ``tau`` in a tmux pane: a real terminal emulator, whose scrollback is what a user scrolls back to."""

    def __init__(self, cwd: Path, args: list[str], rows: int = ROWS, columns: int = COLUMNS) -> None:
        self.socket = f"tau-test-{os.getpid()}-{id(self)}"
        command = " ".join(shlex.quote(part) for part in tau_command(*args))
        self.tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            str(columns),
            "-y",
            str(rows),
            "-c",
            str(cwd),
            command,
        )

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def scrollback(self) -> str:
        return self.tmux("capture-pane", "-p", "-S", "-", "-E", "-")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def send(self, keys: str) -> None:
        self.tmux("send-keys", "-l", keys)
        self.tmux("send-keys", "Enter")

    def wait(self, condition, what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; scrollback:\n{self.scrollback()}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=60)


def test_continue_prints_the_history_once(tmp_path):
    """Issue 19: `tau -c` left a second copy of the history (with a stale editor and footer) in the scrollback.

    The history was first drawn as the live frame, from the top row; erasing that frame clears the whole
    screen, which tmux (like several terminals) keeps in the scrollback. Printed before the first frame,
    the history is there once.
    """
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux: its scrollback is what this test reads")
    answer = "the answer, one line"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": answer}] * 12))
    work = tmp_path / "work"
    work.mkdir()
    faux = ["--model", "faux/faux-1", "--faux-script", str(script)]
    for n in range(3):
        done = run_tau([*faux, "-c", "-p", f"prompt {n}"], cwd=work)
        assert done.returncode == 0, done.stderr
    tau = Tmux(work, [*faux, "-c"])
    footer = "faux/faux-1 • off • ctx"
    try:
        tau.wait(lambda: footer in tau.screen(), "the editor")
        tau.send("one more")

        captured: list[str] = []

        def settled() -> bool:
            """The new answer printed and the editor back, in two captures in a row that are the same
            (never a frame caught half redrawn); the assertions read that very capture."""
            first = tau.scrollback()
            shown = first.rstrip()
            at_end = shown.splitlines()[-1].startswith(footer) if shown else False
            if not (at_end and "one more" in first and first.count(answer) >= 4):
                return False
            if tau.scrollback() != first:
                return False
            captured.append(first)
            return True

        tau.wait(settled, "the new answer printed")
        everything = captured[-1]
        for n in range(3):
            assert everything.count(f"prompt {n}\n") == 1, everything
        assert "earlier lines print when finished" not in everything
        assert everything.count("/hotkeys for keys") == 1, everything  # one start line, no stale frame
        assert everything.count(footer) == 1, everything  # one footer: the live one
    finally:
        tau.close()


def test_the_todo_checklist_is_shown_as_a_checklist(tmp_path):
    """Issue 19: todo rows showed the raw JSON arguments and UUIDs instead of the list."""
    (tmp_path / "plan.py").write_text(
        "import json\n"
        "def step(request):\n"
        "    text = request['messages'][-1]['content'][0]['text']\n"
        "    tasks = json.loads(text.split('\\n')[1])['tasks']\n"
        "    return {'tool': 'todo', 'args': {'action': 'update', 'baseRevision': 1, 'updates': [\n"
        "        {'id': tasks[0]['id'], 'status': 'completed'}, {'id': tasks[1]['id'], 'status': 'in_progress'}]}}\n"
    )
    plan = {
        "action": "add",
        "baseRevision": 0,
        "tasks": [{"title": t} for t in ("Fix add()", "Count warnings", "Report")],
    }
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps([{"tool": "todo", "args": plan}, {"factory": "plan.py:step"}, {"text": "on it"}])
    )
    work = tmp_path / "work"
    work.mkdir()
    tau = Tau(work, script)
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.send("plan the work" + ENTER)
        tau.wait_text("1 of 3 done")
        screen = tau.text()
        expected = [
            '✓ todo add 3 tasks: "Fix add()", "Count warnings", "Report"',
            "  ☐ Fix add()",
            "  ☐ Count warnings",
            "  ☐ Report",
            "  0 of 3 done",
            '✓ todo update "Fix add()" → completed, "Count warnings" → in progress',
            "  ☑ Fix add()",
            "  ◐ Count warnings",
            "  ☐ Report",
            "  1 of 3 done",
        ]
        lines = [line for line in screen.splitlines() if line]  # blank lines between rows vary with printing
        start = lines.index(expected[0])
        assert lines[start : start + len(expected)] == expected, screen
        assert "baseRevision" not in screen and "todo revision" not in screen
    finally:
        tau.close()


def test_the_action_fusion_banner_shows_while_a_slow_then_run_runs(tmp_path):
    """Issue 33, item 5 (seed 003, docs/extensions/sol.md): the banner on a fused row shows while
    the call runs, not only after it succeeded. The command waits for a file the test creates once
    it has seen the banner, so the capture is taken during the call whatever the machine's speed."""
    work = tmp_path / "work"
    work.mkdir()
    gate = tmp_path / "gate"
    command = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; echo passed-$((40 + 2))"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {
                    "tool": "write",
                    "args": {"path": "m.py", "content": "x = 1\n", "then_run": {"command": command}},
                },
                {"text": "fused call done"},
            ]
        )
    )
    tau = Tau(work, script)
    try:
        tau.wait_text("faux/faux-1 • off • ctx")
        tau.send("write it" + ENTER)
        tau.wait_text("⋯ write m.py  ⚡ then_run: $ while")
        tau.wait_text("⚡ SoL-Pi · Action Fusion")
        running = tau.text()
        assert "Money saved · 1 model round-trip avoided" in running
        assert "passed-42" not in running and "fused call done" not in running  # still running
        gate.write_text("")
        tau.wait_text("fused call done")
        done = tau.text()
        assert "✓ write m.py  ⚡ then_run: $ while" in done and "⚡ SoL-Pi · Action Fusion" in done
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        gate.write_text("")
        tau.close()
