"""The picker's delete and rename of a session file (``tau.session.file_actions``, pi 1.6's Ctrl+D/Ctrl+R).

Deleting must never touch anything but the chosen session file of the sessions folder: links, files
elsewhere, files that are no sessions, the open session and a session another writer holds are
refused and left as they were. Renaming appends pi's ``session_info`` entry and keeps the file whole.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tau.session.errors import SessionError
from tau.session.file_actions import TRASHED, UNLINKED, delete_session_file, rename_session_file
from tau.session.listing import session_info
from tau.session.manager import SessionManager


def make_session(folder: Path, text: str = "hello") -> Path:
    manager = SessionManager.create(folder.parent, folder)
    manager.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "timestamp": 2,
            "stopReason": "stop",
        }
    )
    path = Path(manager.get_session_file() or "")
    manager.close()
    return path


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    (root / "--work--").mkdir(parents=True)
    return root


def test_delete_unlinks_only_the_chosen_file(sessions):
    keep = make_session(sessions / "--work--", "keep")
    gone = make_session(sessions / "--work--", "gone")
    assert delete_session_file(gone, folders=[sessions], trash=()) == UNLINKED
    assert not gone.exists() and keep.exists()
    assert sorted(p.name for p in sessions.rglob("*")) == ["--work--", keep.name]


def test_delete_moves_to_the_trash_when_a_trash_command_exists(sessions, tmp_path):
    can = tmp_path / "can"
    can.mkdir()
    trash = tmp_path / "trash.py"
    trash.write_text(f"import os, sys\nos.rename(sys.argv[1], os.path.join({str(can)!r}, 'x.jsonl'))\n")
    path = make_session(sessions / "--work--")
    assert delete_session_file(path, folders=[sessions], trash=[sys.executable, str(trash)]) == TRASHED
    assert not path.exists() and (can / "x.jsonl").exists()


def test_a_failing_trash_command_falls_back_to_unlink(sessions, tmp_path):
    path = make_session(sessions / "--work--")
    failing = [sys.executable, "-c", "import sys; sys.exit(1)"]
    assert delete_session_file(path, folders=[sessions], trash=failing) == UNLINKED
    assert not path.exists()


def test_a_custom_sessions_folder_holds_its_files_directly(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    path = make_session(folder)
    assert delete_session_file(path, folders=[folder], trash=()) == UNLINKED


def test_links_other_files_and_files_elsewhere_are_refused_untouched(sessions, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = make_session(elsewhere)
    link = sessions / "--work--" / "link.jsonl"
    link.symlink_to(outside)
    notes = sessions / "--work--" / "notes.jsonl"
    notes.write_text('{"type": "message"}\n')  # no session header
    text = sessions / "--work--" / "readme.txt"
    text.write_text("hi\n")
    deep = sessions / "--work--" / "a" / "b"
    deep.mkdir(parents=True)
    too_deep = make_session(deep)
    cases = {
        link: "is a symbolic link",
        outside: "is not a session file of",
        notes: "does not start with a session header",
        text: "is not a session file of",
        deep: "is not a regular file",
        too_deep: "is not a session file of",
        sessions / "--work--" / "missing.jsonl": "no longer exists",
    }
    for path, reason in cases.items():
        with pytest.raises(SessionError, match=reason):
            delete_session_file(path, folders=[sessions], trash=())
    assert link.is_symlink() and outside.exists() and notes.exists() and text.exists() and too_deep.exists()


def test_a_link_to_the_sessions_folder_is_followed_for_the_folder_not_the_file(sessions, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(sessions)
    path = make_session(sessions / "--work--")
    assert delete_session_file(alias / "--work--" / path.name, folders=[sessions], trash=()) == UNLINKED
    assert not path.exists()


def test_the_open_session_and_one_another_writer_holds_are_refused(sessions):
    mine = make_session(sessions / "--work--")
    with pytest.raises(SessionError, match="Cannot delete the currently active session"):
        delete_session_file(mine, folders=[sessions], open_file=str(mine), trash=())
    held = make_session(sessions / "--work--", "held")
    writer = SessionManager.open(held)  # writable: holds the file's lock as another tau would
    try:
        writer.append_session_info("busy")
        if not any("FLOCK" in line for line in Path("/proc/locks").read_text().splitlines()):
            pytest.skip("this file system takes no flock")
        with pytest.raises(SessionError, match="is open in tau process"):
            delete_session_file(held, folders=[sessions], trash=())
    finally:
        writer.close()
    assert mine.exists() and held.exists()
    assert delete_session_file(held, folders=[sessions], trash=()) == UNLINKED


def test_rename_appends_pis_session_info_entry(sessions):
    path = make_session(sessions / "--work--")
    before = path.read_text(encoding="utf-8").splitlines()
    assert rename_session_file(path, "  release\nnotes ") == "release notes"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:-1] == before  # appended, nothing rewritten
    entry = json.loads(lines[-1])
    assert list(entry) == ["type", "id", "parentId", "timestamp", "name"]  # as pi writes it
    assert entry["type"] == "session_info" and entry["name"] == "release notes"
    assert entry["parentId"] == json.loads(before[-1])["id"]
    info = session_info(path)
    assert info is not None and info.name == "release notes"


def test_rename_refuses_an_empty_name_and_a_missing_file(sessions):
    path = make_session(sessions / "--work--")
    size = path.stat().st_size
    with pytest.raises(SessionError, match="cannot be empty"):
        rename_session_file(path, "  \n ")
    missing = sessions / "--work--" / "missing.jsonl"
    with pytest.raises(SessionError, match="is not a session file"):
        rename_session_file(missing, "x")
    assert path.stat().st_size == size and not missing.exists()
