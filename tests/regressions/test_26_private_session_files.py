"""Issue 26, item 8 (permissions): new session files are 0600 and new session folders 0700.

Session files were written world-readable (0644 under the usual umask) although they hold whole tool
outputs: environment dumps, logs with credentials whenever the reducer falls back to keeping the raw
log. Files tau creates are now 0600 and the folders it creates 0700 (the session folder, the
sessions root, the agent dir; the sol archives already were); files and folders that exist keep
their mode, a rewrite (migration) included.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

from tau.bundled.sol_common import runtime_root
from tau.bundled.sol_common.private_dirs import private_directory
from tau.common.paths import make_private_dirs
from tau.session import SessionManager
from tau_process import tau_command, tau_env


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@contextlib.contextmanager
def _umask(value: int):
    previous = os.umask(value)
    try:
        yield
    finally:
        os.umask(previous)


def test_a_run_under_the_usual_umask_writes_a_private_session(tmp_path):
    script = tmp_path / "script.json"
    # 30,000 lines: ObservationPack archives the output beside the session, under sol/.
    script.write_text('[{"bash": "env; seq 1 30000"}, {"text": "done"}]')
    project = tmp_path / "proj"
    project.mkdir()
    env = tau_env(agent_dir=tmp_path / "agent")
    argv = tau_command("--model", "faux/faux-1", "--faux-script", script, "-p", "go")
    done = subprocess.run(
        ["bash", "-c", 'umask 022; exec "$@"', "bash", *argv], cwd=project, env=env, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    (session,) = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    assert _mode(session) == 0o600
    for folder in (session.parent, session.parent.parent, tmp_path / "agent"):
        assert _mode(folder) == 0o700, folder
    archived = sorted((session.parent / "sol").rglob("*"))
    assert any(path.is_file() for path in archived), "the run archived nothing: the check below is vacuous"
    for path in [session.parent / "sol", *archived]:
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_new_sessions_and_forks_are_0600_in_0700_folders_and_existing_files_keep_their_mode(tmp_path):
    with _umask(0o022):
        sessions = tmp_path / "a" / "b" / "sessions"
        manager = SessionManager.create(str(tmp_path), str(sessions))
        manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
        path = Path(manager.get_session_file())
        manager.close()
        assert _mode(path) == 0o600
        assert [_mode(p) for p in (sessions, sessions.parent, sessions.parent.parent)] == [0o700] * 3

        fork_dir = tmp_path / "forks"
        fork = SessionManager.fork_from(str(path), str(tmp_path), str(fork_dir))
        assert _mode(Path(fork.get_session_file())) == 0o600 and _mode(fork_dir) == 0o700
        fork.close()

        os.chmod(path, 0o644)  # a file the user made readable stays so
        again = SessionManager.open(path)
        again.append_message({"role": "user", "content": "again", "timestamp": 2})
        again.close()
        assert _mode(path) == 0o644


def test_a_migration_rewrite_keeps_the_files_mode(tmp_path):
    header = b'{"type":"session","version":2,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}'
    line = b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}'
    path = tmp_path / "v2.jsonl"
    path.write_bytes(header + b"\n" + line + b"\n")
    os.chmod(path, 0o640)
    SessionManager.open(path).close()
    assert b'"version":3' in path.read_bytes() and _mode(path) == 0o640


def test_the_archives_create_a_missing_session_folder_private(tmp_path):
    with _umask(0o022):
        root = runtime_root(str(tmp_path / "not-yet" / "sessions"), "session-a")
        with private_directory(root, ("evidence-preserving-reducer",), create=True):
            pass
    assert _mode(tmp_path / "not-yet") == 0o700 and _mode(tmp_path / "not-yet" / "sessions") == 0o700


def test_existing_folders_keep_their_mode(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    with _umask(0o022):
        make_private_dirs(shared / "mine")
    assert (_mode(shared), _mode(shared / "mine")) == (0o755, 0o700)
