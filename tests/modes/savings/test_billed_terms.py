"""``tau savings`` prices a session on the terms its requests were billed (issue 34).

A Responses service tier (flex half, priority twice the list price) and OpenRouter's own billed
total are in each request's recorded ``usage.cost``, as the adapters record them (pi's rules). The
report scales that model's prices by what its requests were billed against the list price, so the
measured figures and the stock-pi baseline of the same session are priced on the same terms.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))
pytest.importorskip("openai")

import test_openai_completions as completions
import test_openai_responses as responses
from loopback import LoopbackServer, run_stream

from tau.llm.registry import ModelRegistry
from tau.modes.savings import savings_for_branch

PROMPT = "You are running inside tau."


def _branch(*replies: dict) -> list[dict]:
    messages = [{"role": "system", "content": PROMPT, "timestamp": 0}]
    for number, reply in enumerate(replies):
        messages += [
            {"role": "user", "content": [{"type": "text", "text": f"q{number}"}], "timestamp": 1},
            reply,
        ]
    return [
        {
            "type": "message",
            "id": f"e{n:07d}",
            "parentId": f"e{n - 1:07d}" if n else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": message,
        }
        for n, message in enumerate(messages)
    ]


def _responses_reply(tier: str) -> dict:
    gpt = ModelRegistry().find("openai", "gpt-5.5")
    assert gpt is not None
    with LoopbackServer([responses.tier_stream(tier).reply()]) as server:
        routed = responses.model(server, id=gpt.id, cost=gpt.cost)
        _, message = run_stream(
            responses.provider.stream, routed, {"messages": [responses.user("hi")]}, responses.opts()
        )
    return message


@pytest.mark.parametrize(("tier", "factor"), [("flex", 0.5), ("priority", 2.5)])
def test_a_service_tier_prices_the_measured_and_the_baseline_figures(tier, factor):
    standard = savings_for_branch(_branch(_responses_reply("default")), "t.jsonl", progress=False)
    tiered = savings_for_branch(_branch(_responses_reply(tier)), "t.jsonl", progress=False)
    assert tiered["kind"] == standard["kind"] == "tau"
    for side in ("tau", "baseline"):
        assert tiered[side]["cost"] == pytest.approx(standard[side]["cost"] * factor)
    assert tiered["prices"]["openai/gpt-5.5"]["source"] == f"catalogue x {factor:g} as billed"


def test_openrouter_s_billed_total_prices_the_session():
    with LoopbackServer([completions.openrouter_reasoning_reply()]) as server:
        _, billed = run_stream(
            completions.provider.stream,
            completions.openrouter(server),
            completions.CONTEXT,
            completions.opts(),
        )
    assert billed["usage"]["cost"]["totalFromProvider"] is True
    listed = copy.deepcopy(billed)  # the same request at the list prices it was recorded with
    parts = listed["usage"]["cost"]
    parts["total"] = sum(parts[k] for k in ("input", "output", "cacheRead", "cacheWrite"))
    parts["totalFromProvider"] = False
    report = savings_for_branch(_branch(billed), "t.jsonl", progress=False)
    plain = savings_for_branch(_branch(listed), "t.jsonl", progress=False)
    ratio = billed["usage"]["cost"]["total"] / parts["total"]
    assert ratio != pytest.approx(1)
    for side in ("tau", "baseline"):
        assert report[side]["cost"] == pytest.approx(plain[side]["cost"] * ratio, rel=1e-5)
