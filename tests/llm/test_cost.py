"""Usage → cost as pi-ai's calculateCost, and usage totals."""

from __future__ import annotations

import pytest

from tau.common import jsjson
from tau.llm.cost import calculate_cost, context_tokens, total_usage
from tau.llm.types import Model, ModelCost, empty_usage

SONNET = Model(id="s", provider="anthropic", api="anthropic-messages", cost=ModelCost(3, 15, 0.3, 3.75))


def usage(**counts):
    record = empty_usage()
    record.update(counts)
    return record


def test_cost_per_million_with_one_hour_cache_writes_at_twice_input():
    record = usage(input=1000, output=500, cacheRead=20_000, cacheWrite=3000, cacheWrite1h=1000)
    cost = calculate_cost(SONNET, record)
    assert cost["input"] == pytest.approx(0.003)
    assert cost["output"] == pytest.approx(0.0075)
    assert cost["cacheRead"] == pytest.approx(0.006)
    assert cost["cacheWrite"] == pytest.approx((3.75 * 2000 + 3 * 2 * 1000) / 1e6)
    assert cost["total"] == pytest.approx(
        sum(cost[k] for k in ("input", "output", "cacheRead", "cacheWrite"))
    )
    assert cost["totalFromProvider"] is False
    # Serialized as pi would (JS number format).
    assert jsjson.dumps_str(cost["input"]) == "0.003"


def test_context_tokens_prefers_the_total():
    assert context_tokens(usage(input=1, output=2, cacheRead=3, cacheWrite=4)) == 10
    assert context_tokens(usage(input=1, output=2, totalTokens=99)) == 99


def test_totals_add_tokens_and_cost():
    a = usage(input=10, output=5, totalTokens=15)
    a["cost"]["total"] = 0.5
    b = usage(input=1, output=1, cacheRead=100, totalTokens=102, reasoning=3)
    b["cost"]["total"] = 0.25
    total = total_usage([a, b])
    assert (total["input"], total["output"], total["cacheRead"], total["totalTokens"]) == (11, 6, 100, 117)
    assert total["reasoning"] == 3
    assert total["cost"]["total"] == pytest.approx(0.75)
