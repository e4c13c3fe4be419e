"""The session store as a user sees it: files on disk, what they contain, what reopening gives back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tau.session import NotASessionError, SessionError, SessionManager
from tau.session.paths import default_session_dir

ENTRY_ID = re.compile(r"[0-9a-f]{8}")
UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
FILE_NAME = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_(.+)\.jsonl")


def user(text: str, ts: int = 1) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text: str, ts: int = 2) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": ts,
    }


def lines_of(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.fixture
def session(tmp_path):
    manager = SessionManager.create("/tmp/proj", tmp_path)
    yield manager
    manager.close()


def test_new_session_is_written_only_once_it_has_a_user_message(session):
    session.append_model_change("faux", "faux-1")
    session.append_thinking_level_change("off")
    session.append_message({"role": "system", "content": "", "timestamp": 0})
    assert not os.path.exists(session.get_session_file())
    session.append_message(user("hi"))
    records = lines_of(session.get_session_file())
    assert [r["type"] for r in records] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]


def test_header_and_file_name_follow_pi(session, tmp_path):
    session.append_message(user("hi"))
    name = Path(session.get_session_file()).name
    match = FILE_NAME.fullmatch(name)
    assert match and match.group(1) == session.get_session_id()
    assert UUID7.fullmatch(session.get_session_id())
    header = lines_of(session.get_session_file())[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3 and header["cwd"] == "/tmp/proj"
    assert name.startswith(header["timestamp"].replace(":", "-").replace(".", "-"))


def test_default_session_dir_encodes_the_cwd(isolated_agent_dir):
    assert default_session_dir("/home/u/proj") == isolated_agent_dir / "sessions" / "--home-u-proj--"
    manager = SessionManager.create("/home/u/proj")
    manager.append_message(user("hi"))
    assert Path(manager.get_session_file()).parent == isolated_agent_dir / "sessions" / "--home-u-proj--"
    manager.close()


def test_entries_have_pi_field_order_and_chain(session):
    ids = [
        session.append_model_change("faux", "faux-1"),
        session.append_thinking_level_change("off"),
        session.append_message(user("hi")),
        session.append_custom_entry("demo", {"n": 1}),
        session.append_custom_message_entry("note", "hello", True, {"x": 1}),
        session.append_session_info(" a\r\nname "),
    ]
    session.append_label_change(ids[2], "mark")
    records = lines_of(session.get_session_file())[1:]
    assert all(ENTRY_ID.fullmatch(r["id"]) for r in records)
    assert [r["parentId"] for r in records] == [None, *[r["id"] for r in records[:-1]]]
    assert [list(r) for r in records] == [
        ["type", "id", "parentId", "timestamp", "provider", "modelId"],
        ["type", "id", "parentId", "timestamp", "thinkingLevel"],
        ["type", "id", "parentId", "timestamp", "message"],
        ["type", "customType", "data", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        ["type", "id", "parentId", "timestamp", "name"],
        ["type", "id", "parentId", "timestamp", "targetId", "label"],
    ]
    assert records[5]["name"] == "a name"


def test_optional_fields_are_absent_not_null(session):
    session.append_message(user("hi"))
    session.append_custom_entry("state")
    first = session.get_leaf_id()
    session.append_label_change(first, None)
    session.append_compaction("sum", None, 10)
    session.append_usage("cache_warm", "faux", "faux-1", {"input": 1})
    records = lines_of(session.get_session_file())
    assert "data" not in records[2]
    assert "label" not in records[3]
    compaction = records[4]
    assert compaction["firstKeptEntryId"] == compaction["id"]
    assert list(compaction) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
    ]
    assert list(records[5]) == ["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage"]


def test_compaction_carries_the_replayed_system_message(session):
    session.append_message({"role": "system", "content": "", "sections": {"a": "A"}, "timestamp": 5})
    session.append_message(
        {"role": "system", "content": "", "sections": {"a": None, "b": "B"}, "timestamp": 6}
    )
    session.append_message(user("hi"))
    session.append_compaction("sum", None, 10, {"readFiles": [], "modifiedFiles": []}, False, {"input": 1})
    compaction = lines_of(session.get_session_file())[-1]
    system = compaction["systemMessage"]
    assert system["sections"] == {"b": "B"}
    assert list(system) == ["role", "content", "sections", "timestamp"]
    assert list(compaction)[-4:] == ["details", "usage", "fromHook", "systemMessage"]


def test_reopen_gives_same_entries_and_leaf_is_last_line(session):
    session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    session.append_message(user("q2"))
    session.branch(a1)
    session.append_message(user("other"))
    session.branch(a1)  # not persisted
    path = session.get_session_file()
    entries = session.get_entries()
    session.close()
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.get_entries() == entries
    assert reopened.get_leaf_id() == entries[-1]["id"]
    assert [e["message"]["content"][0]["text"] for e in reopened.get_branch()] == ["q1", "a1", "other"]


def test_reopen_round_trips_byte_for_byte(session, tmp_path):
    session.append_message(user('héllo \u2028 \ud83d\ude00 "quoted" </script>'))
    session.append_message(
        {**assistant("x"), "usage": {"cost": {"total": 0.000009, "big": 1e21, "n": 150000.0}}}
    )
    path = session.get_session_file()
    session.close()
    before = Path(path).read_bytes()
    manager = SessionManager.open(path)
    manager.append_message(user("more"))
    manager.close()
    after = Path(path).read_bytes()
    assert after.startswith(before)
    assert b'"total":0.000009,"big":1e+21,"n":150000}' in before


def test_branch_and_reset_leaf(session):
    root = session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.branch(root)
    child = session.append_message(assistant("alt"))
    assert session.get_entry(child)["parentId"] == root
    session.reset_leaf()
    new_root = session.append_message(user("fresh"))
    assert session.get_entry(new_root)["parentId"] is None
    assert [e["id"] for e in session.get_branch()] == [new_root]
    assert {e["id"] for e in session.get_children(root)} == {child, session.get_entries()[1]["id"]}
    with pytest.raises(SessionError, match="not found"):
        session.branch("nope")


def test_branch_with_summary(session):
    root = session.append_message(user("q1"))
    leaf = session.append_message(assistant("a1"))
    summary_id = session.branch_with_summary(root, "summary", {"readFiles": []}, False)
    entry = session.get_entry(summary_id)
    assert entry["parentId"] == root and entry["fromId"] == leaf
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "fromHook"]
    session.reset_leaf()
    top = session.branch_with_summary(None, "from nothing")
    assert session.get_entry(top)["fromId"] == "root" and session.get_entry(top)["parentId"] is None


def test_labels_latest_wins_and_tree_carries_them(session):
    first = session.append_message(user("q1"))
    session.append_label_change(first, "one")
    session.append_label_change(first, "two")
    assert session.get_label(first) == "two"
    tree = session.get_tree()
    assert tree[0]["label"] == "two" and tree[0]["labelTimestamp"]
    session.append_label_change(first, "")
    assert session.get_label(first) is None
    with pytest.raises(SessionError, match="Entry missing not found"):
        session.append_label_change("missing", "x")


def test_session_name_latest_in_file_order(session):
    session.append_message(user("hi"))
    assert session.get_session_name() is None
    session.append_session_info("One")
    session.append_session_info("Two\nlines")
    assert session.get_session_name() == "Two lines"
    session.append_session_info("   ")
    assert session.get_session_name() is None


def test_context_edit_validation(session):
    system = session.append_message({"role": "system", "content": "", "timestamp": 0})
    asked = session.append_message(user("q"))
    answered = session.append_message(assistant("a"))
    edit = session.append_context_edit(answered, {"content": "short"})
    assert session.get_entry(edit)["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    edit = session.append_context_edit(asked, {"content": "u"})
    assert session.get_entry(edit)["replacement"] == {"content": "u"}
    with pytest.raises(SessionError, match="does not contribute editable model content"):
        session.append_context_edit(system, None)
    with pytest.raises(SessionError, match="not found"):
        session.append_context_edit("zzzzzzzz", None)
    session.branch(asked)
    session.append_message(assistant("other"))
    with pytest.raises(SessionError, match="not on the active branch"):
        session.append_context_edit(answered, None)
    with pytest.raises(SessionError, match="must be None"):
        session.append_context_edit(asked, {"content": 5})


def test_build_context_uses_the_branch(session):
    session.append_model_change("faux", "faux-1")
    q = session.append_message(user("q"))
    session.append_message(assistant("a"))
    context = session.build_session_context()
    assert [m["role"] for m in context["messages"]] == ["user", "assistant"]
    assert context["model"] == {"provider": "faux", "modelId": "faux-1"}
    assert [m["role"] for m in session.build_session_context(q)["messages"]] == ["user"]
    assert session.build_session_context(None)["messages"] == []
    projection = session.build_session_projection()
    assert [e["sourceEntry"]["type"] for e in projection["entries"]] == ["model_change", "message", "message"]
    assert [e["id"] for e in session.build_context_entries()] == [e["id"] for e in session.get_branch()]


def test_in_memory_never_writes(tmp_path, isolated_agent_dir):
    manager = SessionManager.in_memory("/tmp/proj")
    manager.append_message(user("hi"))
    assert manager.get_session_file() is None and not manager.is_persisted()
    assert not isolated_agent_dir.exists() or not any(isolated_agent_dir.rglob("*.jsonl"))
    preloaded = SessionManager.in_memory("/tmp/proj", entries=manager.get_entries())
    assert preloaded.get_entries() == manager.get_entries()


def test_open_missing_path_creates_there(tmp_path):
    path = tmp_path / "explicit.jsonl"
    manager = SessionManager.open(path)
    assert manager.get_session_file() == str(path) and not path.exists()
    manager.append_message(user("hi"))
    assert path.exists() and lines_of(path)[0]["type"] == "session"
    manager.close()


def test_open_empty_file_gets_a_header(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(NotASessionError, match="empty"):
        SessionManager.open(path, read_only=True)
    assert path.read_bytes() == b""
    manager = SessionManager.open(path)
    assert [r["type"] for r in lines_of(path)] == ["session"]
    manager.close()


@pytest.mark.parametrize(
    "content",
    [b'{"hello":"world"}\n', b"just text\n", b'{"type":"message","id":"a","parentId":null}\n', b"[1,2]\n"],
)
def test_not_a_session_is_refused_untouched(tmp_path, content):
    path = tmp_path / "other.jsonl"
    path.write_bytes(content)
    for read_only in (True, False):
        with pytest.raises(NotASessionError, match=re.escape(str(path))):
            SessionManager.open(path, read_only=read_only)
    assert path.read_bytes() == content


def test_read_only_open_never_writes(tmp_path):
    path = tmp_path / "s.jsonl"
    manager = SessionManager.open(path)
    manager.append_message(user("hi"))
    manager.close()
    with path.open("ab") as file:
        file.write(b'{"type":"message","id":"cut","parentId":null,"timest')
    before = path.read_bytes()
    stat = path.stat()
    reader = SessionManager.open(path, read_only=True)
    assert len(reader.get_entries()) == 1
    assert reader.problems == [(3, "line 3: cut short (no newline at the end of the file); skipped")]
    with pytest.raises(SessionError, match="read-only"):
        reader.append_message(user("no"))
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_invalid_custom_session_id_refused(tmp_path):
    with pytest.raises(ValueError, match="invalid session id"):
        SessionManager.create("/tmp/proj", tmp_path, id="-bad")
    manager = SessionManager.create("/tmp/proj", tmp_path, id="my.session-1")
    assert manager.get_session_id() == "my.session-1"


def test_create_branched_session_keeps_the_path_and_recreates_labels(session, tmp_path):
    q1 = session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    session.append_label_change(q1, "start")
    q2 = session.append_message(user("q2"))
    session.branch(a1)
    session.append_message(user("elsewhere"))
    old_file = session.get_session_file()
    label_time = session.get_tree()[0]["labelTimestamp"]
    new_file = session.create_branched_session(q2)
    assert new_file != old_file and session.get_session_file() == new_file
    lines = lines_of(new_file)
    assert lines[0]["parentSession"] == old_file
    assert [r["type"] for r in lines[1:]] == ["message", "message", "message", "label"]
    assert [r["id"] for r in lines[1:4]] == [q1, a1, q2]
    assert lines[3]["parentId"] == a1  # re-chained past the removed label
    assert lines[4]["parentId"] == q2 and lines[4]["targetId"] == q1 and lines[4]["timestamp"] == label_time
    assert session.get_leaf_id() == lines[4]["id"] and session.get_label(q1) == "start"
    session.append_message(assistant("goes on in the new file"))
    assert len(lines_of(new_file)) == 6 and len(lines_of(old_file)) == 6


def test_create_branched_session_without_conversation_is_written_lazily(session):
    model = session.append_model_change("faux", "faux-1")
    session.append_message(user("hi"))
    new_file = session.create_branched_session(model)
    assert not os.path.exists(new_file)
    session.append_message(user("now"))
    assert [r["type"] for r in lines_of(new_file)] == ["session", "model_change", "message"]


def test_fork_from_copies_every_entry_into_the_target_project(session, tmp_path, isolated_agent_dir):
    session.append_message(user("q"))
    session.append_custom_entry("x", {"k": [1, 2]})
    source = session.get_session_file()
    session.close()
    forked = SessionManager.fork_from(source, "/tmp/other")
    assert Path(forked.get_session_file()).parent == isolated_agent_dir / "sessions" / "--tmp-other--"
    header = lines_of(forked.get_session_file())[0]
    assert header["parentSession"] == source and header["cwd"] == "/tmp/other"
    assert header["id"] != session.get_session_id() and forked.get_cwd() == "/tmp/other"
    assert (
        Path(forked.get_session_file()).read_bytes().splitlines()[1:]
        == Path(source).read_bytes().splitlines()[1:]
    )
    forked.append_message(user("continues"))
    forked.close()
    with pytest.raises(SessionError, match="cannot fork"):
        SessionManager.fork_from(tmp_path / "missing.jsonl", "/tmp/other")


def test_new_session_starts_over_and_releases_the_old_file(session):
    session.append_message(user("hi"))
    old = session.get_session_file()
    new = session.new_session(parent_session=old)
    assert new != old and session.get_entries() == [] and session.get_leaf_id() is None
    assert session.get_header()["parentSession"] == old
    SessionManager.open(old).close()  # the lock on the old file is gone


def test_tree_children_sorted_by_timestamp(tmp_path):
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'
    rows = [
        ("r", None, "00"),
        ("late", "r", "09"),
        ("early", "r", "01"),
        ("orphan", "missing", "05"),
        ("self", "self", "06"),
    ]
    body = [
        f'{{"type":"custom","customType":"c","id":"{i}","parentId":{json.dumps(p)},"timestamp":"2026-01-01T00:00:{t}.000Z"}}'
        for i, p, t in rows
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([header, *body]) + "\n")
    manager = SessionManager.open(path, read_only=True)
    roots = manager.get_tree()
    assert [n["entry"]["id"] for n in roots] == ["r", "orphan", "self"]
    assert [n["entry"]["id"] for n in roots[0]["children"]] == ["early", "late"]
    assert [e["id"] for e in manager.get_branch("orphan")] == ["orphan"]
    assert [e["id"] for e in manager.get_branch("self")] == ["self"]
    assert (5, "line 5: parent 'missing' not found; treated as a root") in manager.problems


def test_in_memory_branched_session_stays_in_memory():
    manager = SessionManager.in_memory("/tmp/proj")
    q = manager.append_message(user("q"))
    manager.append_label_change(q, "keep")
    manager.append_message(assistant("a"))
    old_id = manager.get_session_id()
    assert manager.create_branched_session(q) is None
    assert manager.get_session_id() != old_id and manager.get_session_file() is None
    assert [e["type"] for e in manager.get_entries()] == ["message", "label"]
    assert "parentSession" not in manager.get_header()


def test_context_at_an_unknown_leaf_falls_back_to_the_last_entry_as_pi(session):
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    assert len(session.build_session_context("no-such-id")["messages"]) == 2
    assert session.get_branch("no-such-id") == []
