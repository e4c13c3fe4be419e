"""The advisory write lock: one tau writer per session file, readers always welcome."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tau.session import SessionLockedError, SessionManager, SessionWriteError

SRC = Path(__file__).resolve().parents[2] / "src"


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def writer_process(path: Path) -> subprocess.Popen:
    """Another tau process that opens ``path`` for writing, says "ready", and waits for stdin to close."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        from tau.session import SessionManager
        manager = SessionManager.open({str(path)!r})
        manager.append_message({{"role": "user", "content": "from the other process", "timestamp": 2}})
        print("ready", flush=True)
        sys.stdin.read()
        manager.append_message({{"role": "user", "content": "after", "timestamp": 3}})
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "ready"
    return process


@pytest.fixture
def session_file(tmp_path):
    manager = SessionManager.open(tmp_path / "s.jsonl")
    manager.append_message(user("hi"))
    manager.close()
    return tmp_path / "s.jsonl"


def test_second_writer_gets_a_clear_error_naming_the_pid(session_file):
    other = writer_process(session_file)
    try:
        with pytest.raises(SessionLockedError) as caught:
            SessionManager.open(session_file)
        assert caught.value.holder_pid == other.pid
        assert f"tau process {other.pid}" in str(caught.value) and "read-only" in str(caught.value)
        assert str(session_file) in str(caught.value)
    finally:
        other.communicate("")
    lines = session_file.read_text().splitlines()
    assert len(lines) == 4  # header, ours, and the other process's two lines, none interleaved


def test_reader_opens_a_file_being_written(session_file):
    other = writer_process(session_file)
    try:
        reader = SessionManager.open(session_file, read_only=True)
        texts = [e["message"]["content"] for e in reader.get_entries()]
        assert texts[-1] == "from the other process"
    finally:
        other.communicate("")


def test_lock_is_released_on_close_and_when_the_holder_dies(session_file):
    first = SessionManager.open(session_file)
    with pytest.raises(SessionLockedError):
        SessionManager.open(session_file)
    first.close()
    second = SessionManager.open(session_file)
    second.close()
    other = writer_process(session_file)
    other.kill()
    other.wait()
    third = SessionManager.open(session_file)  # a killed holder leaves no stale lock
    third.append_message(user("still works"))
    third.close()


def test_new_session_file_is_locked_from_its_creation(tmp_path):
    manager = SessionManager.create("/tmp/proj", tmp_path)
    manager.append_message(user("hi"))
    with pytest.raises(SessionLockedError):
        SessionManager.open(manager.get_session_file())
    with SessionManager.open(manager.get_session_file(), read_only=True) as reader:
        assert len(reader.get_entries()) == 1
    manager.close()


def test_context_manager_releases(session_file):
    with SessionManager.open(session_file) as manager:
        manager.append_message(user("x"))
    SessionManager.open(session_file).close()


def test_failed_write_leaves_no_partial_line_and_keeps_the_entry_until_it_can_be_written(
    session_file, monkeypatch
):
    manager = SessionManager.open(session_file)
    leaf = manager.get_leaf_id()
    before = session_file.read_bytes()
    real_write = os.write

    def half_then_fail(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_fail)
    with pytest.raises(SessionWriteError) as info:
        manager.append_message(user("kept"))
    assert str(info.value) == (
        f"cannot write session file {str(session_file)!r}: No space left on device. The session is no "
        "longer being saved: 1 entry is kept in memory and written once the file can be written again "
        "(free disk space or make the file writable)."
    )
    assert session_file.read_bytes() == before  # no partial line
    kept = manager.get_leaf_id()
    assert manager.get_entry(kept)["parentId"] == leaf and manager.unsaved_count == 1
    monkeypatch.setattr(os, "write", real_write)
    manager.append_message(user("next"))
    assert manager.unsaved_count == 0
    manager.close()
    reread = SessionManager.open(session_file, read_only=True)
    assert [e["parentId"] for e in reread.get_entries()] == [None, leaf, kept]
    assert [e["message"]["content"][0]["text"] for e in reread.get_entries()[1:]] == ["kept", "next"]
    assert reread.problems == []


def test_a_file_that_cannot_be_written_opens_and_fails_on_append(session_file, monkeypatch):
    from tau.session import lock

    def refuse(cls, path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(lock.SessionWriter, "open", classmethod(refuse))
    manager = SessionManager.open(session_file)  # pi opens it too, and fails only on append
    assert len(manager.get_entries()) == 1
    with pytest.raises(SessionWriteError, match=r"Permission denied\. The session is no longer being saved"):
        manager.append_message(user("no"))
    assert len(manager.get_entries()) == 2 and manager.unsaved_count == 1
    with pytest.raises(SessionWriteError, match="1 entry is kept in memory"):
        manager.save_unsaved()
    with pytest.raises(SessionWriteError, match="2 entries are kept in memory"):
        manager.append_message(user("again"))
    with pytest.raises(
        SessionWriteError, match=r"cannot start a new session: session file .* still cannot be"
    ):
        manager.new_session()
    monkeypatch.undo()
    manager.save_unsaved()
    assert manager.unsaved_count == 0
    assert len(SessionManager.open(session_file, read_only=True).get_entries()) == 3
