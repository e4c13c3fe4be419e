"""The cost model and the Action Fusion merge on small hand-made branches."""

from __future__ import annotations

from tau.bundled.fusion.replay import fuse_branch
from tau.modes.savings import savings_for_branch
from tau.modes.savings.cost_model import CACHE_TTL_MS, PriceBook, Prices, PromptCache
from tau.modes.savings.report import render_table

MODEL = ("anthropic", "claude-test")


def _user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 0}


def test_a_shared_prefix_is_read_until_the_cache_expires_or_the_model_changes():
    first = [_user("x" * 395)]  # "user:" + 395 = 400 characters: 100 tokens
    second = [*first, _user("y" * 33)]  # + 2 (blank line) + 38 = 440 characters: 110 tokens
    third = [*second, _user("z" * 15)]  # + 2 + 20 = 462: 116 tokens
    cache = PromptCache()
    assert cache.request(first, 0, MODEL) == (0, 100)
    assert cache.request(second, 60_000, MODEL) == (100, 10)
    assert cache.request(third, 60_000 + CACHE_TTL_MS + 1, MODEL) == (0, 116)
    assert cache.request(third, 60_000 + CACHE_TTL_MS + 2, ("openai", "x")) == (0, 116)
    # The prefix is counted in characters: "\n\nuser:" of the new last message is shared too.
    assert cache.request([*second, _user("w" * 15)], 60_000 + CACHE_TTL_MS + 3, ("openai", "x")) == (112, 4)


def test_prices_read_write_and_output():
    prices = Prices(input=10.0, output=20.0, source="override")
    # 1M read at 0.1x, 1M written at 1.25x, 1M output, 1M uncached input at 1x
    assert prices.cost(1_000_000, 1_000_000, 1_000_000) == 10.0 * 0.1 + 10.0 * 1.25 + 20.0
    assert prices.cost(0, 0, 0, uncached=1_000_000) == 10.0


def test_recorded_costs_give_the_prices_of_a_model_the_catalogue_lacks():
    book = PriceBook(lookup=lambda provider, model: None)
    book.learn(
        {
            "provider": "anthropic",
            "model": "claude-old",
            "usage": {
                "input": 2000,
                "output": 100,
                "cacheRead": 0,
                "cacheWrite": 0,
                "cost": {"input": 0.01, "output": 0.0025},
            },
        }
    )
    assert book.prices("anthropic", "claude-old") == Prices(5.0, 25.0, "recorded")
    assert book.prices("anthropic", "unknown").source == "none"


def _entry(n: int, message: dict) -> dict:
    return {
        "type": "message",
        "id": f"e{n:07d}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def _assistant(calls: list[tuple[str, str, dict]], n: int) -> dict:
    content = [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    return _entry(
        n,
        {
            "role": "assistant",
            "content": content,
            "stopReason": "toolUse",
            "provider": "anthropic",
            "model": "m",
            "timestamp": n * 1000,
        },
    )


def _result(n: int, call_id: str, name: str, text: str, error: bool = False) -> dict:
    return _entry(
        n,
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": error,
            "timestamp": n * 1000,
        },
    )


def _branch() -> list[dict]:
    edit = {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]}
    return [
        _entry(0, {"role": "user", "content": "fix it", "timestamp": 0}),
        _assistant([("c1", "edit", edit)], 1),
        _result(2, "c1", "edit", "Successfully replaced 1 block(s) in a.py."),
        _assistant([("c2", "bash", {"command": "python3 test_a.py"})], 3),
        _result(4, "c2", "bash", "ok"),
        _entry(
            5,
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "done"}],
                "stopReason": "stop",
                "provider": "anthropic",
                "model": "m",
                "timestamp": 5000,
            },
        ),
    ]


def test_an_edit_followed_by_a_lone_command_is_one_fused_request():
    fused = fuse_branch(_branch())
    assert fused.merged == [("c1", "python3 test_a.py")]
    roles = [e["message"]["role"] for e in fused.branch]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    call = fused.branch[1]["message"]["content"][0]
    assert call["arguments"]["then_run"] == {"command": "python3 test_a.py"}
    assert [b["text"] for b in fused.branch[2]["message"]["content"]] == [
        "Successfully replaced 1 block(s) in a.py.",
        "[then_run:succeeded]\nok",
    ]


def test_a_failed_edit_is_not_fused():
    branch = _branch()
    branch[2] = _result(2, "c1", "edit", "Could not find the text", error=True)
    assert fuse_branch(branch).merged == []


