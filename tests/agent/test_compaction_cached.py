"""Cache-friendly summaries (``compaction.cacheFriendly``, default on): a compaction's summary request is
the session's last request again (same session id and cache retention, system prompt, tools and
messages), the messages since and one instruction, so the faux model's prompt cache serves >= 90% of
its input; pi's exact request when the setting is off, for an overflow compaction, when the request
would not fit the window, and after an answer that called a tool anyway."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from session_support import Harness

from faux_model import SUMMARY, Summarizer
from tau.agent.compaction.prompts import CACHED_REQUEST_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT


def big(n: int, chars: int = 8000) -> dict[str, Any]:
    return {"bash": f"{sys.executable} -c \"print('{n}' * {chars})\""}


def last_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


class Model(Summarizer):
    """Summaries for summary requests (either kind), every other request from ``queue``; with
    ``tool_first`` a cache-friendly summary request is answered with a tool call (pi's request follows)."""

    def __init__(self, queue: list[dict[str, Any]], *, tool_first: bool = False) -> None:
        super().__init__(queue)
        self.tool_first = tool_first

    def summarize(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.tool_first and CACHED_REQUEST_PREAMBLE in last_text(request):
            return {"bash": "echo not now"}
        return super().summarize(request)


def harness(tmp_path, model: Model, compaction: dict[str, Any], window: int = 128_000) -> Harness:
    settings = {"compaction": {"keepRecentTokens": 1000, "reserveTokens": 4000, **compaction}}
    return Harness(
        tmp_path, [{"factory": model}], settings=settings, model_overrides={"context_window": window}
    )


def bill(path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def cached_share(usage: dict[str, Any]) -> float:
    return usage["cacheRead"] / (usage["input"] + usage["cacheRead"] + usage["cacheWrite"])


def compaction_of(h: Harness) -> dict[str, Any]:
    (entry,) = [e for e in h.manager.get_entries() if e["type"] == "compaction"]
    return entry


def test_a_threshold_compaction_reads_its_prefix_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAU_FAUX_BILL", str(tmp_path / "bill.jsonl"))
    model = Model([big(1), big(2), big(3), big(4), {"text": "Built."}, {"text": "Again."}])
    h = harness(tmp_path, model, {"enabled": True}, window=12_000)
    asyncio.run(h.session.prompt("build it"))
    entry = compaction_of(h)
    (summary,) = model.summaries()
    agent = model.requests[model.requests.index(summary) - 1]
    # the last request again, with the agent's system prompt and tools, then the messages since
    assert (summary["systemPrompt"], summary["tools"]) == (agent["systemPrompt"], agent["tools"])
    assert summary["messages"][: len(agent["messages"])] == agent["messages"]
    # (the response to it and its tool result stay after the cut: they are not sent again)
    assert (
        len(summary["messages"]) == len(agent["messages"]) + 1 and summary["messages"][-1]["role"] == "user"
    )
    assert cached_share(entry["usage"]) >= 0.9
    # the same session id and cache retention as the agent's requests
    lines = bill(tmp_path / "bill.jsonl")
    summary_line = next(line for line in lines if line["usage"] == entry["usage"])
    assert summary_line["sessionId"] == h.session.session_id and summary_line["cacheRetention"] == "short"
    # the instruction: no tool, which part it replaces (the turn's start up to the end of what was
    # sent: the cut is after it), pi's format
    instruction = last_text(summary)
    assert "do not call any tool" in instruction
    assert "<turn-start>\n[User]: build it\n</turn-start>" in instruction
    assert "to the end of the messages above" in instruction and "<first-kept-message>" not in instruction
    assert (
        "Create a concise checkpoint of the user's request" in instruction
        and "## Original Request" in instruction
    )
    assert SUMMARY in entry["summary"]


def test_a_manual_compaction_reads_its_prefix_from_the_cache(tmp_path):
    model = Model([{"text": "Ready."}, big(1), big(2), {"text": "Built."}])
    h = harness(tmp_path, model, {"enabled": False, "keepRecentTokens": 2500})
    asyncio.run(h.session.prompt("get ready"))
    asyncio.run(h.session.prompt("build it"))
    asyncio.run(h.session.compact("keep the numbers"))
    entry = compaction_of(h)
    summary = model.summaries()[0]
    agent = model.requests[model.requests.index(summary) - 1]
    assert summary["messages"][: len(agent["messages"])] == agent["messages"]
    # the cut is inside what was sent: the history request names the turn's start, the prefix
    # request the turn's start and the first message kept (the second output's call)
    history, prefix = model.summaries()
    assert "up to, but not including, the message that begins as follows" in last_text(history)
    assert "<turn-start>\n[User]: build it\n</turn-start>" in last_text(history)
    assert "Create a structured context checkpoint summary" in last_text(history)
    assert (
        "<turn-start>\n[User]: build it\n</turn-start>\n<first-kept-message>\n[Assistant tool calls]: bash("
        in (last_text(prefix))
    )
    assert all(last_text(r).endswith("Additional focus: keep the numbers") for r in (history, prefix))
    assert cached_share(entry["usage"]) >= 0.9


def test_setting_it_off_sends_pis_exact_request(tmp_path, monkeypatch):
    monkeypatch.setenv("TAU_FAUX_BILL", str(tmp_path / "bill.jsonl"))
    model = Model([big(1), big(2), {"text": "Built."}])
    h = harness(tmp_path, model, {"enabled": False, "cacheFriendly": False})
    asyncio.run(h.session.prompt("build it"))
    asyncio.run(h.session.compact())
    (summary,) = model.summaries()
    assert summary["systemPrompt"] == SUMMARIZATION_SYSTEM_PROMPT and summary["tools"] == []
    # one turn, cut inside it: pi's turn-prefix request
    assert len(summary["messages"]) == 1 and last_text(summary).startswith("# Conversation\n[User]: build it")
    line = next(line for line in bill(tmp_path / "bill.jsonl") if line["usage"] == compaction_of(h)["usage"])
    assert line["cacheRetention"] == "none" and line["sessionId"] != h.session.session_id


def test_a_request_that_would_not_fit_the_window_is_pis(tmp_path):
    # 2 x ~2,000 tokens of output, a 7,000-token window: the cached request leaves no room for the
    # summary (half the reserve), pi's serialized one (tool results cut to 2,000 characters) does
    model = Model([big(1), big(2), {"text": "Built."}])
    h = harness(tmp_path, model, {"enabled": False, "reserveTokens": 4000}, window=7_000)
    asyncio.run(h.session.prompt("build it"))
    asyncio.run(h.session.compact())
    (summary,) = model.summaries()
    assert summary["systemPrompt"] == SUMMARIZATION_SYSTEM_PROMPT


def test_an_answer_that_calls_a_tool_is_followed_by_pis_request(tmp_path):
    model = Model([big(1), big(2), {"text": "Built."}], tool_first=True)
    h = harness(tmp_path, model, {"enabled": False})
    asyncio.run(h.session.prompt("build it"))
    result = asyncio.run(h.session.compact())
    cached, pis = model.summaries()
    assert CACHED_REQUEST_PREAMBLE in last_text(cached) and pis["systemPrompt"] == SUMMARIZATION_SYSTEM_PROMPT
    entry = compaction_of(h)
    assert SUMMARY in result["summary"]
    # both calls were made, and both are billed to the compaction
    assert entry["usage"]["cacheRead"] > 0 and entry["usage"]["input"] > 0


def test_an_overflow_compaction_sends_pis_request(tmp_path):
    overflow = {
        "content": [],
        "stopReason": "error",
        "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
    }
    model = Model([big(1), big(2), overflow, {"text": "Built."}])
    h = harness(tmp_path, model, {"enabled": True})
    asyncio.run(h.session.prompt("build it"))
    summaries = model.summaries()
    assert summaries and all(r["systemPrompt"] == SUMMARIZATION_SYSTEM_PROMPT for r in summaries)
    assert next(e for e in h.events if e["type"] == "compaction_start")["reason"] == "overflow"


def test_a_cached_summary_after_a_compaction_holds_each_kept_message_once(tmp_path):
    """Issue 33, item 2: the request retried after an overflow compaction was sent with the
    compaction entry as its leaf; that entry comes after the entries it keeps, so the next cached
    summary took the kept messages for new ones and sent them twice."""
    overflow = {
        "content": [],
        "stopReason": "error",
        "errorMessage": "prompt is too long: 213462 tokens > 200000 maximum",
    }
    model = Model([{"text": "Ready."}, big(1), big(2), overflow, {"text": "Built."}])
    h = harness(tmp_path, model, {"enabled": True, "keepRecentTokens": 2500})
    asyncio.run(h.session.prompt("get ready"))
    asyncio.run(h.session.prompt("build it"))
    assert next(e for e in h.events if e["type"] == "compaction_start")["reason"] == "overflow"
    asyncio.run(h.session.compact(keep_recent_tokens=10))
    cached = model.summaries()[-1]
    assert CACHED_REQUEST_PREAMBLE in last_text(cached)
    retried = model.requests[model.requests.index(cached) - 1]  # the agent's request after the overflow
    assert cached["messages"][: len(retried["messages"])] == retried["messages"]
    sent = [json.dumps(m, sort_keys=True) for m in cached["messages"]]
    assert len(sent) == len(set(sent))  # each kept message once
    kept = [m for m in cached["messages"] if m["role"] == "toolResult"]
    assert [m["content"][0]["text"][:3] for m in kept] == ["222"]


def test_between_turns_a_disabled_compaction_never_estimates_the_context(tmp_path, monkeypatch):
    from tau.agent.compaction import estimate

    estimated: list[int] = []
    real = estimate.estimate_projected_context_tokens

    def counting(projection, branch):
        estimated.append(len(projection["messages"]))
        return real(projection, branch)

    monkeypatch.setattr(estimate, "estimate_projected_context_tokens", counting)
    steps = [{"bash": "echo one"}, {"bash": "echo two"}, {"text": "done"}]
    for enabled in (False, True):
        estimated.clear()
        h = Harness(tmp_path / str(enabled), steps, settings={"compaction": {"enabled": enabled}})
        asyncio.run(h.session.prompt("go"))
        assert h.session.messages[-1]["content"][0]["text"] == "done"
        assert bool(estimated) is enabled  # enabled: checked at each turn boundary
