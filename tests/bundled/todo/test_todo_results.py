"""What todo calls return: list JSON, compact mutation summaries, independent snapshots, bidi escaping."""

from __future__ import annotations

from tau.bundled.todo import results
from tau.bundled.todo_state import Change, TodoError, apply, check_state, empty_state

RLO = "\u202e"


def one_task(title="Verify behavior"):
    return check_state(
        {
            "schemaVersion": 1,
            "revision": 3,
            "tasks": [
                {"id": "t1", "title": title, "description": "", "status": "pending", "dependencies": []}
            ],
        }
    )


def test_list_reply_carries_the_full_snapshot_everywhere():
    current = one_task()
    reply = results.list_reply(current)
    assert reply.text == (
        '{"revision":3,"tasks":[{"id":"t1","title":"Verify behavior","description":"","status":"pending",'
        '"dependencies":[]}]}'
    )
    assert reply.details == reply.structured == current
    assert not reply.is_error


def test_snapshots_are_independent_of_the_state_and_of_each_other():
    current = one_task()
    reply = results.list_reply(current)
    reply.details["tasks"][0]["title"] = "changed"
    reply.structured["tasks"].clear()
    assert current["tasks"][0]["title"] == "Verify behavior"
    assert results.list_reply(current).details == current


def test_bidi_controls_are_escaped_only_in_model_visible_text():
    current = one_task(f"a{RLO}b\u2066c\u200f")
    reply = results.list_reply(current)
    assert "\\u202e" in reply.text and "\\u2066" in reply.text and "\\u200f" in reply.text
    assert RLO not in reply.text
    assert reply.details["tasks"][0]["title"] == f"a{RLO}b\u2066c\u200f"
    assert reply.structured["tasks"][0]["title"] == f"a{RLO}b\u2066c\u200f"


def test_mutation_reply_is_compact_with_full_snapshots_in_details():
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": "x"}, lambda: "abc")
    reply = results.mutation_reply(change)
    assert (
        reply.text
        == 'todo revision 1 (1 change: abc)\n{"revision":1,"tasks":[{"id":"abc","title":"x","status":"pending"}]}'
    )
    assert reply.details == reply.structured == change.state
    assert reply.details is not reply.structured


def test_mutation_text_counts_changes():
    assert results.mutation_text(4, ["a", "b"]) == "todo revision 4 (2 changes)"
    assert results.mutation_text(4, []) == "todo revision 4 (0 changes)"


def test_error_reply_names_the_code_and_keeps_the_snapshot():
    current = one_task()
    reply = results.error_reply(TodoError("unknown_task", f"unknown task id x{RLO}"), current)
    assert reply.text == "Error: unknown task id x\\u202e"
    assert reply.is_error and reply.structured is None
    assert reply.details == {"error": "unknown_task", **current}


def test_unavailable_storage_gives_no_snapshot():
    error = TodoError("storage_unavailable", results.unavailable_text("the session file was replaced"))
    reply = results.error_reply(error, None)
    assert reply.text == "Error: todo storage unavailable: the session file was replaced; repair and reload"
    assert reply.details == {"error": "storage_unavailable"}


def test_storage_notes_use_the_seed_words():
    reply = results.list_reply(empty_state(), results.VOLATILE)
    assert reply.text == '{"revision":0,"tasks":[]}\n(in-memory, not persistent after process exit)'
    noop = results.mutation_reply(Change(empty_state(), []), results.PENDING)
    assert noop.text == 'todo revision 0 (0 changes)\n{"revision":0,"tasks":[]}\n(not yet persisted)'
