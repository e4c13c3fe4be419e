"""Finding sessions: continue the most recent, find by id, list one project or all of them."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from tau.session import SessionInfo, SessionManager


def make(
    cwd: str, *texts: str, session_dir=None, name: str | None = None, ts: int = 1_700_000_000_000
) -> str:
    manager = SessionManager.create(cwd, session_dir)
    for offset, text in enumerate(texts):
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts + offset}
        )
        manager.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"re {text}"}],
                "provider": "p",
                "model": "m",
                "timestamp": ts + offset,
            }
        )
    if name is not None:
        manager.append_session_info(name)
    manager.close()
    return manager.get_session_file()


def test_continue_recent_opens_the_newest_session_of_the_cwd():
    older = make("/tmp/a", "one")
    newer = make("/tmp/a", "two")
    os.utime(older, (1, 1))
    manager = SessionManager.continue_recent("/tmp/a")
    assert manager.get_session_file() == newer
    assert manager.get_entries()[-1]["message"]["content"][0]["text"] == "re two"
    manager.close()
    fresh = SessionManager.continue_recent("/tmp/nothing-here")
    assert fresh.get_entries() == [] and not Path(fresh.get_session_file()).exists()


def test_continue_recent_skips_files_without_a_header_and_filters_cwd_in_custom_dirs(tmp_path):
    mine = make("/tmp/a", "mine", session_dir=tmp_path)
    theirs = make("/tmp/b", "theirs", session_dir=tmp_path)
    junk = tmp_path / "zzz.jsonl"
    junk.write_text("not a session\n")
    os.utime(mine, (10, 10))
    os.utime(theirs, (20, 20))
    manager = SessionManager.continue_recent("/tmp/a", tmp_path)
    assert manager.get_session_file() == mine
    manager.close()


def test_find_by_id():
    path = make("/tmp/a", "x")
    session_id = SessionManager.open(path, read_only=True).get_session_id()
    assert SessionManager.find_by_id("/tmp/a", session_id) == path
    assert SessionManager.find_by_id("/tmp/a", "nope") is None
    assert SessionManager.find_by_id("/tmp/other", session_id) is None


def test_list_gives_session_infos_most_recent_first():
    first = make("/tmp/a", "hello there", "second question", name="Named\nsession", ts=1_700_000_000_000)
    second = make("/tmp/a", "later", ts=1_800_000_000_000)
    make("/tmp/b", "other project")
    progress = []
    infos = SessionManager.list("/tmp/a", on_progress=lambda done, total: progress.append((done, total)))
    assert [info.path for info in infos] == [second, first]
    info = infos[1]
    assert isinstance(info, SessionInfo)
    assert info.cwd == "/tmp/a" and info.name == "Named session" and info.parent_session_path is None
    assert info.message_count == 4 and info.first_message == "hello there"
    assert info.all_messages_text == "hello there re hello there second question re second question"
    assert info.modified == datetime.fromtimestamp(1_700_000_000.001, tz=UTC)
    assert progress == [(1, 2), (2, 2)]
    everything = SessionManager.list_all()
    assert len(everything) == 3 and everything[0].path == second


def test_list_of_a_session_without_text_says_no_messages(tmp_path):
    manager = SessionManager.create("/tmp/a", tmp_path)
    manager.append_message({"role": "user", "content": "", "timestamp": 5})
    manager.close()
    (info,) = SessionManager.list("/tmp/a", tmp_path)
    assert info.first_message == "(no messages)" and info.message_count == 1 and info.name is None
