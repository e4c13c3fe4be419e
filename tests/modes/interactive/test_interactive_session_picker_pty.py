"""The picker's sort, delete and rename keys in a real terminal, as pi 1.6's (issue 32's gap).

``/resume``: Ctrl+S cycles Threaded / Recent / Fuzzy, Ctrl+R names a session (pi's ``session_info``
entry in that file), Ctrl+D asks, then moves the file to the trash (a ``trash`` command on ``PATH``, as
pi) and the list no longer shows it. ``tau -r`` offers no rename, as pi's startup picker.
Waits are for screen content, never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_interactive_pi_terminal_pty import FOOTER, print_run, quit_tau, session_files, start, user_texts
from test_interactive_pty import COLUMNS, ENTER, ESC, ROWS, TIMEOUT, Tau, Terminal

from tau.session.file_actions import rename_session_file

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

CTRL_S, CTRL_D, CTRL_R, DOWN = "\x13", "\x04", "\x12", "\x1b[B"


def fake_trash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``trash`` command first on ``PATH`` that moves its argument into ``tmp_path/can``."""
    can, bin_dir = tmp_path / "can", tmp_path / "bin"
    can.mkdir()
    bin_dir.mkdir()
    trash = bin_dir / "trash"
    trash.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        f"os.rename(sys.argv[-1], os.path.join({str(can)!r}, os.path.basename(sys.argv[-1])))\n"
    )
    trash.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return can


def start_in(tmp_path: Path, cwd: Path, *extra: str) -> Tau:
    script = tmp_path / "script.json"
    script.write_text("[]")
    return Tau(cwd, script, *extra)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_resume_sorts_renames_and_deletes_as_pi(tmp_path, monkeypatch):
    can = fake_trash(tmp_path, monkeypatch)
    print_run(tmp_path, "older task")
    print_run(tmp_path, "newer task")
    [older] = [path for path in session_files() if user_texts(path) == ["older task"]]
    [newer] = [path for path in session_files() if user_texts(path) == ["newer task"]]
    tau = start(tmp_path, [])
    try:
        tau.wait_text(FOOTER)
        tau.send("/resume" + ENTER)
        tau.wait_text("Sort: Threaded")
        assert "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename" in tau.text()
        tau.send(CTRL_S)
        tau.wait_text("Sort: Recent")
        tau.send(CTRL_S)
        tau.wait_text("Sort: Fuzzy")
        tau.send(CTRL_R)  # the newest, selected first
        tau.wait_text("Rename Session")
        tau.send("release plan" + ENTER)
        tau.wait_text("release plan  (")
        assert records(newer)[-1]["type"] == "session_info" and records(newer)[-1]["name"] == "release plan"
        tau.send(DOWN + CTRL_D)
        tau.wait_text("Delete session? enter confirm · escape/ctrl+c cancel")
        tau.send(ENTER)
        tau.wait_text("Session moved to trash")
        tau.wait(lambda: "older task" not in tau.text(), "the deleted session to leave the list")
        assert session_files() == [newer] and (can / older.name).exists()
        tau.send(ESC)
        tau.wait(lambda: "Resume Session" not in tau.text(), "the picker to close")
        quit_tau(tau)
    finally:
        tau.close()
    assert user_texts(newer) == ["newer task"]  # named, not resumed: its conversation is as it was


def test_the_startup_picker_offers_no_rename_as_pis(tmp_path):
    print_run(tmp_path, "a task")
    tau = start(tmp_path, [], "-r")
    try:
        tau.wait_text("ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)")
        assert "rename" not in tau.text()
        tau.send(CTRL_R + "x")  # Ctrl+R does nothing; the next key still searches
        tau.wait_text("search: x")
        assert "Rename Session" not in tau.text()
        tau.send(ESC)
        tau.child.expect(pexpect.EOF)
    finally:
        tau.close()


# -- against real pi 1.6 (opt-in: PI_BIN, as tests/regressions/data/pi22/README.md) -----------------

FAUX_EXT = Path(__file__).parents[2] / "regressions" / "data" / "pi22" / "faux-ext.ts"
PI_ROW = re.compile(r"^([› ] )(.*?)\s{2,}(\d+) (?:now|\d+(?:m|h|d|w|mo|y))$")
TAU_ROW = re.compile(r"^([› ] )(.*?)  \((\d+) msgs · [^)]*\)")


def pi_bin() -> str:
    found = os.environ.get("PI_BIN")
    if not found:
        pytest.skip("set PI_BIN to real pi 1.6 (tests/regressions/data/pi22/README.md)")
    return found


def pi_env(agent: Path, home: Path, pi: str) -> dict[str, str]:
    return dict(
        os.environ,
        PATH=f"{Path(pi).parent}{os.pathsep}{os.environ['PATH']}",
        PI_CODING_AGENT_DIR=str(agent),
        HOME=str(home),
        TERM="xterm-256color",
    )


