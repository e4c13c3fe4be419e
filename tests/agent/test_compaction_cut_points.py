"""Cut points and compaction plans equal pi 1.6's on every case of ``real/*.compaction.json``."""

from __future__ import annotations

from collections import Counter

import pytest
from compaction_goldens import branch_of, read_json

from tau.agent.compaction import (
    CompactionSettings,
    compute_file_lists,
    find_cut_point,
    find_projected_cut_point,
    find_turn_start_index,
    prepare_compaction,
)
from tau.common.jsstr import js_len
from tau.session.projection import build_session_projection

SESSIONS = ("before-compaction", "large-session")
LEAVES = {
    "before-compaction": ("2ad4f86a", "417adb5c", "e80c2c30", "29100146", "f90a389f", "47f17ec8"),
    "large-session": ("d99ac169", "5c36a3ef", "4c95b7cc", "1e4b0d5e", "5d7ab417", "fe00178e"),
}
CASES = [
    (session, leaf, keep) for session in SESSIONS for leaf in LEAVES[session] for keep in (2000, 20000, 50000)
]


def _case(pi_fixtures, session, leaf, keep):
    golden = read_json(pi_fixtures / f"real/{session}.compaction.json")
    [case] = [c for c in golden["cases"] if c["leafId"] == leaf and c["keepRecentTokens"] == keep]
    branch = branch_of(pi_fixtures / golden["source"], leaf)
    return case, branch


def _head(text: str, units: int) -> str:
    return (
        text[:units]
        if text.isascii()
        else text.encode("utf-16-le", "surrogatepass")[: units * 2].decode("utf-16-le")
    )


def _as_recorded(branch, preparation):
    """The preparation in the golden's shape (message owners found through the projection)."""
    if preparation is None:
        return None
    owner = {
        id(m): p["sourceEntry"]["id"]
        for p in build_session_projection(branch)["entries"]
        for m in p["messages"]
    }
    summarized, prefix = preparation.messages_to_summarize, preparation.turn_prefix_messages
    previous = preparation.previous_summary
    read_files, modified_files = compute_file_lists(preparation.file_ops)
    return {
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "isSplitTurn": preparation.is_split_turn,
        "turnStartEntryId": preparation.turn_start_entry_id,
        "tokensBefore": preparation.tokens_before,
        "messagesToSummarize": len(summarized),
        "messagesToSummarizeRoles": dict(Counter(m["role"] for m in summarized)),
        "messagesToSummarizeFirstEntryId": owner[id(summarized[0])] if summarized else None,
        "messagesToSummarizeLastEntryId": owner[id(summarized[-1])] if summarized else None,
        "turnPrefixMessages": len(prefix),
        "turnPrefixFirstEntryId": owner[id(prefix[0])] if prefix else None,
        "turnPrefixLastEntryId": owner[id(prefix[-1])] if prefix else None,
        "previousSummary": None
        if previous is None
        else {"chars": js_len(previous), "head": _head(previous, 120)},
        "fileOps": {
            kind: sorted(getattr(preparation.file_ops, kind)) for kind in ("read", "written", "edited")
        },
        "readFiles": read_files,
        "modifiedFiles": modified_files,
    }


@pytest.mark.parametrize(("session", "leaf", "keep"), CASES)
def test_prepare_compaction_matches_pi(pi_fixtures, session, leaf, keep):
    case, branch = _case(pi_fixtures, session, leaf, keep)
    settings = CompactionSettings(reserve_tokens=16384, keep_recent_tokens=keep)
    assert _as_recorded(branch, prepare_compaction(branch, settings)) == case["prepareCompaction"]


@pytest.mark.parametrize(("session", "leaf", "keep"), CASES)
def test_legacy_find_cut_point_matches_pi(pi_fixtures, session, leaf, keep):
    case, branch = _case(pi_fixtures, session, leaf, keep)
    expected = case["findCutPoint"]
    start = max((i + 1 for i, entry in enumerate(branch) if entry["type"] == "compaction"), default=0)
    assert expected["call"] == f"findCutPoint(branch, {start}, {len(branch)}, {keep})"

    cut = find_cut_point(branch, start, len(branch), keep)
    index = cut.first_kept_entry_index
    assert {
        "firstKeptEntryIndex": index,
        "firstKeptEntryId": branch[index]["id"] if index < len(branch) else None,
        "turnStartIndex": cut.turn_start_index,
        "turnStartEntryId": branch[cut.turn_start_index]["id"] if cut.turn_start_index >= 0 else None,
        "isSplitTurn": cut.is_split_turn,
    } == {
        key: expected[key]
        for key in (
            "firstKeptEntryIndex",
            "firstKeptEntryId",
            "turnStartIndex",
            "turnStartEntryId",
            "isSplitTurn",
        )
    }
    if cut.is_split_turn:
        assert find_turn_start_index(branch, index, start) == cut.turn_start_index


