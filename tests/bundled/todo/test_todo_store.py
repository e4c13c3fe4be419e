"""The checklist of a real session: verified writes, quarantine and reconcile, recovery from the branch."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tau.bundled.todo.store import CUSTOM_TYPE, Store
from tau.common import jsjson
from tau.session import SessionManager


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


def state_lines(path) -> list[dict]:
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("customType") == CUSTOM_TYPE]


def make_store(manager, append=None, warnings=None):
    store = Store(
        manager,
        append or manager.append_custom_entry,
        warn=(warnings.append if warnings is not None else None),
    )
    store.recover()
    return store


@pytest.fixture
def manager(tmp_path):
    session = SessionManager.create("/tmp/proj", tmp_path)
    session.append_message(user())
    session.append_message(assistant())
    yield session
    session.close()


def add(store, title, base=None):
    base = store.state["revision"] if base is None else base
    return store.mutate({"action": "add", "baseRevision": base, "title": title})


# ------------------------------------------------------------------------------------ file-backed


def test_a_file_backed_edit_is_appended_verified_and_silent(manager):
    store = make_store(manager)
    assert store.mode == "file" and store.note is None
    reply = add(store, "first")
    task_id = store.state["tasks"][0]["id"]
    assert reply.text == (
        f"todo revision 1 (1 change: {task_id[:8]})\n"
        f'{{"revision":1,"tasks":[{{"id":"{task_id[:8]}","title":"first","status":"pending"}}]}}'
    )
    assert not reply.is_error
    [line] = state_lines(manager.get_session_file())
    assert line["data"] == store.state == reply.details
    assert store.list().text == jsjson.dumps_str({"revision": 1, "tasks": store.state["tasks"]})
    assert store.status_text() == "todo 0/1 done"


def test_conflicts_and_no_ops_append_nothing(manager):
    store = make_store(manager)
    add(store, "first")
    conflict = add(store, "again", base=0)
    assert conflict.is_error and conflict.details["error"] == "revision_conflict"
    assert conflict.details["revision"] == 1 and conflict.details["tasks"] == store.state["tasks"]
    task_id = store.state["tasks"][0]["id"]
    noop = store.mutate(
        {"action": "update", "baseRevision": 1, "updates": [{"id": task_id, "title": "first"}]}
    )
    assert noop.text.split("\n")[0] == "todo revision 1 (0 changes)"
    assert len(state_lines(manager.get_session_file())) == 1


def test_before_any_conversation_an_edit_is_refused_before_anything_is_appended(tmp_path):
    session = SessionManager.create("/tmp/proj", tmp_path)
    appended = []

    def append(custom_type, data):
        appended.append(custom_type)
        return session.append_custom_entry(custom_type, data)

    store = make_store(session, append=append)
    assert store.mode == "pending"
    listed = store.list()
    assert listed.text == '{"revision":0,"tasks":[]}\n(not yet persisted)'
    assert store.status_text() == "todo 0/0 done (not yet persisted)"
    reply = add(store, "too early")
    assert reply.is_error and reply.details["error"] == "no_conversation"
    assert reply.text == (
        "Error: send a message first: file-backed todo needs a persisted conversation\n(not yet persisted)"
    )
    assert appended == []
    session.append_message(user())  # the file is written now
    assert not add(store, "now").is_error
    assert store.mode == "file"
    session.close()


def test_a_verified_write_counts_even_when_the_host_throws_afterwards(manager):
    def append(custom_type, data):
        manager.append_custom_entry(custom_type, data)
        raise RuntimeError("listener failed")

    store = make_store(manager, append=append)
    reply = add(store, "kept")
    assert not reply.is_error and store.state["revision"] == 1


# ------------------------------------------------------------------------------ quarantine


def cut_last_lf(path):
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:-1])
    return data


def test_an_unverified_write_quarantines_until_an_explicit_reconcile(manager):
    path = manager.get_session_file()

    def torn_write(custom_type, data):
        entry_id = manager.append_custom_entry(custom_type, data)
        cut_last_lf(path)  # the line is on disk without its LF: not committed
        return entry_id

    store = make_store(manager, append=torn_write)
    reply = add(store, "torn")
    assert reply.is_error and reply.details == {"error": "storage_unavailable"}
    assert reply.text.startswith("Error: todo storage unavailable: the last write is not verified on disk: ")
    assert reply.text.endswith("; repair and reload")
    assert store.mode == "unavailable" and store.state is None and store.quarantined
    # edits and the list stay unavailable, even after ordinary reconcile triggers
    assert store.list().is_error
    store.recover()
    assert store.list().is_error and add(store, "x", base=0).details["error"] == "storage_unavailable"
    # the user repairs the file, then reconciles explicitly
    Path(path).write_bytes(Path(path).read_bytes() + b"\n")
    store.reconcile()
    assert store.mode == "file" and store.state["revision"] == 1
    assert store.state["tasks"][0]["title"] == "torn"


def test_an_append_that_fails_with_an_uncertain_outcome_quarantines(manager):
    def failing(custom_type, data):
        raise OSError("disk full")

    store = make_store(manager, append=failing)
    reply = add(store, "lost")
    assert "uncertain (the host reported disk full)" in reply.text
    assert store.quarantined


def test_a_missing_ancestor_refuses_the_edit_and_quarantines(manager):
    store = make_store(manager)
    path = Path(manager.get_session_file())
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(line for line in lines if b'"role":"assistant"' not in line))
    reply = add(store, "x")
    assert "is not a complete line" in reply.text and "uncommitted; reopen the session" in reply.text
    assert state_lines(path) == []


# ----------------------------------------------------------------------------------- recovery


def test_recovery_adopts_the_latest_committed_snapshot(manager):
    store = make_store(manager)
    add(store, "a")
    add(store, "b")
    again = make_store(manager)
    assert again.state == store.state and again.recorded
    assert again.list().text == store.list().text


def test_recovery_ignores_altered_same_id_data(manager):
    store = make_store(manager)
    add(store, "a")
    add(store, "b")
    path = Path(manager.get_session_file())
    path.write_bytes(path.read_bytes().replace(b'"title":"b"', b'"title":"B"'))
    again = make_store(manager)
    assert again.state["revision"] == 1 and [t["title"] for t in again.state["tasks"]] == ["a"]


def test_a_branch_whose_every_snapshot_the_file_lost_is_unavailable_not_empty(manager):
    """Issue 18, item 4: after an external change, reconcile names the state unavailable."""
    store = make_store(manager)
    add(store, "a")
    path = Path(manager.get_session_file())
    header, *rest = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(header + b"".join(line for line in rest if CUSTOM_TYPE.encode() not in line))
    store.reconcile()
    assert store.state is None and store.mode == "unavailable"
    assert store.reason == (
        f"no {CUSTOM_TYPE} entry of this branch is a complete line of {path.name} "
        "(1 on the branch; the file changed outside this session)"
    )
    listed = store.list()
    assert listed.is_error and listed.details == {"error": "storage_unavailable"}
    assert store.status_text() == "todo unavailable"


def test_recovery_ignores_an_incomplete_last_line(manager):
    store = make_store(manager)
    add(store, "a")
    add(store, "b")
    cut_last_lf(manager.get_session_file())
    assert make_store(manager).state["revision"] == 1


def test_recovery_ignores_an_in_memory_ghost(manager):
    store = make_store(manager)
    add(store, "a")

    class GhostView:
        """The host kept a failed write in memory: its branch names an entry the file lacks."""

        def __init__(self):
            leaf = manager.get_leaf_entry()
            self.ghost = {
                "type": "custom",
                "customType": CUSTOM_TYPE,
                "data": {"schemaVersion": 1, "revision": 2, "tasks": []},
                "id": "0badc0de",
                "parentId": leaf["id"],
                "timestamp": leaf["timestamp"],
            }

        def __getattr__(self, name):
            return getattr(manager, name)

        def get_branch(self):
            return [*manager.get_branch(), self.ghost]

        def get_leaf_entry(self):
            return self.ghost

        def get_entry(self, entry_id):
            return self.ghost if entry_id == "0badc0de" else manager.get_entry(entry_id)

    view = GhostView()
    ghosted = make_store(view, append=manager.append_custom_entry)
    assert ghosted.state["revision"] == 1  # the ghost has no authority
    reply = add(ghosted, "c")
    assert reply.details["error"] == "storage_unavailable" and "0badc0de" in reply.text


def test_tool_result_history_confers_no_authority(manager):
    manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "todo",
            "content": [{"type": "text", "text": "todo revision 5 (1 change: x)"}],
            "details": {"schemaVersion": 1, "revision": 5, "tasks": []},
            "isError": False,
            "timestamp": 3,
        }
    )
    store = make_store(manager)
    assert store.state["revision"] == 0 and not store.recorded


def test_an_explicit_empty_snapshot_counts(manager):
    store = make_store(manager)
    add(store, "a")
    store.mutate({"action": "clear", "baseRevision": 1})
    again = make_store(manager)
    assert again.state == {"schemaVersion": 1, "revision": 2, "tasks": []} and again.recorded


def test_malformed_committed_entries_warn_and_are_ignored(manager):
    store = make_store(manager)
    add(store, "a")
    manager.append_custom_entry(CUSTOM_TYPE, {"schemaVersion": 1, "revision": "9", "tasks": []})
    warnings = []
    again = make_store(manager, warnings=warnings)
    assert again.state["revision"] == 1
    assert len(warnings) == 1 and "ignoring malformed pi-todo:state entry" in warnings[0]


def test_recovery_after_tree_navigation_drops_the_abandoned_branch(manager):
    store = make_store(manager)
    add(store, "a")
    fork_point = manager.get_leaf_id()
    add(store, "b")
    manager.branch(fork_point)
    store.recover()
    assert [t["title"] for t in store.state["tasks"]] == ["a"] and store.state["revision"] == 1
    add(store, "c")  # a new child of the fork point; the abandoned revision 2 never counts
    assert store.state["revision"] == 2
    assert [t["title"] for t in store.state["tasks"]] == ["a", "c"]


def test_recovery_after_compaction_keeps_the_snapshot(manager):
    store = make_store(manager)
    add(store, "a")
    manager.append_message(user("more"))
    manager.append_compaction("summary", manager.get_leaf_id(), 100)
    store.recover()
    assert store.state["revision"] == 1 and store.mode == "file"


def test_recovery_on_fork_reads_the_new_file(manager, tmp_path):
    store = make_store(manager)
    add(store, "a")
    add(store, "b")
    new_path = manager.create_branched_session(manager.get_leaf_id())
    assert new_path != store._file.path
    forked = make_store(manager)
    assert forked.state["revision"] == 2 and forked.mode == "file"
    assert add(forked, "c").is_error is False
    assert len(state_lines(new_path)) == 3


def test_a_disconnected_branch_leaves_the_list_unavailable(tmp_path):
    """A failed write followed by a persisted tool result: the file's branch stops at a missing parent."""
    session = SessionManager.create("/tmp/proj", tmp_path)
    session.append_message(user())
    session.append_message(assistant())
    store = make_store(session)
    add(store, "a")
    path = Path(session.get_session_file())
    session.close()
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    orphan = {
        "type": "message",
        "id": "0000beef",
        "parentId": "deadbeef",  # the failed write's id: never on disk
        "timestamp": "2026-11-30T00:00:00.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "todo",
            "content": [],
            "isError": False,
            "timestamp": 5,
        },
    }
    path.write_bytes(b"\n".join([*lines, jsjson.dumps(orphan)]) + b"\n")
    reopened = SessionManager.open(path)
    appended = []
    broken = make_store(reopened, append=lambda *args: appended.append(args))
    assert broken.mode == "unavailable" and "disconnected" in broken.reason
    assert broken.list().is_error and broken.status_text() == "todo unavailable"
    assert add(broken, "x", base=1).details == {"error": "storage_unavailable"}
    assert appended == []
    # navigating to a verified entry makes it available again
    reopened.branch(lines and json.loads(lines[-1])["id"])
    broken.recover()
    assert broken.mode == "file" and broken.state["revision"] == 1
    reopened.close()


