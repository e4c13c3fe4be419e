"""Issue 2 (advisory lock, read-only opening): the commands on a file another tau is writing.

While a writer holds the session's lock, ``tau session context|info|check`` still read it (read-only,
the bytes unchanged), and a second ``tau`` that would append to it (``--session FILE -p``) stops
with a clear error that names the holder, and appends nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tau.session.manager import SessionManager
from tau_process import run_tau


def _tau(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_tau(args, cwd=cwd, env=env_extra, timeout=60)


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_inspection_reads_and_a_second_writer_is_refused_while_the_lock_is_held(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    writer = SessionManager.create(work, tmp_path / "sessions")
    writer.append_message(_user("held open"))
    path = Path(writer.get_session_file())
    try:
        before = path.read_bytes()
        context = _tau(["session", "context", str(path)], work)
        assert context.returncode == 0, context.stderr
        assert "held open" in json.dumps(json.loads(context.stdout))
        info = _tau(["session", "info", str(path)], work)
        assert info.returncode == 0, info.stderr
        check = _tau(["session", "check", str(path)], work)
        assert check.returncode == 0, check.stdout + check.stderr

        script = tmp_path / "script.json"
        script.write_text(json.dumps([{"text": "must not be written"}]))
        second = _tau(
            ["--model", "faux/faux-1", "--session", str(path), "-p", "hi"],
            work,
            {"TAU_FAUX_SCRIPT": str(script)},
        )
        assert second.returncode != 0
        assert str(os.getpid()) in second.stderr, second.stderr  # names the holder
        assert "Traceback" not in second.stderr, second.stderr
        assert path.read_bytes() == before
    finally:
        writer.close()


def test_a_file_that_is_not_a_session_is_refused_in_one_line_by_every_mode(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello world\n", encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "never"}]))
    for mode in (["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"]):
        done = _tau(
            ["--model", "faux/faux-1", "--session", str(notes), *mode],
            tmp_path,
            {"TAU_FAUX_SCRIPT": str(script)},
        )
        assert done.returncode == 1, (mode, done.stderr)
        assert "is not a session file" in done.stderr, (mode, done.stderr)
        assert "Traceback" not in done.stderr, (mode, done.stderr)
    assert notes.read_text(encoding="utf-8") == "hello world\n"
