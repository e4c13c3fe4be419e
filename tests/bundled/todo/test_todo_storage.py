"""Write verification against real session files: every failure mode, and the incremental cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tau.bundled.todo.storage import NoConversation, SessionFile, StorageUnavailable, same_json
from tau.common import jsjson
from tau.session import SessionManager

STATE = {"schemaVersion": 1, "revision": 1, "tasks": []}


def user(text="hi"):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text="ok"):
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 2,
    }


@pytest.fixture
def session(tmp_path):
    manager = SessionManager.create("/tmp/proj", tmp_path)
    manager.append_model_change("faux", "faux-1")
    manager.append_message(user())
    manager.append_message(assistant())
    yield manager
    manager.close()


def path_of(session) -> Path:
    return Path(session.get_session_file())


def check(verifier, session):
    verifier.check_branch(session.get_header(), session.get_branch())


def append_state(session, data=STATE):
    entry_id = session.append_custom_entry("pi-todo:state", data)
    return session.get_entry(entry_id)


def test_a_committed_branch_and_entry_verify(session):
    verifier = SessionFile(path_of(session))
    check(verifier, session)
    entry = append_state(session)
    verifier.check_entry(entry)
    assert verifier.committed([entry]) == [True]


def test_without_a_conversation_the_edit_is_refused_before_anything(tmp_path):
    manager = SessionManager.create("/tmp/proj", tmp_path)
    manager.append_model_change("faux", "faux-1")
    verifier = SessionFile(manager.get_session_file())
    with pytest.raises(NoConversation) as caught:
        check(verifier, manager)
    assert caught.value.message == "send a message first: file-backed todo needs a persisted conversation"
    assert caught.value.code == "no_conversation"
    assert verifier.bytes_read == 0
    manager.close()


def test_a_missing_file_is_unavailable(session):
    os.unlink(path_of(session))
    with pytest.raises(StorageUnavailable) as caught:
        check(SessionFile(path_of(session)), session)
    assert caught.value.message.startswith("todo storage unavailable: the session file ")
    assert caught.value.message.endswith(" is missing; repair and reload")


def test_a_truncated_last_line_is_not_committed(session):
    entry = append_state(session)
    path = path_of(session)
    data = path.read_bytes()
    path.write_bytes(data[:-1])  # the LF is gone: the line is incomplete
    verifier = SessionFile(path)
    with pytest.raises(StorageUnavailable) as caught:
        verifier.check_entry(entry)
    assert "is not a complete line" in caught.value.reason
    path.write_bytes(data[:-10])  # cut inside the record
    with pytest.raises(StorageUnavailable):
        SessionFile(path).check_entry(entry)


def test_altered_same_id_data_is_refused(session):
    entry = append_state(session)
    path = path_of(session)
    path.write_bytes(path.read_bytes().replace(b'"revision":1', b'"revision":2'))
    with pytest.raises(StorageUnavailable) as caught:
        SessionFile(path).check_entry(entry)
    assert "differs from its line" in caught.value.reason


def test_true_is_not_one_and_key_order_does_not_matter():
    assert not same_json({"a": True}, {"a": 1})
    assert same_json({"a": 1, "b": [1.0]}, {"b": [1], "a": 1})
    assert not same_json([1], [1, 2])
    assert not same_json({"a": None}, {"b": None})


def test_another_writers_formatting_is_compared_after_parsing(session):
    entry = append_state(session, {"schemaVersion": 1, "revision": 1, "tasks": [], "note": "é"})
    path = path_of(session)
    lines = path.read_bytes().split(b"\n")
    value = jsjson.loads(lines[-2])
    reformatted = (
        "{"
        + ", ".join(f"{jsjson.dumps_str(k)}: {jsjson.dumps_str(v)}" for k, v in reversed(value.items()))
        + "}"
    )
    lines[-2] = reformatted.encode().replace("é".encode(), b"\\u00e9")
    path.write_bytes(b"\n".join(lines))
    SessionFile(path).check_entry(entry)


def test_crlf_line_ends_are_accepted(session):
    entry = append_state(session)
    path = path_of(session)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    verifier = SessionFile(path)
    check(verifier, session)
    verifier.check_entry(entry)


def test_a_missing_ancestor_is_refused(session):
    path = path_of(session)
    lines = path.read_bytes().split(b"\n")
    user_line = next(n for n, line in enumerate(lines) if b'"role":"user"' in line)
    del lines[user_line]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(StorageUnavailable) as caught:
        check(SessionFile(path), session)
    assert "uncommitted; reopen the session" in caught.value.reason


def test_an_in_memory_ghost_ancestor_is_refused(tmp_path):
    """A failed write that the host kept in memory: the branch names an entry the file lacks."""
    manager = SessionManager.create("/tmp/proj", tmp_path)
    manager.append_message(user())
    ghost_branch = [
        *manager.get_branch(),
        {
            "type": "custom",
            "customType": "x",
            "id": "deadbeef",
            "parentId": manager.get_leaf_id(),
            "timestamp": "2026-01-01T00:00:00.000Z",
        },
    ]
    with pytest.raises(StorageUnavailable):
        SessionFile(manager.get_session_file()).check_branch(manager.get_header(), ghost_branch)
    manager.close()


def test_a_disconnected_branch_is_refused(session):
    branch = session.get_branch()[1:]  # starts at an entry whose parent is not on the path
    with pytest.raises(StorageUnavailable) as caught:
        SessionFile(path_of(session)).check_branch(session.get_header(), branch)
    assert "disconnected" in caught.value.reason


def test_a_different_header_is_refused(session):
    header = {**session.get_header(), "id": "another"}
    with pytest.raises(StorageUnavailable) as caught:
        SessionFile(path_of(session)).check_branch(header, session.get_branch())
    assert "session header" in caught.value.reason


def test_a_file_replaced_under_us_is_verified_again(session, tmp_path):
    verifier = SessionFile(path_of(session))
    check(verifier, session)
    entry = append_state(session)
    verifier.check_entry(entry)
    path = path_of(session)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes().replace(b'"revision":1', b'"revision":7'))
    os.replace(copy, path)  # same length, same name, another inode
    with pytest.raises(StorageUnavailable):
        verifier.check_entry(entry)


def test_the_cache_reads_only_new_bytes_while_the_identity_holds(session):
    path = path_of(session)
    verifier = SessionFile(path)
    check(verifier, session)
    first = verifier.bytes_read
    assert first >= path.stat().st_size
    before = path.stat().st_size
    entry = append_state(session)
    verifier.bytes_read = 0
    verifier.check_entry(entry)
    added = path.stat().st_size - before
    # the new line, the 4 KiB tail hash before the old length (whole small file here), and one line read back
    assert verifier.bytes_read <= added + min(before, 4096) + min(path.stat().st_size, 4096) + added
    verifier.bytes_read = 0
    check(verifier, session)  # nothing new: only the tail is hashed, entries are not compared again
    assert verifier.bytes_read == min(path.stat().st_size, 4096)


def test_an_unchanged_identity_trusts_the_cached_prefix(session):
    """Decisions: while identity, length and the last 4 KiB match, the older bytes are not re-read."""
    for n in range(60):
        session.append_message(user(f"padding message {n} " + "x" * 100))
    path = path_of(session)
    verifier = SessionFile(path)
    check(verifier, session)
    data = bytearray(path.read_bytes())
    first_user = data.index(b'"text":"hi"')
    data[first_user + 8] = ord("H")  # early bytes change in place: same inode, length and tail
    with open(path, "r+b") as handle:
        handle.write(data)
    check(verifier, session)  # the cache still vouches for the prefix
    verifier.forget()
    with pytest.raises(StorageUnavailable):
        check(verifier, session)  # an explicit re-verification sees it


def test_a_change_in_the_last_4_kib_drops_the_cache(session):
    path = path_of(session)
    verifier = SessionFile(path)
    check(verifier, session)
    data = path.read_bytes().replace(b'"text":"ok"', b'"text":"OK"')
    with open(path, "r+b") as handle:
        handle.write(data)
    with pytest.raises(StorageUnavailable):
        check(verifier, session)


def test_a_shorter_file_drops_the_cache(session):
    path = path_of(session)
    verifier = SessionFile(path)
    check(verifier, session)
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.truncate(len(data) - 5)
    with pytest.raises(StorageUnavailable):
        check(verifier, session)


def test_reads_are_bounded_chunks(session):
    for n in range(30):
        session.append_message(user(f"message {n} " + "y" * 300))
    verifier = SessionFile(path_of(session), chunk=64)
    sizes = []
    original = verifier._pread

    def spy(fd, size, offset):
        sizes.append(size)
        return original(fd, size, offset)

    verifier._pread = spy
    check(verifier, session)
    assert max(sizes) <= 4096 and len(sizes) > 30


def test_oversized_records_are_compared_byte_for_byte(session):
    big = {"schemaVersion": 1, "revision": 1, "tasks": [], "blob": "z" * 5000}
    entry = append_state(session, big)
    path = path_of(session)
    verifier = SessionFile(path, chunk=256, max_parsed=1024)
    verifier.check_entry(entry)
    # same JSON value, other whitespace: refused for an oversized record
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"revision":1,"tasks"', b'"revision": 1, "tasks"'))
    with pytest.raises(StorageUnavailable):
        SessionFile(path, chunk=256, max_parsed=1024).check_entry(entry)
    # CRLF is still a native line end
    path.write_bytes(data.replace(b"\n", b"\r\n"))
    SessionFile(path, chunk=256, max_parsed=1024).check_entry(entry)


def test_an_oversized_message_line_is_indexed_by_its_leading_id(session):
    session.append_message(user("w" * 3000))
    verifier = SessionFile(path_of(session), chunk=100, max_parsed=500)
    check(verifier, session)
    altered = path_of(session).read_bytes().replace(b"wwww", b"wwwW", 1)
    path_of(session).write_bytes(altered)
    with pytest.raises(StorageUnavailable):
        check(SessionFile(path_of(session), chunk=100, max_parsed=500), session)


def test_committed_answers_per_entry(session):
    good = append_state(session)
    ghost = {**good, "id": "00000000"}
    altered = {**good, "data": {**STATE, "revision": 9}}
    assert SessionFile(path_of(session)).committed([good, ghost, altered]) == [True, False, False]


def test_check_chain_walks_only_to_the_last_verified_entry(session):
    verifier = SessionFile(path_of(session))
    asked = []

    def get_entry(entry_id):
        asked.append(entry_id)
        return session.get_entry(entry_id)

    verifier.check_chain(session.get_header(), session.get_leaf_entry(), get_entry)
    assert len(asked) == len(session.get_branch()) - 1  # the whole branch, once
    session.append_message(user("more"))
    asked.clear()
    verifier.check_chain(session.get_header(), session.get_leaf_entry(), get_entry)
    assert len(asked) == 1  # the new entry's parent was verified before


def test_check_chain_refuses_a_missing_parent(session):
    leaf = session.get_leaf_entry()
    with pytest.raises(StorageUnavailable) as caught:
        SessionFile(path_of(session)).check_chain(session.get_header(), leaf, lambda entry_id: None)
    assert "disconnected" in caught.value.reason


def test_check_chain_without_conversation_reads_nothing(tmp_path):
    manager = SessionManager.create("/tmp/proj", tmp_path)
    manager.append_model_change("faux", "faux-1")
    verifier = SessionFile(manager.get_session_file())
    with pytest.raises(NoConversation):
        verifier.check_chain(manager.get_header(), manager.get_leaf_entry(), manager.get_entry)
    assert verifier.bytes_read == 0
    manager.close()


def test_an_anchor_is_not_trusted_once_the_cache_is_dropped(session):
    verifier = SessionFile(path_of(session))
    verifier.check_chain(session.get_header(), session.get_leaf_entry(), session.get_entry)
    path = path_of(session)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"text":"hi"', b'"text":"HI"'))  # rewritten: the tail changes too
    with pytest.raises(StorageUnavailable):
        verifier.check_chain(session.get_header(), session.get_leaf_entry(), session.get_entry)


def test_a_replaced_entry_object_is_compared_again(session):
    verifier = SessionFile(path_of(session))
    branch = session.get_branch()
    verifier.check_branch(session.get_header(), branch)
    altered = [*branch[:-1], {**branch[-1], "message": {**branch[-1]["message"], "stopReason": "error"}}]
    with pytest.raises(StorageUnavailable):
        verifier.check_branch(session.get_header(), altered)