def test_goldens_cover_every_case(pi_fixtures):
    recorded = {
        (session, case["leafId"], case["keepRecentTokens"])
        for session in SESSIONS
        for case in read_json(pi_fixtures / f"real/{session}.compaction.json")["cases"]
    }
    assert recorded == set(CASES)


# --- small synthetic branches: the rules a user notices ---------------------------------------


def _entry(entry_id, parent, message):
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def _user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def _assistant(text, *calls):
    content = [{"type": "text", "text": text}]
    content += [
        {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}
        for i, (name, args) in enumerate(calls)
    ]
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {}}
    return {"role": "assistant", "content": content, "usage": usage, "stopReason": "stop", "timestamp": 0}


def _result(text):
    return {
        "role": "toolResult",
        "toolCallId": "c0",
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 0,
    }


def _chain(*messages):
    entries, parent = [], None
    for index, message in enumerate(messages):
        entry_id = f"e{index:07d}"
        entries.append(_entry(entry_id, parent, message))
        parent = entry_id
    return entries


def test_clean_cut_at_a_user_message():
    branch = _chain(_user("a" * 400), _assistant("b" * 400), _user("c" * 400), _assistant("d" * 400))
    plan = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=150))
    assert (plan.first_kept_entry_id, plan.is_split_turn) == ("e0000002", False)
    assert [m["role"] for m in plan.messages_to_summarize] == ["user", "assistant"]
    assert plan.turn_prefix_messages == [] and plan.previous_summary is None


def test_cut_never_lands_on_a_tool_result_and_splits_the_turn():
    branch = _chain(
        _user("read it"),
        _assistant("reading", ("read", {"path": "a.txt"})),
        _result("x" * 4000),
    )
    plan = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=500))
    # The trailing 1,000-token result alone exceeds the budget: the cut moves back to its call,
    # inside the turn, rather than to the first message.
    assert (plan.first_kept_entry_id, plan.is_split_turn, plan.turn_start_entry_id) == (
        "e0000001",
        True,
        "e0000000",
    )
    assert plan.messages_to_summarize == []
    assert [m["role"] for m in plan.turn_prefix_messages] == ["user"]


def test_nothing_to_compact_when_everything_fits_or_already_compacted():
    branch = _chain(_user("hi"), _assistant("hello"))
    assert prepare_compaction(branch, CompactionSettings()) is None
    compaction = {
        "type": "compaction",
        "id": "c",
        "parentId": "e0000001",
        "summary": "s",
        "firstKeptEntryId": "e0000001",
        "tokensBefore": 1,
    }
    assert prepare_compaction([*branch, compaction], CompactionSettings(keep_recent_tokens=1)) is None


def test_file_operations_carry_over_from_the_previous_compaction():
    first = _chain(
        _user("a" * 400), _assistant("b" * 400, ("read", {"path": "new.txt"}), ("write", {"path": "w.txt"}))
    )
    compaction = {
        "type": "compaction",
        "id": "cmp00001",
        "parentId": first[-1]["id"],
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": "earlier",
        "firstKeptEntryId": first[1]["id"],
        "tokensBefore": 300,
        "details": {"readFiles": ["old.txt", "w.txt"], "modifiedFiles": ["mod.txt"]},
        "fromHook": False,
    }
    later = _chain(_user("c" * 400), _assistant("d" * 400))
    later[0]["id"], later[0]["parentId"], later[1]["parentId"] = "z0", "cmp00001", "z0"
    plan = prepare_compaction([*first, compaction, *later], CompactionSettings(keep_recent_tokens=150))
    assert plan.previous_summary == "earlier"
    assert plan.first_kept_entry_id == "z0"
    assert compute_file_lists(plan.file_ops) == (["new.txt", "old.txt"], ["mod.txt", "w.txt"])


def test_projected_cut_steps_over_an_omitted_recovery_attempt():
    branch = _chain(_user("a" * 400), _assistant("b" * 400), _user("c" * 400), _assistant("overflowed"))
    edit = {
        "type": "context_edit",
        "id": "edit0001",
        "parentId": branch[-1]["id"],
        "targetId": branch[-1]["id"],
        "replacement": None,
    }
    entries = build_session_projection([*branch, edit])["entries"]
    # Budget reached at the user message; the rest is a context-invisible recovery attempt.
    cut = find_projected_cut_point(entries, 0, len(entries), 100)
    assert cut.first_kept_entry_index == 3
    assert cut.is_split_turn and cut.turn_start_index == 2


def test_legacy_and_projected_agree_without_compaction():
    branch = _chain(_user("a" * 400), _assistant("b" * 400), _user("c" * 400), _assistant("d" * 400))
    entries = build_session_projection(branch)["entries"]
    assert find_cut_point(branch, 0, 4, 150) == find_projected_cut_point(entries, 0, 4, 150)
