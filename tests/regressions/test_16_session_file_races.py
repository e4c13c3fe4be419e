"""Issue 16, item 7: two new sessions racing for one path, and a migration killed mid-rewrite.

- Two sessions started on the same new path: the second to write got a bare ``[Errno 17] File
  exists``. pi 1.6 creates the file exclusively too (``openSync(file, "wx")``) and fails the same
  bare way; tau now says what happened and that nothing of this session went into the other file.
- The v1 → v3 migration writes a temporary file and renames it over the session; a kill between the
  two left ``.<name>.tau-<pid>.tmp`` behind forever. The next writable open removes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tau.session import SessionFileExistsError, SessionManager
from tau_process import run_tau, tau_env

TS = "2026-11-29T23:42:14.169Z"


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def test_the_second_of_two_sessions_on_one_new_path_gets_a_clear_error(tmp_path):
    path = tmp_path / "new.jsonl"
    first = SessionManager.open(path)
    second = SessionManager.open(path)
    first.append_message(user("from the first"))
    written = path.read_bytes()
    for _ in range(2):  # and again on the next append: nothing goes into the other session's file
        with pytest.raises(SessionFileExistsError) as info:
            second.append_message(user("from the second"))
        assert isinstance(info.value, FileExistsError)
        assert str(info.value) == (
            f"cannot create session file {str(path)!r}: another process created it first (two sessions "
            "started on the same path); nothing of this session was written to it. Start this session "
            "again with another --session path, or without one for a new file"
        )
    assert path.read_bytes() == written
    first.close()


def test_tau_p_on_a_path_taken_meanwhile_exits_with_the_clear_error(tmp_path):
    # An extension creates the session file at session_start, as another `tau --session` would.
    (tmp_path / "ext.py").write_text(
        "def extension(tau):\n"
        "    async def start(event, ctx):\n"
        "        with open(ctx.session_manager.get_session_file(), 'w') as f:\n"
        '            f.write(\'{"type":"session","version":3,"id":"other","timestamp":"'
        + TS
        + '","cwd":"/"}\\n\')\n'
        "    tau.on('session_start', start)\n"
    )
    (tmp_path / "script.json").write_text(json.dumps([{"text": "hello"}]))
    command = ["-p", "--model", "faux/faux-1", "--faux-script", "script.json"]
    command += ["-ne", "-e", "ext.py", "--session", "taken.jsonl", "hi"]
    done = run_tau(command, cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == ""
    assert "cannot create session file" in done.stderr and "another process created it first" in done.stderr
    assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert json.loads((tmp_path / "taken.jsonl").read_text())["id"] == "other"  # untouched


def _v1_file(path: Path) -> Path:
    lines = [
        {"type": "session", "id": "old-session", "timestamp": TS, "cwd": "/tmp/proj"},
        {"type": "message", "timestamp": TS, "message": user("hello")},
        {"type": "message", "timestamp": TS, "message": {"role": "assistant", "content": [], "timestamp": 2}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# Opens the v1 file for writing and is SIGKILLed by itself between writing the temporary and renaming it.
KILLED_MID_MIGRATION = """
import os, signal, sys
os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
from tau.session import SessionManager
SessionManager.open(sys.argv[1])
"""


def test_a_migration_killed_before_its_rename_leaves_no_temporary_for_good(tmp_path):
    path = _v1_file(tmp_path / "old.jsonl")
    before = path.read_bytes()
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_MIGRATION, str(path)], env=tau_env())
    assert child.wait(timeout=120) == -signal.SIGKILL
    assert sorted(os.listdir(tmp_path)) == [f".old.jsonl.tau-{child.pid}.tmp", "old.jsonl"]
    assert path.read_bytes() == before  # the kill lost nothing: the old file is whole

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        alive = tmp_path / f".old.jsonl.tau-{sleeper.pid}.tmp"  # a rewrite that may still be running
        alive.write_text("in progress")
        manager = SessionManager.open(path)
        assert sorted(os.listdir(tmp_path)) == [alive.name, "old.jsonl"]
        assert json.loads(path.read_text().splitlines()[0])["version"] == 3
        assert [entry["message"]["role"] for entry in manager.get_entries()] == ["user", "assistant"]
        manager.close()
    finally:
        sleeper.kill()
        sleeper.wait()
