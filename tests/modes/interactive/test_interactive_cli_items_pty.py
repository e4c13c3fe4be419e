"""Issue 32's command-line items typed in a real terminal (the audit's "pty test for each item").

A newcomer types these at a prompt, where stdin and stdout are a terminal and tau would otherwise
open its interactive screen: a subcommand word must not start a session, a bad flag must stop before
one, ``@file``, ``-nbt``, ``--session-id``, ``--fork`` and ``--export`` behave as in print mode, the
context-file variants and the process markers reach the session, and retries say their wait.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from test_interactive_pty import COLUMNS, ENTER, ROWS, TIMEOUT, Terminal

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

FOOTER = "faux/faux-1 • "


class Run:
    """``tau ARGS`` on a pty in ``cwd`` (the faux model when ``script`` is given)."""

    def __init__(
        self, cwd: Path, *args: str, script: list | None = None, tmp_path: Path | None = None
    ) -> None:
        self.screen = Terminal(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        argv = ["-m", "tau"]
        if script is not None:
            assert tmp_path is not None
            path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
            path.write_text(json.dumps(script))
            argv += ["--model", "faux/faux-1", "--faux-script", str(path)]
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS))
        try:
            self.child = pexpect.spawn(
                sys.executable, [*argv, *args], cwd=str(cwd), env=env, dimensions=(ROWS, COLUMNS)
            )
        except (OSError, pexpect.ExceptionPexpect) as exc:
            pytest.skip(f"cannot allocate a pseudo-terminal here ({exc}); the pty tests need one")
        self.screen.child = self.child

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def joined(self) -> str:
        """The screen's words, wrapped lines joined (long paths wrap)."""
        return " ".join(self.text().split())

    def pump(self) -> None:
        try:
            self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=0.05))
        except pexpect.TIMEOUT:
            pass

    def wait_text(self, text: str) -> None:
        import time

        deadline = time.monotonic() + TIMEOUT
        while text not in self.joined():
            if time.monotonic() > deadline or not self.child.isalive():
                self.pump()
                if text in self.joined():
                    return
                raise AssertionError(f"waiting for {text!r}; screen:\n{self.text()}")
            self.pump()

    def finish(self) -> int:
        """Wait for the end; the exit status."""
        self.child.expect(pexpect.EOF, timeout=TIMEOUT)
        self.stream.feed(self.child.before or b"")
        self.child.close()
        return self.child.exitstatus

    def quit(self) -> int:
        self.child.send("/quit" + ENTER)
        return self.finish()

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def sessions() -> list[Path]:
    return sorted(Path(os.environ["TAU_AGENT_DIR"]).glob("sessions/**/*.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def user_texts(path: Path) -> list[str]:
    return [
        r["message"]["content"][0]["text"]
        for r in records(path)
        if r.get("type") == "message" and r["message"]["role"] == "user"
    ]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["mcp", "list"], 0, "No MCP servers configured"),
        (["install", "npm:foo"], 1, "tau has no package manager"),
        (["auth", "login"], 1, "tau auth: tau has no login"),
        (["help"], 0, "tau --help lists the options"),
        (["config"], 0, "effective settings (built-in defaults, then the files read)"),
        (["--no-such-flag"], 1, "Error: Unknown option: --no-such-flag"),
        (["-x"], 1, "Error: Unknown option: -x tau --help lists the options"),
        (["--thinking", "bogus"], 1, 'Error: Invalid thinking level "bogus"'),
        (["-e", "missing.py"], 1, 'Hint: start without extensions using "tau -ne".'),
    ],
)
def test_words_and_mistakes_never_open_a_session(work, argv, code, said):
    """No model is configured: whatever is typed, nothing is sent and no screen opens."""
    run = Run(work, *argv)
    try:
        status = run.finish()
    finally:
        run.close()
    assert said in run.joined(), run.text()
    assert status == code, run.text()
    assert "/hotkeys for keys" not in run.text()  # the interactive screen never started
    assert sessions() == []


