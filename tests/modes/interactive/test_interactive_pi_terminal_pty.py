"""Issue 32 in a real terminal: the rest of pi 1.6's terminal (``tau -r``, ``!cmd``, the slash commands,
quitting during a run, ...), ``tau`` on a pty with the faux model, the screen rendered by pyte.

Waits are for screen content, never fixed sleeps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import ENTER, ESC, TIMEOUT, Tau

from tau_process import run_tau

pexpect = pytest.importorskip("pexpect")

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
    done = run_tau(["-p", "--model", "faux/faux-1", "--faux-script", str(script), *extra, prompt], cwd=work)
    assert done.returncode == 0, done


def test_resume_flag_picks_a_session_then_sends_the_prompt(tmp_path):
    print_run(tmp_path, "older task")
    print_run(tmp_path, "newer task")
    tau = start(tmp_path, [{"text": "continued here"}], "-r", "and now this")
    try:
        tau.wait_text("Resume Session")
        assert "newer task" in tau.text() and "older task" in tau.text()
        assert "◉ Current Folder | ○ All" in tau.text()  # Tab shows every directory's
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
        tau.wait_text("Resume Session")
        tau.send(ESC)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
        tau.stream.feed(tau.child.before)
        assert "No session selected" in tau.text()
    finally:
        tau.close()
    tau.child.close()
    assert tau.child.exitstatus == 0
    assert len(session_files()) == 1


def agent_dir() -> Path:
    path = Path(os.environ["TAU_AGENT_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_bang_runs_a_command_into_the_conversation_and_double_bang_keeps_it_out(tmp_path):
    tau = start(tmp_path, [{"text": "seen"}])
    try:
        tau.wait_text(FOOTER)
        tau.send("!echo visible-$((40+2))" + ENTER)
        tau.wait_text("✓ $ echo visible-$((40+2))")
        assert "visible-42" in tau.text()
        tau.send("!!echo hidden-$((6*7))" + ENTER)
        tau.wait_text("hidden-42")
        tau.wait_text("(!! output is not sent to the model)")
        tau.send("!false" + ENTER)
        tau.wait_text("(exit code 1)")
        tau.send("what now" + ENTER)
        tau.wait_text("seen")
        quit_tau(tau)
    finally:
        tau.close()
    [path] = session_files()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    bash = [
        r["message"]
        for r in records
        if r.get("type") == "message" and r["message"]["role"] == "bashExecution"
    ]
    assert [(b["command"], b["output"], b.get("excludeFromContext", False)) for b in bash] == [
        ("echo visible-$((40+2))", "visible-42\n", False),
        ("echo hidden-$((6*7))", "hidden-42\n", True),
        ("false", "", False),
    ]
    context = run_tau(["session", "context", str(path)], timeout=60)
    assert "visible-42" in context.stdout and "hidden-42" not in context.stdout


def test_thinking_settings_and_trust_commands(tmp_path):
    shape = {"api": "faux", "baseUrl": "http://localhost:0", "reasoning": True, "input": ["text", "image"]}
    (agent_dir() / "models.json").write_text(
        json.dumps({"providers": {"faux": {"models": [{"id": "faux-1", "name": "faux-1", **shape}]}}})
    )
    tau = start(tmp_path, [])
    try:
        tau.wait_text("faux/faux-1 •")
        tau.send("/thinking high" + ENTER)
        tau.wait_text("Thinking level: high")
        tau.wait_text("faux/faux-1 • high")
        tau.send("/settings" + ENTER)
        tau.wait_text("enter/space change")
        assert "Steering mode" in tau.text() and "one-at-a-time" in tau.text()
        tau.send("steer")  # search
        tau.wait_text("search: steer")
        tau.send(ENTER)  # the next value: all
        tau.wait(lambda: "› Steering mode" in tau.text() and "all" in tau.text(), "the new value")
        tau.send(ESC)
        tau.wait(lambda: "Steering mode: all" in " ".join(tau.text().split()), "the saved notice")
        tau.send("/trust" + ENTER)
        tau.wait_text("Project trust for")
        tau.send(ENTER)  # Trust this project
        tau.wait_text("Saved trust decision: trusted")
        quit_tau(tau)
    finally:
        tau.close()
    assert json.loads((agent_dir() / "settings.json").read_text())["steeringMode"] == "all"
    trust = json.loads((agent_dir() / "trust.json").read_text())
    assert trust == {str((tmp_path / "work").resolve()): True}


class RawTau(Tau):
    """A ``Tau`` that also keeps the raw bytes (terminal control sequences pyte does not show)."""

    raw = b""

    def pump(self, seconds: float = 0.05) -> None:
        try:
            data = self.child.read_nonblocking(1 << 16, timeout=seconds)
        except pexpect.TIMEOUT:
            return
        self.raw += data
        self.stream.feed(data)


def test_copy_export_and_clone(tmp_path):
    import base64

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "the answer to copy"}]))
    work = tmp_path / "work"
    work.mkdir()
    env_display = os.environ.pop("DISPLAY", None), os.environ.pop("WAYLAND_DISPLAY", None)
    try:
        tau = RawTau(work, script)
    finally:
        for name, value in zip(("DISPLAY", "WAYLAND_DISPLAY"), env_display, strict=True):
            if value is not None:
                os.environ[name] = value
    try:
        tau.wait_text(FOOTER)
        tau.send("/copy" + ENTER)
        tau.wait_text("No agent messages to copy yet.")
        tau.send("question" + ENTER)
        tau.wait_text("the answer to copy")
        tau.send("/copy" + ENTER)
        tau.wait_text("Copied last agent message to clipboard")
        encoded = base64.b64encode(b"the answer to copy")
        assert b"\x1b]52;c;" + encoded + b"\x07" in tau.raw  # OSC 52: no display in this terminal
        tau.send("/export page.html" + ENTER)
        tau.wait_text("Session exported to: page.html")
        tau.send("/export branch.jsonl" + ENTER)
        tau.wait_text("branch.jsonl")
        tau.send("/clone" + ENTER)
        tau.wait_text("Cloned to new session")
        quit_tau(tau)
    finally:
        tau.close()
    page = (work / "page.html").read_text(encoding="utf-8")
    assert "the answer to copy" in page and "question" in page
    lines = (work / "branch.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "session" and any("the answer to copy" in line for line in lines)
    files = session_files()
    assert len(files) == 2  # the clone is a second file with the same conversation
    assert [user_texts(path) for path in files] == [["question"], ["question"]]


def test_reload_reads_the_context_files_again_on_the_same_session(tmp_path):
    tau = start(tmp_path, [{"text": "first answer"}, {"text": "second answer"}], "--verbose")
    try:
        tau.wait_text("[Tools]")
        assert "[Context]" not in tau.text()
        tau.send("hello" + ENTER)
        tau.wait_text("first answer")
        (tmp_path / "work" / "AGENTS.md").write_text("Be brief.")
        prompts = Path(os.environ["TAU_AGENT_DIR"]) / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        (prompts / "fresh.md").write_text("A template added during the session")
        tau.send("/reload" + ENTER)
        tau.wait_text("[Context]")
        tau.wait_text("AGENTS.md")
        tau.wait_text("/fresh")
        quit_tau(tau)
    finally:
        tau.close()
    assert len(session_files()) == 1


def test_ctrl_o_prints_collapsed_rows_again_in_full(tmp_path):
    tau = start(tmp_path, [{"bash": "for n in $(seq -w 1 20); do echo line-$n; done"}, {"text": "listed"}])
    try:
        tau.wait_text(FOOTER)
        tau.send("run" + ENTER)
        tau.wait_text("listed")
        assert "more lines (ctrl+o to expand)" in tau.text() and "line-01" not in tau.text()
        tau.send("\x0f")  # Ctrl+O
        tau.wait_text("ctrl+o: 1 row printed above, in full")
        tau.wait_text("line-01")
        quit_tau(tau)
    finally:
        tau.close()


def test_quitting_during_a_run_aborts_the_tool_and_says_how_to_resume(tmp_path):
    tau = start(tmp_path, [{"bash": "sleep 120"}, {"text": "never"}])
    try:
        tau.wait_text(FOOTER)
        tau.send("wait for it" + ENTER)
        tau.wait_text("$ sleep 120")
        tau.send("a queued thought" + ENTER)  # a steering message, queued behind the tool
        tau.wait_text("steer: a queued thought")
        tau.send(CTRL_C)
        tau.wait_text("Press Ctrl+C again to quit")
        tau.send(CTRL_C)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
        tau.stream.feed(tau.child.before)
        text = tau.text()
    finally:
        tau.close()
    [path] = session_files()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    session_id = records[0]["id"]
    assert "✗ $ sleep 120" in text, text
    assert "Not sent (queued when you quit): a queued thought" in text
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert last.strip() == f"Stopped during a run. Resume with: tau --session {session_id}"
    results = [
        r["message"] for r in records if r.get("type") == "message" and r["message"]["role"] == "toolResult"
    ]
    assert [(m["toolName"], m["isError"], m["content"][0]["text"]) for m in results] == [
        ("bash", True, "Command aborted")
    ]
    check = run_tau(["session", "check", str(path)], timeout=60)
    assert check.returncode == 0, check.stdout


def test_the_footer_and_todoloop_count_the_same_list_in_words(tmp_path, monkeypatch):
    """A fresh session showed `todo 0/0 (not yet persisted)`; `/todoloop` said `tasks: 0/3` beside `todo 3/3`."""
    monkeypatch.setenv("TAU_TODO_LOOP_DISABLED", "1")  # no hidden continuations: the script stays short
    plan = {"action": "add", "baseRevision": 0, "tasks": [{"title": "first step"}, {"title": "second step"}]}
    tau = start(tmp_path, [{"tool": "todo", "args": plan}, {"text": "planned"}])
    try:
        tau.wait_text(FOOTER)
        assert "todo 0/0" not in tau.text() and "not yet persisted" not in tau.text()
        tau.send("plan it" + ENTER)
        tau.wait_text("planned")
        tau.wait_text("todo 0/2 done")
        assert "☐ first step" in tau.text() and "[ ]" not in tau.text()
        tau.send("/todoloop" + ENTER)
        tau.wait_text("tasks: 2/2 open (source: pi-todo:state)")
        quit_tau(tau)
    finally:
        tau.close()
