"""Properties of cut points on generated conversations: what any compaction must preserve."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.agent.compaction import (
    CompactionSettings,
    find_cut_point,
    find_projected_cut_point,
    prepare_compaction,
)
from tau.session.projection import build_session_projection

USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {}}


def _turn(draw_sizes):
    """One turn: a user message, then assistant steps, each with its tool results."""
    user_size, steps = draw_sizes
    messages = [{"role": "user", "content": [{"type": "text", "text": "u" * user_size}], "timestamp": 0}]
    for text_size, results in steps:
        calls = [
            {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": f"f{i}"}}
            for i in range(len(results))
        ]
        content = [{"type": "text", "text": "a" * text_size}, *calls]
        messages.append(
            {"role": "assistant", "content": content, "usage": USAGE, "stopReason": "stop", "timestamp": 0}
        )
        messages += [
            {
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "toolName": "read",
                "content": [{"type": "text", "text": "r" * size}],
                "isError": False,
                "timestamp": 0,
            }
            for i, size in enumerate(results)
        ]
    return messages


sizes = st.integers(min_value=0, max_value=3000)
turns = st.lists(
    st.tuples(sizes, st.lists(st.tuples(sizes, st.lists(sizes, max_size=3)), min_size=1, max_size=3)),
    min_size=1,
    max_size=6,
)


def _branch(turn_sizes, with_label):
    messages = [m for sizes_of_turn in turn_sizes for m in _turn(sizes_of_turn)]
    entries, parent = [], None
    for index, message in enumerate(messages):
        entry_id = f"{index:08x}"
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": message,
            }
        )
        parent = entry_id
        if with_label and index == len(messages) // 2:
            entries.append(
                {"type": "label", "id": f"l{index:07x}", "parentId": parent, "targetId": parent, "label": "x"}
            )
            parent = entries[-1]["id"]
    return entries


@settings(max_examples=150, deadline=None)
@given(turns, st.integers(min_value=1, max_value=6000), st.booleans())
def test_cut_points_keep_the_conversation_whole(turn_sizes, keep, with_label):
    branch = _branch(turn_sizes, with_label)
    projected = build_session_projection(branch)["entries"]
    cut = find_projected_cut_point(projected, 0, len(projected), keep)

    # Without compactions or edits, the projected and the legacy search agree.
    assert cut == find_cut_point(branch, 0, len(branch), keep)
    kept = branch[cut.first_kept_entry_index]
    assert kept["type"] != "message" or kept["message"]["role"] != "toolResult"
    if cut.is_split_turn:
        assert branch[cut.turn_start_index]["message"]["role"] == "user"
        assert cut.turn_start_index < cut.first_kept_entry_index

    plan = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=keep))
    if plan is None:
        return
    # Summarized + turn prefix + kept = the whole conversation, in order, nothing twice.
    all_messages = [entry["message"] for entry in branch if entry["type"] == "message"]
    kept_messages = [e["message"] for e in branch[cut.first_kept_entry_index :] if e["type"] == "message"]
    assert plan.messages_to_summarize + plan.turn_prefix_messages + kept_messages == all_messages
