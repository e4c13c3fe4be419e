"""Issue 26, item 2: a named pipe (or a link) where tau keeps one of its files never blocks tau.

An ObservationPack object replaced by a named pipe made ``tau --session F -p go`` block for good in
``open()`` (and ignore the SIGTERM of ``timeout``). Every file tau opens from its archives and
session folders is now opened with ``O_NONBLOCK | O_NOFOLLOW`` and checked to be a regular file:
an archived object that is not one counts as missing (stored again, as a deleted one is), a
session file that is not one is refused with a clear error, a listing skips it. Opens that would
block run in a helper thread here, so a regression fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tau.bundled.obspack.store import ObservationStore, StoreError
from tau.bundled.reducer.archive import Archive
from tau.bundled.sol_common import runtime_root
from tau.common.regular_files import NotRegularFileError, open_regular, read_regular
from tau.session import SessionManager
from tau.session.lock import SessionWriter
from tau.session.records import LineReader
from tau_process import tau_command, tau_env

BOUND = 60.0
OBS = "obs_" + "d" * 24


def _within(fifo: Path, action):
    """Run ``action`` in a thread; if it is still blocked after BOUND seconds, release it (by opening
    the pipe's other end) and fail."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, flags))
        thread.join(5)
        pytest.fail(f"blocked on the named pipe {fifo} for {BOUND} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _tau(tmp_path: Path, *args: str, script: list | None = None) -> subprocess.CompletedProcess:
    env = tau_env(agent_dir=tmp_path / "agent")
    argv = tau_command(*args)
    if script is not None:
        script_file = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
        script_file.write_text(json.dumps(script))
        argv[3:3] = ["--model", "faux/faux-1", "--faux-script", str(script_file)]
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return subprocess.run(
        argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=BOUND * 2
    )


# -- end to end: the reproduction ---------------------------------------------------------


def test_a_session_whose_archived_object_is_a_named_pipe_resumes_and_the_object_is_stored_again(tmp_path):
    first = _tau(tmp_path, "-p", "go", script=[{"bash": "seq 1 30000"}, {"text": "done"}])
    assert first.returncode == 0, first.stderr
    (session,) = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    (obj,) = (tmp_path / "agent" / "sessions").glob("*/sol/*/observation-pack/objects/*.txt")
    original = obj.read_bytes()
    obj.unlink()
    os.mkfifo(obj)
    again = _tau(tmp_path, "--session", str(session), "-p", "go", script=[{"text": "again"}])
    assert (again.returncode, again.stdout, again.stderr) == (0, b"again\n", b"")
    assert obj.is_file() and obj.read_bytes() == original


# -- the archives ---------------------------------------------------------------------------------


def _store(tmp_path: Path) -> tuple[ObservationStore, bytes, str]:
    store = ObservationStore(runtime_root(str(tmp_path), "session-a"))
    data = b"the original tool output\n" * 100
    return store, data, hashlib.sha256(data).hexdigest()


def test_an_object_that_is_a_named_pipe_counts_as_missing_and_is_stored_again(tmp_path):
    store, data, digest = _store(tmp_path)
    store.ensure_stored(OBS, data, digest)
    path = Path(store.object_path(digest))
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(FileNotFoundError, match="is a named pipe, not a regular file"):
        _within(path, lambda: store.open_object(OBS, digest).__enter__())
    _within(path, lambda: store.ensure_stored(OBS, data, digest))
    with store.open_object(OBS, digest) as (fd, size):
        assert os.pread(fd, size, 0) == data


def test_a_link_in_an_objects_place_is_still_refused_not_replaced(tmp_path):
    store, data, digest = _store(tmp_path)
    store.ensure_stored(OBS, data, digest)
    path = Path(store.object_path(digest))
    path.unlink()
    os.symlink(tmp_path / "elsewhere", path)
    with pytest.raises(StoreError, match="not a regular file"):
        store.ensure_stored(OBS, data, digest)
    assert path.is_symlink()


def test_a_ledger_that_is_a_named_pipe_is_refused_at_once(tmp_path):
    store, data, digest = _store(tmp_path)
    store.ensure_stored(OBS, data, digest)
    ledger = Path(store.ledger_path)
    os.mkfifo(ledger)
    with pytest.raises(NotRegularFileError, match="is a named pipe"):
        _within(ledger, store.read_ledger)
    with pytest.raises(NotRegularFileError, match="is a named pipe"):
        _within(ledger, lambda: store.append_ledger(b"{}\n"))


def test_a_reducer_log_that_is_a_named_pipe_counts_as_missing_and_is_archived_again(tmp_path):
    archive = Archive(runtime_root(str(tmp_path), "session-a"))
    stored = archive.store("a long log\n" * 50)
    path = Path(stored.path)
    path.unlink()
    os.mkfifo(path)
    again = _within(path, lambda: archive.store("a long log\n" * 50))
    assert again == stored and path.read_text() == "a long log\n" * 50


# -- the session folders --------------------------------------------------------------------------


def test_a_session_file_that_is_a_named_pipe_is_refused_with_a_clear_error(tmp_path):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    done = _tau(tmp_path, "--session", str(fifo), "-p", "go", script=[{"text": "never"}])
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode() == (
        f"Error: {str(fifo)!r} is a named pipe, not a session file; tau does not open it: pass the path of a "
        ".jsonl session file\n"
    )


def test_the_store_never_opens_a_session_file_through_a_link_but_a_named_link_is_resolved_first(tmp_path):
    first = _tau(tmp_path, "-p", "go", script=[{"text": "one"}])
    assert first.returncode == 0, first.stderr
    (session,) = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    link = session.with_name("2099-01-01T00-00-00-000Z_link.jsonl")
    link.symlink_to(session)
    with pytest.raises(ValueError, match=r"is a symbolic link .* never through a link"):
        SessionManager.open(link, read_only=True)
    # A link found in a session folder is no session; one the user names is resolved by the CLI.
    assert [str(info.path) for info in SessionManager.list(str(tmp_path / "proj"), str(session.parent))] == [
        str(session)
    ]
    named = _tau(tmp_path, "--session", str(link), "-p", "go", script=[{"text": "two"}])
    assert (named.returncode, named.stdout) == (0, b"two\n"), named.stderr


def test_the_session_store_opens_never_block_on_a_named_pipe(tmp_path):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    for action in (lambda: LineReader(fifo), lambda: SessionWriter.open(fifo), lambda: read_regular(fifo)):
        with pytest.raises(NotRegularFileError, match="is a named pipe"):
            _within(fifo, action)


def test_session_list_skips_a_named_pipe_among_the_sessions(tmp_path):
    first = _tau(tmp_path, "-p", "go", script=[{"text": "one"}])
    assert first.returncode == 0, first.stderr
    (session,) = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    os.mkfifo(session.with_name("2099-01-01T00-00-00-000Z_planted.jsonl"))
    listed = _tau(tmp_path, "session", "list")
    assert listed.returncode == 0, listed.stderr
    assert session.name.split("_", 1)[1].removesuffix(".jsonl")[:8] in listed.stdout.decode()


@pytest.mark.parametrize("kind", ["fifo", "link", "directory"])
def test_open_regular_refuses_what_is_not_a_regular_file_and_names_it(tmp_path, kind):
    path = tmp_path / "thing"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        (tmp_path / "target").write_text("x")
        path.symlink_to(tmp_path / "target")
    else:
        path.mkdir()
    expected = {"fifo": "a named pipe", "link": "a symbolic link", "directory": "a directory"}[kind]
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND):
        with pytest.raises(NotRegularFileError, match=f"^{path} is {expected}, not a regular file"):
            _within(path, lambda flags=flags: open_regular(path, flags))
