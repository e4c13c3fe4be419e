"""Issue 32's audit in a real terminal: sessions of another directory, as pi 1.6 opens them.

``tau --session ID`` where only another directory's sessions match: pi asks ``Fork this session into
current directory? [y/N]`` before its screen starts (in print mode too, when it can ask); ``y`` copies
the session into this directory, anything else leaves with ``Aborted.``. A session whose directory is
gone: continue here, fork here, or cancel. The subprocess side is ``tests/modes/test_cli_session_directories.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import ENTER, TIMEOUT, Tau

from tau_process import run_tau, tau_command, tau_env

pexpect = pytest.importorskip("pexpect")

FOOTER = "faux/faux-1 • off • ctx"


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


def first_session(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A finished session ``abc-1`` of ``a/``; returns ``a``, ``b`` and its file."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    script = tmp_path / "first.json"
    script.write_text(json.dumps([{"text": "re: first"}]))
    done = run_tau(
        ["-p", "--model", "faux/faux-1", "--faux-script", script, "--session-id", "abc-1", "first"], cwd=a
    )
    assert done.returncode == 0, done
    [path] = sessions()
    return a, b, path


def start(tmp_path: Path, cwd: Path, steps: list[dict], *extra: str) -> Tau:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    return Tau(cwd, script, *extra)


def test_an_id_of_another_directory_is_forked_here_when_the_user_says_yes(tmp_path):
    a, b, original = first_session(tmp_path)
    before = original.read_bytes()
    tau = start(tmp_path, b, [{"bash": "pwd"}, {"text": "continued in b"}], "--session", "abc")
    try:
        tau.wait_text("Fork this session into current directory? [y/N]")
        assert f"Session found in different project: {a.resolve()}" in tau.text().replace("\n", "")
        tau.send("y" + ENTER)
        tau.wait_text(FOOTER)
        tau.wait_text("first")  # the copied history
        tau.send("where are we" + ENTER)
        tau.wait_text("continued in b")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    assert original.read_bytes() == before
    [fork] = [path for path in sessions() if path != original]
    header = records(fork)[0]
    assert header["cwd"] == str(b.resolve()) and header["parentSession"] == str(original)
    assert user_texts(fork) == ["first", "where are we"]
    [result] = [r["message"] for r in records(fork) if r.get("message", {}).get("role") == "toolResult"]
    assert result["content"][0]["text"].strip() == str(b.resolve())


def test_no_leaves_with_aborted_and_writes_nothing(tmp_path):
    _, b, original = first_session(tmp_path)
    before = original.read_bytes()
    tau = start(tmp_path, b, [], "--session", "abc")
    try:
        tau.wait_text("Fork this session into current directory? [y/N]")
        tau.send("n" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
        tau.stream.feed(tau.child.before)
        assert "Aborted." in tau.text()
    finally:
        tau.close()
    tau.child.close()
    assert tau.child.exitstatus == 0
    assert sessions() == [original] and original.read_bytes() == before


def test_print_mode_asks_too_when_it_has_a_terminal(tmp_path):
    _, b, original = first_session(tmp_path)
    script = tmp_path / "p.json"
    script.write_text(json.dumps([{"text": "printed from the fork"}]))
    python, *argv = tau_command("-p", "--model", "faux/faux-1", "--faux-script", script, "--session", "abc-1", "more")
    child = pexpect.spawn(
        python,
        argv,
        cwd=str(b),
        env=tau_env(),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    try:
        child.expect_exact("Fork this session into current directory? [y/N] ")
        child.send("yes" + ENTER)
        child.expect_exact("printed from the fork")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    [fork] = [path for path in sessions() if path != original]
    assert user_texts(fork) == ["first", "more"] and user_texts(original) == ["first"]


def test_a_session_whose_directory_is_gone_can_continue_here(tmp_path):
    a, b, original = first_session(tmp_path)
    a.rmdir()
    tau = start(tmp_path, b, [{"bash": "pwd"}, {"text": "running in b"}], "--session", str(original))
    try:
        tau.wait_text("Choose 1-3 [3]:")
        screen = tau.text().replace("\n", "")  # the long paths wrap
        assert f"Session cwd does not exist: {a.resolve()}" in screen
        assert f"2. Fork into {b.resolve()} (new session ID, original kept)" in screen
        tau.send("1" + ENTER)  # Continue in b (asks again next time)
        tau.wait_text(FOOTER)
        tau.send("where" + ENTER)
        tau.wait_text("running in b")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    assert sessions() == [original]  # continued in place, not copied
    header = records(original)[0]
    assert header["cwd"] == str(a.resolve())  # the choice is not stored: asked again next time
    assert user_texts(original) == ["first", "where"]
    [result] = [r["message"] for r in records(original) if r.get("message", {}).get("role") == "toolResult"]
    assert result["content"][0]["text"].strip() == str(b.resolve())


def test_resume_picker_tab_shows_every_directory_and_resumes_there(tmp_path):
    """pi's ``-r``: this directory's sessions first, Tab for every directory's; typing searches; a
    session of another directory resumes in its own directory (its file, its cwd)."""
    a, _b, original = first_session(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    tau = start(tmp_path, empty, [{"bash": "pwd"}, {"text": "resumed in a"}], "-r")
    try:
        tau.wait_text("Resume Session (Current Folder)")
        tau.wait_text("No sessions in current folder. Press Tab to view all.")
        tau.send("\t")
        tau.wait_text("Resume Session (All)")
        assert "○ Current Folder | ◉ All" in tau.text()
        row = next(line for line in tau.text().splitlines() if "first" in line)
        assert " msgs · " in row and "  [/" in row  # its directory, clipped to the width
        tau.send("nothing-like-it")
        tau.wait_text("No sessions found")
        tau.send("\x15" + "fir")  # Ctrl+U clears the search
        tau.wait_text("search: fir")
        tau.wait(lambda: "No sessions found" not in tau.text(), "the match")
        tau.send("\t")  # back to this directory's: still none
        tau.wait_text("No sessions in current folder.")
        tau.send("\t" + ENTER)
        tau.wait_text(FOOTER)
        tau.send("where" + ENTER)
        tau.wait_text("resumed in a")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    assert sessions() == [original]  # resumed, not copied
    assert user_texts(original) == ["first", "where"]
    [result] = [r["message"] for r in records(original) if r.get("message", {}).get("role") == "toolResult"]
    assert result["content"][0]["text"].strip() == str(a.resolve())
