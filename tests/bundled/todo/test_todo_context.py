"""The checklist in the model context: results carry it; a block is added only when none shows the
current list, at the end, and once sent it never moves or changes (issue 14: no cache break)."""

from __future__ import annotations

from tau.bundled.todo import context
from tau.bundled.todo.results import VOLATILE, list_reply, mutation_reply
from tau.bundled.todo_state import Change, check_state

STATE = check_state(
    {
        "schemaVersion": 1,
        "revision": 2,
        "tasks": [
            {"id": "t1", "title": "plan \u202e", "description": "", "status": "pending", "dependencies": []}
        ],
    }
)
NEXT = check_state({**STATE, "revision": 3, "tasks": [{**STATE["tasks"][0], "status": "in_progress"}]})
LIST_JSON = '{"revision":2,"tasks":[{"id":"t1","title":"plan \\u202e","description":"","status":"pending","dependencies":[]}]}'
BLOCK = f"[todo snapshot, revision 2]\n{LIST_JSON}"


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


def run(blocks, messages, **overrides):
    options = {"active": True, "state": STATE, "note": None, "reason": None, "recorded": True, "now_ms": 1000}
    options.update(overrides)
    return blocks.transform(messages, **options)


def snapshots(messages):
    return [m for m in messages if m.get("customType") == "pi-todo:snapshot"]


def test_a_mutation_result_carries_the_list_so_nothing_is_added():
    reply = mutation_reply(Change(STATE, ["t1"]))
    assert (
        reply.text
        == 'todo revision 2 (1 change: t1)\n{"revision":2,"tasks":[{"id":"t1","title":"plan \\u202e","status":"pending"}]}'
    )
    assert run(context.Blocks(), [user("go", 10), call(20), result(30, reply.text)]) is None


def test_a_current_list_result_suppresses_the_block():
    assert run(context.Blocks(), [user("go", 10), call(20), result(30, list_reply(STATE).text)]) is None


def test_an_older_or_failed_result_does_not():
    old = LIST_JSON.replace('"revision":2', '"revision":1')
    assert snapshots(run(context.Blocks(), [result(30, old)]))[0]["content"] == BLOCK
    assert len(snapshots(run(context.Blocks(), [result(30, LIST_JSON, error=True)]))) == 1
    assert len(snapshots(run(context.Blocks(), [result(30, LIST_JSON, name="other")]))) == 1
    assert len(snapshots(run(context.Blocks(), [result(30, f"todo revision 1 (1 change: t1)\n{old}")]))) == 1


def test_a_missing_list_goes_last_and_stays_where_it_was_sent():
    blocks = context.Blocks()
    first = [user("go", 10), call(20), result(30, "revision line without the list")]
    out1 = run(blocks, first)
    assert [m["role"] for m in out1] == ["user", "assistant", "toolResult", "custom"]
    assert out1[-1] == {
        "role": "custom",
        "customType": "pi-todo:snapshot",
        "content": BLOCK,
        "display": False,
        "timestamp": 1000,
    }
    later = [*first, {"role": "assistant", "content": [], "timestamp": 50}, user("more", 60)]
    out2 = run(blocks, later, now_ms=2000)
    assert out2[: len(out1)] == out1  # the earlier request is a prefix: the prompt cache holds
    assert len(snapshots(out2)) == 1
    assert first == [user("go", 10), call(20), result(30, "revision line without the list")]


def test_a_sent_block_outlives_a_newer_list_and_a_second_block_follows_it():
    blocks = context.Blocks()
    out1 = run(blocks, [user("go", 10)])
    newer = [user("go", 10), user("edited in /todo", 20)]
    out2 = run(blocks, newer, state=NEXT)
    assert out2[:2] == out1  # revision 2's block stays where it was sent
    assert [m["content"].split("\n")[0] for m in snapshots(out2)] == [
        "[todo snapshot, revision 2]",
        "[todo snapshot, revision 3]",
    ]
    shown = [*newer, call(30), result(40, mutation_reply(Change(NEXT, ["t1"])).text)]
    out3 = run(blocks, shown, state=NEXT)
    assert out3[: len(out2)] == out2 and len(snapshots(out3)) == 2


def test_two_blocks_sent_after_the_same_message_keep_their_order():
    blocks = context.Blocks()
    messages = [user("go", 10)]
    run(blocks, messages, state=None, reason="the file is gone")
    out = run(blocks, messages)
    assert [m["content"].split("\n")[0] for m in snapshots(out)] == [
        "[todo unavailable]",
        BLOCK.split("\n")[0],
    ]
    again = run(blocks, [*messages, user("next", 20)])
    assert again[:3] == out


def test_a_block_whose_message_left_the_context_goes_with_it():
    blocks = context.Blocks()
    run(blocks, [user("go", 10), user("more", 20)])
    compacted = [{"role": "compactionSummary", "summary": "s", "timestamp": 100}, user("kept", 110)]
    out = run(blocks, [*compacted, result(120, list_reply(STATE).text)])
    assert out is None


def test_a_volatile_list_result_with_its_note_still_counts():
    assert run(context.Blocks(), [result(30, list_reply(STATE, VOLATILE).text)], note=VOLATILE) is None
    mutation = mutation_reply(Change(STATE, ["t1"]), VOLATILE).text
    assert run(context.Blocks(), [result(30, mutation)], note=VOLATILE) is None
    out = run(context.Blocks(), [user("x", 10)], note=VOLATILE)
    assert out[-1]["content"].endswith(f"\n({VOLATILE})")


def test_unavailable_storage_is_named_without_a_snapshot():
    out = run(context.Blocks(), [user("go", 10)], state=None, reason="the branch is disconnected")
    assert out[-1]["content"] == (
        "[todo unavailable]\ntodo storage unavailable: the branch is disconnected; repair and reload"
    )
    assert "tasks" not in out[-1]["content"]


def test_an_inactive_tool_adds_nothing_removes_stale_blocks_and_forgets_sent_ones():
    blocks = context.Blocks()
    stale = context.snapshot_message("[todo snapshot, revision 1]\n{}", 5)
    assert run(blocks, [user("go", 10), stale], active=False) == [user("go", 10)]
    assert run(blocks, [user("go", 10)], active=False) is None
    run(blocks, [user("go", 10)])
    assert run(blocks, [user("go", 10), user("more", 20)], active=False) is None


def test_blocks_in_the_given_messages_are_not_duplicated():
    stale = context.snapshot_message("[todo snapshot, revision 1]\n{}", 5)
    out = run(context.Blocks(), [user("go", 10), stale, user("more", 40)])
    assert len(snapshots(out)) == 1 and "revision 2" in snapshots(out)[0]["content"]


def test_a_never_recorded_empty_checklist_adds_nothing():
    empty = {"schemaVersion": 1, "revision": 0, "tasks": []}
    assert run(context.Blocks(), [user("go", 10)], state=empty, recorded=False) is None
    out = run(context.Blocks(), [user("go", 10)], state=empty, recorded=True)
    assert out[-1]["content"] == '[todo snapshot, revision 0]\n{"revision":0,"tasks":[]}'


def test_forget_starts_over():
    blocks = context.Blocks()
    run(blocks, [user("go", 10)])
    blocks.forget()
    assert run(blocks, [user("go", 10), result(20, list_reply(STATE).text)]) is None
