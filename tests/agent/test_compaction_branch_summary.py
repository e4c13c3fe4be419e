"""Branch summaries for tree navigation equal pi 1.6's (scenario e) and follow its budget rules."""

from __future__ import annotations

import asyncio

from compaction_goldens import RecordingFaux, open_session, read_entries, read_json, without_timestamps

from tau.agent.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from tau.agent.compaction.branch_summary import build_branch_summary_prompt
from tau.session.manager import SessionManager

SCENARIO = "e-tree-branch-summary"


def test_navigation_summary_matches_pi(pi_fixtures):
    session = open_session(pi_fixtures / f"scenarios/{SCENARIO}.jsonl")
    [stored] = [entry for entry in session.get_entries() if entry["type"] == "branch_summary"]

    # navigateTree(answerOne, {summarize: true}) from the old leaf, the summary's fromId.
    collected, ancestor = collect_entries_for_branch_summary(session, stored["fromId"], stored["parentId"])
    assert ancestor == stored["parentId"]
    assert [entry["id"] for entry in collected] == ["283d331a", "3249d4bb"]

    complete = RecordingFaux()
    result = asyncio.run(generate_branch_summary(collected, complete, context_window=128000))
    assert (result.aborted, result.error) == (False, None)
    assert result.summary == stored["summary"]
    assert {"readFiles": result.read_files, "modifiedFiles": result.modified_files} == stored["details"]
    assert result.usage == stored["usage"]

    requests = read_json(pi_fixtures / f"scenarios/{SCENARIO}.requests.json")["requests"]
    expected = [without_timestamps(r["context"]) for r in requests if r["kind"] == "summary"]
    assert [without_timestamps(r) for r in complete.requests] == expected


def test_stored_text_has_the_preamble(pi_fixtures):
    entries = read_entries(pi_fixtures / f"scenarios/{SCENARIO}.jsonl")
    [stored] = [entry for entry in entries if entry["type"] == "branch_summary"]
    assert stored["summary"].startswith(BRANCH_SUMMARY_PREAMBLE)
    assert BRANCH_SUMMARY_PREAMBLE == (
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
    )


def _message(entry_id, message):
    return {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def _user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def _assistant(text, *calls):
    content = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": name, "name": name, "arguments": args} for name, args in calls]
    return {"role": "assistant", "content": content, "stopReason": "stop", "timestamp": 0}


def test_budget_keeps_newest_messages_and_squeezes_in_a_summary():
    summary = {
        "type": "branch_summary",
        "id": "bs",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "fromId": "old",
        "summary": "s" * 40,  # 10 tokens
        "details": {"readFiles": ["nested.txt"], "modifiedFiles": []},
    }
    entries = [
        _message("u0", _user("a" * 400)),  # 100 tokens: beyond the budget
        summary,
        _message("a1", _assistant("b" * 30, ("write", {"path": "w.txt"}))),
        _message(
            "r1", {"role": "toolResult", "content": [{"type": "text", "text": "x" * 4000}], "timestamp": 0}
        ),
        _message("u2", _user("c" * 40)),
    ]
    # Newest first: user 10 tokens, assistant 13 (text 30 + "write" + its JSON arguments 16 = 51
    # characters); tool results are skipped. The summary (10) overflows a budget of 30, but the
    # budget is less than 90% used (23 < 27), so it is squeezed in; then collection stops.
    prepared = prepare_branch_entries(entries, token_budget=30)
    assert [m["role"] for m in prepared.messages] == ["branchSummary", "assistant", "user"]
    assert prepared.total_tokens == 10 + 13 + 10
    # At 23 of 25 the budget is past 90%: the summary stays out.
    assert [m["role"] for m in prepare_branch_entries(entries, token_budget=25).messages] == [
        "assistant",
        "user",
    ]
    # File operations come from every entry, and from nested summaries' details.
    assert prepared.file_ops.read == {"nested.txt"} and prepared.file_ops.written == {"w.txt"}
    assert [m["role"] for m in prepare_branch_entries(entries).messages] == [
        "user",
        "branchSummary",
        "assistant",
        "user",
    ]


def test_context_edits_hide_or_replace_branch_messages():
    entries = [
        _message("u0", _user("visible")),
        _message("a0", _assistant("failed attempt")),
        {"type": "context_edit", "id": "e0", "parentId": "a0", "targetId": "a0", "replacement": None},
        _message("u1", _user("original")),
        {
            "type": "context_edit",
            "id": "e1",
            "parentId": "u1",
            "targetId": "u1",
            "replacement": {"content": "edited"},
        },
    ]
    prompt = build_branch_summary_prompt(prepare_branch_entries(entries).messages)
    assert prompt.startswith("<conversation>\n[User]: visible\n\n[User]: edited\n</conversation>\n\n")


def test_instructions_replaced_or_appended():
    messages = [_user("q")]
    assert build_branch_summary_prompt(
        messages, custom_instructions="Only names.", replace_instructions=True
    ) == ("<conversation>\n[User]: q\n</conversation>\n\nOnly names.")
    assert build_branch_summary_prompt(messages, custom_instructions="names").endswith(
        "error messages.\n\nAdditional focus: names"
    )


def test_empty_branch_and_failures_are_reported_not_raised():
    async def never(context):
        raise AssertionError("no request expected")

    result = asyncio.run(generate_branch_summary([], never))
    assert result.summary == "No content to summarize"

    async def aborted(context):
        return {"role": "assistant", "content": [], "stopReason": "aborted"}

    async def failed(context):
        return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "overloaded"}

    entries = [_message("u0", _user("q"))]
    assert asyncio.run(generate_branch_summary(entries, aborted)).aborted
    assert (
        asyncio.run(generate_branch_summary(entries, failed)).error
        == "Branch summarization failed: overloaded"
    )


def test_collect_without_old_leaf_is_empty():
    assert collect_entries_for_branch_summary(SessionManager.in_memory(), None, "x") == ([], None)