# ------------------------------------------------------------------------------------- volatile


def test_volatile_sessions_edit_and_say_so():
    session = SessionManager.in_memory("/tmp/proj")
    store = make_store(session)
    assert store.mode == "volatile"
    reply = add(store, "a")
    assert reply.text.endswith("\n(in-memory, not persistent after process exit)")
    assert store.list().text.endswith("\n(in-memory, not persistent after process exit)")
    assert store.status_text() == "todo 0/1 done (in-memory, not persistent after process exit)"
    fork_point = session.get_leaf_id()
    add(store, "b")
    session.branch(fork_point)
    store.recover()
    assert [t["title"] for t in store.state["tasks"]] == ["a"]


def test_a_session_replaced_under_the_store_is_recovered_first(manager, tmp_path):
    store = make_store(manager)
    add(store, "a")
    manager.new_session()
    reply = store.list()
    assert reply.text == '{"revision":0,"tasks":[]}\n(not yet persisted)'
    assert os.path.basename(str(store._file.path)) == os.path.basename(manager.get_session_file())


def test_a_quarantine_stays_with_its_session(manager):
    store = make_store(manager)
    store._quarantine_for("broken")
    assert store.list().is_error
    manager.new_session()  # another session under the same view: its own, healthy storage
    assert store.list().text == '{"revision":0,"tasks":[]}\n(not yet persisted)'