def test_the_full_profile_reports_what_it_cannot_measure():
    report = savings_for_branch(_branch(), "t.jsonl", profile="full", override=Prices(1.0, 1.0, "test"))
    assert report["requests"] == 3 and report["tau"]["requests"] == 2
    assert report["mechanisms"]["evidencePreservingReducer"]["measured"] is False
    table = render_table(report)
    assert "not measured" in table and "1 edit→command round trip merged" in table


def _todo_result(n: int, call_id: str, statuses: list[str]) -> dict:
    tasks = [{"id": f"t{i}", "title": f"task {i}", "status": status} for i, status in enumerate(statuses)]
    entry = _result(n, call_id, "todo", f"todo revision {n}")
    entry["message"]["details"] = {"schemaVersion": 1, "revision": n, "tasks": tasks}
    return entry


def test_occ_boundaries_come_from_the_plan_when_the_session_has_one():
    from tau.bundled.occ.replay import boundaries

    branch = [
        _entry(0, {"role": "user", "content": "go", "timestamp": 0}),
        _assistant([("c1", "todo", {"action": "add"})], 1),
        _todo_result(2, "c1", ["pending", "pending"]),
        _assistant([("c2", "todo", {"action": "update"})], 3),
        _todo_result(4, "c2", ["completed", "pending"]),
        {"type": "custom", "id": "state", "customType": "pi-todo:state", "data": {}},
        _assistant([("c3", "todo", {"action": "add"})], 5),
        _todo_result(6, "c3", ["completed", "pending", "completed"]),  # new and completed: history
    ]
    assert boundaries(branch) == ({"state": 1}, "plan")


def test_without_a_plan_each_run_end_is_a_boundary():
    from tau.bundled.occ.replay import boundaries

    branch = [*_branch(), _entry(6, {"role": "user", "content": "next", "timestamp": 6000})]
    assert boundaries(branch) == ({"e0000005": 1}, "run ends")


def test_the_progress_bar_counts_to_the_end_and_clears_its_line():
    import io

    from tau.modes.savings.progress import Progress

    stream = io.StringIO()
    bar = Progress(4, "s.jsonl", enabled=True, stream=stream)
    for _ in range(4):
        bar.step()
    bar.close()
    text = stream.getvalue()
    assert "4/4 requests replayed  s.jsonl" in text and "[" + "#" * 30 + "]" in text
    assert text.endswith("\r\x1b[2K")
    quiet = io.StringIO()
    Progress(1000, "s", stream=quiet).step()  # not a terminal: no bar unless asked
    assert quiet.getvalue() == ""


def _compaction(n: int, summary: str, kept: str, usage: dict | None = None) -> dict:
    entry = {
        "type": "compaction",
        "id": f"k{n:07d}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": summary,
        "firstKeptEntryId": kept,
        "tokensBefore": 5000,
    }
    return {**entry, "usage": usage} if usage is not None else entry


def _summaries_branch(summary: str) -> list[dict]:
    """A prompt, two reads (the second after the last request), and a compaction keeping the second call."""
    usage = {"input": 6000, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 6300}
    return [
        _entry(0, _user("go")),
        _assistant([("c1", "read", {"path": "a"})], 1),
        _result(2, "c1", "read", "a" * 4000),  # 1,000 tokens
        _assistant([("c2", "read", {"path": "b"})], 3),
        _result(4, "c2", "read", "b" * 4000),
        _compaction(5, summary, "e0000003", usage),
    ]


def test_tau_prices_a_compaction_as_it_sends_it_cache_friendly():
    from tau.modes.savings.replay import _instruction_tokens, summary_figures

    book = PriceBook(override=Prices(1.0, 1.0, "test"))
    branch = _summaries_branch("## Goal\nread a and b")
    # pi's call as recorded: 6,000 uncached tokens in, 300 out
    assert summary_figures(branch, book)["uncachedInput"] == 6000
    # tau's: the last request (e0000003's prompt, 1,500 tokens) read from the cache; written: its
    # instruction (what was added since the request stays after the cut)
    cached = summary_figures(branch, book, cached_prompts={"e0000003": 1500})
    assert (cached["requests"], cached["uncachedInput"], cached["cacheRead"]) == (1, 0, 1500)
    assert (cached["cacheWrite"], cached["outputTokens"]) == (_instruction_tokens(), 300)
    # a split turn with history before it is two calls, each reading the prefix; the output shared
    split = _summaries_branch("history\n\n---\n\n**Turn Context (split turn):**\n\nprefix")
    two = summary_figures(split, book, cached_prompts={"e0000003": 1500})
    assert (two["requests"], two["cacheRead"], two["outputTokens"]) == (2, 3000, 300)
    alone = _summaries_branch("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nprefix")
    assert summary_figures(alone, book, cached_prompts={"e0000003": 1500})["requests"] == 1


