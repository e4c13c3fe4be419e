"""Summary requests and stored compaction summaries equal what pi 1.6 sent and stored (scenarios d, d2).

The summaries are answered by tau's faux provider with the fixtures' four canned texts, so the
requests, the merged summaries, the file lists and even the usage figures can be compared whole.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from compaction_goldens import (
    CANNED_SUMMARIES,
    MODEL,
    RecordingFaux,
    branch_of,
    read_entries,
    read_json,
    without_timestamps,
)

from tau.agent.compaction import (
    CompactionPreparation,
    CompactionSettings,
    FileOperations,
    SummarizationError,
    compact,
    prepare_compaction,
    serialize_conversation,
)
from tau.agent.compaction.request import summary_complete, summary_options
from tau.agent.compaction.summary import build_summary_prompt, combine_usage
from tau.llm.providers.faux import FauxProvider
from tau.llm.retry import RetryPolicy
from tau.llm.stream import AbortSignal
from tau.llm.types import Model


def pi_summary_requests(pi_fixtures, scenario):
    requests = read_json(pi_fixtures / f"scenarios/{scenario}.requests.json")["requests"]
    return [without_timestamps(r["context"]) for r in requests if r["kind"] == "summary"]


def compactions_of(pi_fixtures, scenario):
    """Each stored compaction with the branch pi prepared it from (everything before it)."""
    path = pi_fixtures / f"scenarios/{scenario}.jsonl"
    stored = [e for e in read_entries(path) if e["type"] == "compaction"]
    return [(entry, branch_of(path, entry["parentId"])) for entry in stored]


SCENARIOS = {
    # scenario: keepRecentTokens (contextWindow 4000, reserveTokens 1000)
    "d-threshold-compaction": 250,
    "d2-compaction-split-turn-update": 200,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_summary_requests_and_stored_compactions_match_pi(pi_fixtures, scenario):
    settings = CompactionSettings(reserve_tokens=1000, keep_recent_tokens=SCENARIOS[scenario])
    complete = RecordingFaux()
    for stored, branch in compactions_of(pi_fixtures, scenario):
        preparation = prepare_compaction(branch, settings)
        result = asyncio.run(compact(preparation, complete))
        assert result == {
            key: stored[key] for key in ("summary", "firstKeptEntryId", "tokensBefore", "usage", "details")
        }
    assert [without_timestamps(r) for r in complete.requests] == pi_summary_requests(pi_fixtures, scenario)


def test_d2_second_compaction_updates_the_previous_summary(pi_fixtures):
    (first, _), (second, branch) = compactions_of(pi_fixtures, "d2-compaction-split-turn-update")
    preparation = prepare_compaction(branch, CompactionSettings(reserve_tokens=1000, keep_recent_tokens=200))
    assert preparation.previous_summary == first["summary"]
    assert preparation.is_split_turn
    assert second["summary"].endswith("\n\n<read-files>\nnumbers.txt\n</read-files>")


def _preparation(messages, *, prefix=(), previous=None, file_ops=None):
    return CompactionPreparation(
        first_kept_entry_id="keep0001",
        messages_to_summarize=list(messages),
        turn_prefix_messages=list(prefix),
        is_split_turn=bool(prefix),
        tokens_before=1234,
        previous_summary=previous,
        file_ops=file_ops or FileOperations(),
    )


def _user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_split_turn_without_history_uses_previous_summary_and_one_request():
    complete = RecordingFaux()
    result = asyncio.run(compact(_preparation([], prefix=[_user("go")], previous="OLD"), complete))
    assert len(complete.requests) == 1
    assert (
        result["summary"]
        == "OLD\n\n---\n\n**Turn Context (split turn):**\n\n" + CANNED_SUMMARIES["turn prefix"]
    )

    complete = RecordingFaux()
    result = asyncio.run(compact(_preparation([], prefix=[_user("go")]), complete))
    assert result["summary"].startswith("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n")


def test_custom_instructions_and_file_lists():
    file_ops = FileOperations(read={"b.txt", "a.txt", "w.txt"}, written={"w.txt"}, edited={"e.txt"})
    complete = RecordingFaux()
    result = asyncio.run(
        compact(_preparation([_user("hi")], file_ops=file_ops), complete, custom_instructions="the API")
    )
    prompt = complete.requests[0]["messages"][1]["content"][0]["text"]
    assert prompt.startswith(
        "<conversation>\n[User]: hi\n</conversation>\n\nThe messages above are a conversation"
    )
    assert prompt.endswith("error messages.\n\nAdditional focus: the API")
    assert result["summary"] == (
        CANNED_SUMMARIES["compaction"]
        + "\n\n<read-files>\na.txt\nb.txt\n</read-files>\n\n<modified-files>\ne.txt\nw.txt\n</modified-files>"
    )
    assert result["details"] == {"readFiles": ["a.txt", "b.txt"], "modifiedFiles": ["e.txt", "w.txt"]}


def test_serialization_roles_tool_calls_and_truncation():
    text = "😀" + "x" * 2100  # 2,101 code points, 2,102 UTF-16 units
    messages = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "plain string"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "secret"},
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "ü.txt", "limit": 5}},
                {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "ls"}},
            ],
        },
        {"role": "toolResult", "content": [{"type": "text", "text": text}]},
        {"role": "toolResult", "content": []},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "only thinking"}]},
    ]
    assert serialize_conversation(messages) == (
        "[User]: plain string\n\n"
        "[Assistant]: one\ntwo\n\n"
        '[Assistant tool calls]: read(path="ü.txt", limit=5); bash(command="ls")\n\n'
        "[Tool result]: " + text[:1999] + "\n\n[... 102 more characters truncated]"
    )


def test_agent_only_roles_are_converted_before_serializing():
    prompt = build_summary_prompt(
        [
            {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0, "timestamp": 1},
            {"role": "custom", "customType": "x", "content": "note", "display": True, "timestamp": 1},
        ],
        previous_summary="PREV",
    )
    assert prompt.startswith(
        "<conversation>\n[User]: Ran `ls`\n```\na\n```\n\n[User]: note\n</conversation>\n\n"
    )
    assert "<previous-summary>\nPREV\n</previous-summary>\n\nThe messages above are NEW" in prompt


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ({"error": "boom"}, "Summarization failed: boom"),
        (
            {"text": "partial", "stopReason": "length"},
            "generation hit the token cap and the summary is incomplete",
        ),
        ({"tool": "read", "args": {"path": "x"}}, "Summarization attempted to call a tool"),
    ],
)
def test_failed_summary_raises_and_nothing_is_returned(reply, error):
    provider = FauxProvider([reply])

    async def complete(context):
        return await provider.stream(MODEL, context).result()

    with pytest.raises(SummarizationError, match=error):
        asyncio.run(compact(_preparation([_user("hi")]), complete))


def test_turn_prefix_failure_is_labelled():
    provider = FauxProvider([{"text": "history"}, {"error": "down"}])

    async def complete(context):
        return await provider.stream(MODEL, context).result()

    with pytest.raises(SummarizationError, match=r"^Turn prefix summarization failed: down$"):
        asyncio.run(compact(_preparation([_user("a")], prefix=[_user("b")]), complete))


def test_combined_usage_is_provider_reported_only_when_both_parts_are():
    def usage(n, reported):
        cost = {
            "input": n,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": n,
            "totalFromProvider": reported,
        }
        return {"input": n, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": n + 1, "cost": cost}

    both = combine_usage(usage(2, True), {**usage(3, True), "reasoning": 4})
    assert both["totalTokens"] == 7 and both["reasoning"] == 4 and both["cost"]["totalFromProvider"] is True
    assert combine_usage(usage(2, True), usage(3, False))["cost"]["totalFromProvider"] is False


# --- the request options and retries of summary calls ---------------------------------------------


def test_summary_options_never_cache_and_reason_only_on_reasoning_models():
    plain = summary_options(MODEL, thinking_level="high")
    assert plain.cache_retention == "none" and plain.reasoning is None
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", plain.session_id
    )
    reasoning = Model(id="r", provider="faux", api="faux", reasoning=True)
    assert summary_options(reasoning, thinking_level="high", session_id="s").reasoning == "high"
    assert summary_options(reasoning, thinking_level="off").reasoning is None
    assert summary_options(reasoning, session_id="s").session_id == "s"


def _faux_complete(steps, retry, signal=None, scheduled=None):
    provider = FauxProvider(steps)
    options = summary_options(MODEL, signal=signal)
    return provider, summary_complete(
        provider.stream, MODEL, options, retry=retry, on_retry_scheduled=scheduled
    )


def test_transient_summary_errors_are_retried_per_settings():
    scheduled = []
    policy = RetryPolicy(enabled=True, max_retries=2, base_delay_ms=1)
    steps = [{"error": "529 overloaded_error"}, {"text": "summary"}]
    provider, complete = _faux_complete(steps, policy, scheduled=lambda *args: scheduled.append(args))
    result = asyncio.run(compact(_preparation([_user("hi")]), complete))
    assert result["summary"] == "summary"
    assert provider.call_count == 2
    assert scheduled == [(1, 2, 1, "529 overloaded_error")]


def test_summary_errors_are_not_retried_when_disabled_or_permanent():
    for policy, error in (
        (RetryPolicy(enabled=False), "529 overloaded_error"),
        (RetryPolicy(), "invalid api key"),
    ):
        provider, complete = _faux_complete([{"error": error}, {"text": "never"}], policy)
        with pytest.raises(SummarizationError, match=f"Summarization failed: {error}"):
            asyncio.run(compact(_preparation([_user("hi")]), complete))
        assert provider.call_count == 1


def test_abort_during_retry_backoff_ends_as_aborted():
    signal = AbortSignal()
    policy = RetryPolicy(enabled=True, max_retries=3, base_delay_ms=60_000)
    _, complete = _faux_complete(
        [{"error": "529 overloaded_error"}], policy, signal, lambda *args: signal.abort()
    )
    response = asyncio.run(complete({"messages": []}))
    assert response["stopReason"] == "aborted" and "errorMessage" not in response