class Pi(Tau):
    """Real pi on a pty, its screen rendered as tau's."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str) -> None:
        self.screen = Terminal(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        pi = env["PI_BIN_PATH"]
        argv = ["--offline", "-ne", "-e", str(FAUX_EXT), "--model", "faux/faux-1", *args]
        self.child = pexpect.spawn(pi, argv, cwd=str(cwd), env=env, dimensions=(ROWS, COLUMNS))
        self.screen.child = self.child


def picker_rows(term: Tau, row: re.Pattern[str]) -> list[tuple[str, str, str]]:
    """(cursor, tree prefix and label, message count) of each session row on the screen."""
    found = (row.match(line) for line in term.text().splitlines())
    return [(m.group(1), m.group(2).rstrip(), m.group(3)) for m in found if m]


def test_the_picker_against_real_pi(tmp_path):
    """The same sessions (made by pi, a fork among them) in pi's and tau's ``-r`` picker: the same
    hints, rows, tree and counts in each sort; then a name tau gave is the one pi shows."""
    pi = pi_bin()
    # one agent dir for both, so the fork's parentSession (an absolute path) is the same file for each
    agent, home, work = Path(os.environ["TAU_AGENT_DIR"]), tmp_path / "pi-home", (tmp_path / "work").resolve()
    for folder in (agent, home, work):
        folder.mkdir(parents=True, exist_ok=True)
    env = pi_env(agent, home, pi) | {"PI_BIN_PATH": pi}
    base = [pi, "--offline", "-ne", "-e", str(FAUX_EXT), "--model", "faux/faux-1"]
    for prompt in ("alpha one", "beta two", "gamma three"):
        done = subprocess.run(
            [*base, "-p", prompt], cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done
    folder = next((agent / "sessions").iterdir())
    alpha = next(p for p in folder.iterdir() if "alpha one" in p.read_text(encoding="utf-8"))
    alpha_id = records(alpha)[0]["id"]
    fork = subprocess.run(
        [*base, "--fork", alpha_id, "-p", "a fork"], cwd=work, env=env, capture_output=True, timeout=120
    )
    assert fork.returncode == 0, fork

    def screens(term: Tau, row: re.Pattern[str]) -> dict[str, object]:
        seen: dict[str, object] = {}
        try:
            for label in ("Threaded", "Recent", "Fuzzy"):
                term.wait_text(f"Sort: {label}")
                term.wait(lambda: len(picker_rows(term, row)) == 4, "four sessions")
                seen[label] = picker_rows(term, row)
                term.send(CTRL_S)
            lines = term.text().splitlines()
            seen["hints"] = [line.strip() for line in lines if "tab scope" in line or "ctrl+s sort" in line]
            term.send(CTRL_D)
            term.wait_text("Delete session?")
            seen["ask"] = next(line.strip() for line in term.text().splitlines() if "Delete session?" in line)
            term.send(ESC)
            term.wait_text("ctrl+s sort")
            term.send(ESC)
            term.child.expect(pexpect.EOF, timeout=TIMEOUT)
        finally:
            term.close()
        return seen

    theirs = screens(Pi(work, env, "-r"), PI_ROW)
    ours = screens(start_in(tmp_path, work, "-r"), TAU_ROW)
    fork_row = theirs["Threaded"][1][1]  # the fork under alpha: the comparison is not vacuous
    assert fork_row.startswith("   └─ ") and len(theirs["hints"]) == 2
    assert ours == theirs

    rename_session_file(alpha, "named by tau")
    named = Pi(work, env, "-r")
    try:
        named.wait_text("Sort: Threaded")
        named.send("\x0e")  # Ctrl+N: named sessions only
        named.wait_text("Name: Named")
        named.wait(
            lambda: [r[1] for r in picker_rows(named, PI_ROW)] == ["named by tau"], "pi to show tau's name"
        )
    finally:
        named.close()


def test_renaming_the_open_session_names_it_in_place(tmp_path):
    """The open session is listed (pi's picker lists it); Ctrl+R names it through the running
    session, whose file this process holds, and ``/name`` says the new name at once."""
    tau = start(tmp_path, [{"text": "an answer"}])
    try:
        tau.wait_text(FOOTER)
        tau.send("hello" + ENTER)
        tau.wait_text("an answer")
        tau.send("/resume" + ENTER)
        tau.wait_text("Sort: Threaded")
        tau.send(CTRL_D)
        tau.wait_text("Cannot delete the currently active session")
        tau.send(CTRL_R)
        tau.wait_text("Rename Session")
        tau.send("my work" + ENTER)
        tau.wait_text("my work  (")
        assert "Failed to rename" not in tau.text()
        tau.send(ESC)
        tau.wait(lambda: "Resume Session" not in tau.text(), "the picker to close")
        tau.send("/name" + ENTER)
        tau.wait_text("Session name: my work")
        quit_tau(tau)
    finally:
        tau.close()
    [path] = session_files()
    assert records(path)[-1]["type"] == "session_info" and records(path)[-1]["name"] == "my work"