def test_the_stock_pi_baseline_prices_a_cache_friendly_summary_as_pi_sends_it():
    from tau.modes.savings.replay import context_tokens, summary_figures

    book = PriceBook(override=Prices(1.0, 1.0, "test"))
    usage = {"input": 0, "output": 300, "cacheRead": 1500, "cacheWrite": 600, "totalTokens": 2400}
    branch = [*_summaries_branch("s")[:-1], _compaction(5, "s", "e0000003", usage)]
    assert summary_figures(branch, book)["cacheRead"] == 1500  # what tau's call billed
    as_pi = summary_figures(branch, book, as_pi=True)
    assert (as_pi["uncachedInput"], as_pi["cacheRead"], as_pi["outputTokens"]) == (
        context_tokens(branch[:5]),
        0,
        300,
    )


def _plan_branch() -> list[dict]:
    """A todo plan whose first task completes after five 5,000-token outputs, then a final answer."""
    return [
        _entry(0, _user("go")),
        _assistant([("c1", "todo", {"action": "add"})], 1),
        _todo_result(2, "c1", ["in_progress", "pending"]),
        *[
            item
            for n in range(3, 13, 2)
            for item in (
                _assistant([(f"b{n}", "bash", {"command": f"cat {n}"})], n),
                _result(n + 1, f"b{n}", "bash", "x" * 20_000),
            )
        ],
        _assistant([("c2", "todo", {"action": "update"})], 13),
        _todo_result(14, "c2", ["completed", "in_progress"]),
        _assistant([("b15", "bash", {"command": "ls"})], 15),
        _result(16, "b15", "bash", "ok"),
        {
            **_assistant([], 17),
            "message": {
                **_assistant([], 17)["message"],
                "content": [{"type": "text", "text": "done"}],
                "stopReason": "stop",
            },
        },
    ]


def test_a_replayed_boundary_compaction_keeps_the_plan_call_and_reads_its_summary_from_the_cache():
    from tau.modes.savings.replay import occ_summary_figures, replay_branch

    branch = _plan_branch()
    book = PriceBook(override=Prices(1.0, 1.0, "test"))
    result = replay_branch(branch, book, ("onlineContextCompact",))
    (call,) = result.summary_calls
    # the whole step before the plan call (five 5,000-token outputs) was removable; one turn, so one
    # call (the turn prefix), reading the boundary's last request from the cache
    assert call.archive > 25_000 and call.calls == 1 and call.prompt > 25_000
    figures = occ_summary_figures(result.summary_calls, book)
    assert (figures["requests"], figures["uncachedInput"], figures["cacheRead"]) == (1, 0, call.prompt)


def test_occ_replays_with_the_settings_and_window_of_the_boundary_request_model():
    """Issue 28: as the live extension, the replay reads ``compaction.keepRecentTokens`` (the boundary
    model's ``modelOverrides`` entry first) and ``sol.cacheWriteReadRatio``, and the window of the
    model that made the boundary request, not of the session's first model."""
    from types import SimpleNamespace

    from tau.bundled.sol_common.replay import ReplayHost
    from tau.modes.savings.replay import replay_branch
    from tau.session.projection import build_session_projection

    branch = _plan_branch()
    for entry in branch[13:]:
        if entry["message"].get("role") == "assistant":
            entry["message"] = {**entry["message"], "model": "small"}
    models = {
        "m": SimpleNamespace(provider="anthropic", id="m", context_window=1_000_000),
        "small": SimpleNamespace(provider="anthropic", id="small", context_window=30_000),
    }
    settings = {
        "sol": {"cacheWriteReadRatio": 3},
        "compaction": {"modelOverrides": {"anthropic/small": {"keepRecentTokens": 500}}},
    }
    host = ReplayHost(build_session_projection, lambda provider, model: models.get(model), settings)
    book = PriceBook(override=Prices(1.0, 1.0, "test"))
    result = replay_branch(branch, book, ("onlineContextCompact",), host=host)
    (decision,) = result.runs["onlineContextCompact"].decisions
    assert decision["cacheWriteReadRatio"] == 3 and decision["keepRecentTokens"] <= 500
    # over 25,000 tokens in a 30,000-token window, less its 16,384 reserve: the window's protection
    assert decision["reason"] == "window_protection" and decision["compact"]