def test_nbt_file_arguments_and_context_variants_in_a_terminal(work, tmp_path):
    (work / "notes.txt").write_text("hello notes\n")
    (work / "AGENTS.md").write_text("the plain file")
    (work / "AGENTS.override.md").write_text("the override wins")
    run = Run(
        work,
        "-nbt",
        "@notes.txt",
        "what is in it",
        script=[{"text": "read it"}, {"bash": "echo $AI_AGENT $TAU_CODING_AGENT"}, {"text": "marked"}],
        tmp_path=tmp_path,
    )
    try:
        run.wait_text("read it")
        screen = run.text()
        assert "AGENTS.override.md" in screen and "[Tools]" in screen
        tools_line = screen.split("[Tools]", 1)[1].splitlines()[1]
        assert "read" not in tools_line and "bash" not in tools_line  # -nbt: no built-in tools
        run.child.send("!echo $AI_AGENT $TAU_CODING_AGENT" + ENTER)
        run.wait_text("tau true")
        assert run.quit() == 0
    finally:
        run.close()
    [path] = sessions()
    entries = records(path)
    assert not [e for e in entries if e.get("type") == "session_info"]  # -nbt named nothing
    [first] = user_texts(path)
    assert first == f'<file name="{work / "notes.txt"}">\nhello notes\n\n</file>\nwhat is in it'
    assert "the override wins" in path.read_text() and "the plain file" not in path.read_text()


def test_session_id_fork_and_export_in_a_terminal(work, tmp_path):
    run = Run(work, "--session-id", "fixed-1", script=[{"text": "first answer"}], tmp_path=tmp_path)
    try:
        run.wait_text("No project session found with id 'fixed-1'; creating a new session with that id.")
        run.wait_text(FOOTER)
        run.child.send("one" + ENTER)
        run.wait_text("first answer")
        assert run.quit() == 0
    finally:
        run.close()
    run = Run(work, "--session-id", "fixed-1", script=[{"text": "second answer"}], tmp_path=tmp_path)
    try:
        run.wait_text("first answer")  # reopened: the history is shown
        assert "No project session found" not in run.text()
        run.child.send("two" + ENTER)
        run.wait_text("second answer")
        assert run.quit() == 0
    finally:
        run.close()
    [original] = sessions()
    assert user_texts(original) == ["one", "two"]

    run = Run(work, "--fork", "fixed", script=[{"text": "forked answer"}], tmp_path=tmp_path)
    try:
        run.wait_text("second answer")
        run.child.send("three" + ENTER)
        run.wait_text("forked answer")
        assert run.quit() == 0
    finally:
        run.close()
    [fork] = [path for path in sessions() if path != original]
    assert user_texts(fork) == ["one", "two", "three"] and user_texts(original) == ["one", "two"]

    run = Run(work, "--export", str(original), "page.html")
    try:
        assert run.finish() == 0
    finally:
        run.close()
    assert "Exported to: page.html" in run.text()
    page = (work / "page.html").read_text(encoding="utf-8")
    assert "first answer" in page and "second answer" in page


def test_an_ambiguous_id_prefix_in_a_terminal(work, tmp_path):
    for name in ("same-1", "same-2"):
        run = Run(work, "--session-id", name, script=[{"text": f"answer {name}"}], tmp_path=tmp_path)
        try:
            run.wait_text(FOOTER)
            run.child.send(name + ENTER)
            run.wait_text(f"answer {name}")
            assert run.quit() == 0
        finally:
            run.close()
    run = Run(work, "--session", "same", script=[], tmp_path=tmp_path)
    try:
        status = run.finish()
    finally:
        run.close()
    assert status == 1
    assert "Session id 'same' matches 2 sessions; give more of the id:" in run.joined()
    assert "same-1" in run.text() and "same-2" in run.text()


def test_retries_say_their_wait_and_when_they_give_up(work, tmp_path):
    agent = Path(os.environ["TAU_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"retry": {"maxRetries": 2, "baseDelayMs": 50}}))
    overloaded = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error: Overloaded"}
    run = Run(work, script=[overloaded] * 3, tmp_path=tmp_path)
    try:
        run.wait_text(FOOTER)
        run.child.send("hello" + ENTER)
        run.wait_text("Retry failed after 2 attempts: 529 overloaded_error: Overloaded")
        screen = run.joined()
        waits = re.findall(r"Retrying \((\d)/2\) in ([\d.]+s): 529 overloaded_error", screen)
        assert [attempt for attempt, _ in waits] == ["1", "2"], run.text()  # each with its wait
        assert run.quit() == 0
    finally:
        run.close()
