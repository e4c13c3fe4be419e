"""The snapshot block in the model context: once per revision, in a stable place, never when a list result has it."""

from __future__ import annotations

from tau.bundled.todo import context
from tau.bundled.todo.results import VOLATILE, list_reply
from tau.bundled.todo.state import check_state

STATE = check_state(
    {
        "schemaVersion": 1,
        "revision": 2,
        "tasks": [
            {"id": "t1", "title": "plan \u202e", "description": "", "status": "pending", "dependencies": []}
        ],
    }
)
LIST_JSON = '{"revision":2,"tasks":[{"id":"t1","title":"plan \\u202e","description":"","status":"pending","dependencies":[]}]}'


def user(text, ts):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def call(ts, name="todo"):
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": f"c{ts}", "name": name, "arguments": {}}],
        "stopReason": "toolUse",
        "timestamp": ts,
    }


def result(ts, text, name="todo", error=False):
    return {
        "role": "toolResult",
        "toolCallId": f"c{ts}",
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": ts,
    }


def run(messages, **overrides):
    options = {
        "active": True,
        "state": STATE,
        "note": None,
        "reason": None,
        "recorded": True,
        "anchor_ms": 25,
        "now_ms": 1000,
    }
    options.update(overrides)
    return context.transform(messages, **options)


def snapshots(messages):
    return [m for m in messages if m.get("customType") == "pi-todo:snapshot"]


def test_the_snapshot_follows_the_turn_that_recorded_it():
    messages = [user("go", 10), call(20), result(30, "todo revision 2 (1 change: t1)"), user("next", 40)]
    out = run(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult", "custom", "user"]
    block = out[3]
    assert block == {
        "role": "custom",
        "customType": "pi-todo:snapshot",
        "content": f"[todo snapshot, revision 2]\n{LIST_JSON}",
        "display": False,
        "timestamp": 25,
    }
    assert messages == [
        user("go", 10),
        call(20),
        result(30, "todo revision 2 (1 change: t1)"),
        user("next", 40),
    ]


def test_exactly_one_block_per_request_and_the_same_place_on_the_next_request():
    first = [user("go", 10), call(20), result(30, "todo revision 2 (1 change: t1)")]
    out1 = run(first)
    later = [*first, {"role": "assistant", "content": [], "timestamp": 50}, user("more", 60)]
    out2 = run(later)
    assert len(snapshots(out1)) == len(snapshots(out2)) == 1
    assert out2[: len(out1)] == out1  # the earlier request is a prefix: the prompt cache holds


def test_a_current_list_result_suppresses_the_block():
    messages = [user("go", 10), call(20), result(30, list_reply(STATE).text)]
    assert run(messages) is None


def test_an_older_or_failed_list_result_does_not():
    old = LIST_JSON.replace('"revision":2', '"revision":1')
    assert len(snapshots(run([result(30, old)]))) == 1
    assert len(snapshots(run([result(30, LIST_JSON, error=True)]))) == 1
    assert len(snapshots(run([result(30, LIST_JSON, name="other")]))) == 1


def test_a_volatile_list_result_with_its_note_still_counts():
    assert run([result(30, list_reply(STATE, VOLATILE).text)], note=VOLATILE) is None
    out = run([user("x", 10)], note=VOLATILE)
    assert out[-1]["content"].endswith(f"\n({VOLATILE})")


def test_after_compaction_the_block_comes_after_the_summary():
    messages = [{"role": "compactionSummary", "summary": "s", "timestamp": 100}, user("kept", 110)]
    out = run(messages)
    assert [m["role"] for m in out] == ["compactionSummary", "custom", "user"]


def test_unavailable_storage_is_named_without_a_snapshot():
    out = run([user("go", 10)], state=None, reason="the branch is disconnected")
    assert out[-1]["content"] == (
        "[todo unavailable]\ntodo storage unavailable: the branch is disconnected; repair and reload"
    )
    assert "tasks" not in out[-1]["content"]


def test_an_inactive_tool_adds_nothing_and_removes_stale_blocks():
    stale = context.snapshot_message("[todo snapshot, revision 1]\n{}", 5)
    assert run([user("go", 10), stale], active=False) == [user("go", 10)]
    assert run([user("go", 10)], active=False) is None


def test_stale_blocks_are_replaced_not_duplicated():
    stale = context.snapshot_message("[todo snapshot, revision 1]\n{}", 5)
    out = run([user("go", 10), stale, user("more", 40)])
    assert len(snapshots(out)) == 1 and "revision 2" in snapshots(out)[0]["content"]


def test_a_never_recorded_empty_checklist_adds_nothing():
    empty = {"schemaVersion": 1, "revision": 0, "tasks": []}
    assert run([user("go", 10)], state=empty, recorded=False, anchor_ms=None) is None
    out = run([user("go", 10)], state=empty, recorded=True, anchor_ms=None)
    assert out[-1]["content"] == '[todo snapshot, revision 0]\n{"revision":0,"tasks":[]}'


def test_without_an_anchor_the_block_goes_last():
    out = run([user("go", 10), user("more", 40)], anchor_ms=None)
    assert out[-1]["customType"] == "pi-todo:snapshot" and out[-1]["timestamp"] == 1000
