"""Usage → cost in USD, as pi-ai's ``calculateCost`` computes it, and usage totals.

Prices on :class:`~tau.llm.types.ModelCost` are USD per million tokens. Anthropic bills a 1-hour
cache write (``cacheWrite1h``, a part of ``cacheWrite``) at twice the base input price.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tau.llm.types import Cost, Model, ModelCost, Usage, empty_usage

__all__ = ["add_usage", "calculate_cost", "context_tokens", "total_usage"]

_PER_MILLION = 1_000_000


def calculate_cost(model: Model | ModelCost, usage: Usage) -> Cost:
    """Set ``usage["cost"]`` from the token counts and the model's prices; returns the cost dict.

    Like pi, the cost is written in place and marked ``totalFromProvider: false``.
    """
    rates = _rates_for(model.cost if isinstance(model, Model) else model, usage)
    long_write = usage.get("cacheWrite1h", 0) or 0
    short_write = usage["cacheWrite"] - long_write
    cost = usage.setdefault("cost", empty_usage()["cost"])
    cost["input"] = rates.input / _PER_MILLION * usage["input"]
    cost["output"] = rates.output / _PER_MILLION * usage["output"]
    cost["cacheRead"] = rates.cacheRead / _PER_MILLION * usage["cacheRead"]
    cost["cacheWrite"] = (rates.cacheWrite * short_write + rates.input * 2 * long_write) / _PER_MILLION
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    cost["totalFromProvider"] = False
    return cost


def _rates_for(cost: ModelCost, usage: Usage) -> ModelCost:
    """The base prices, or the tier with the highest threshold below this request's input."""
    input_tokens = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    rates, threshold = cost, -1.0
    for tier in cost.tiers:
        above = tier.get("inputTokensAbove", 0)
        if input_tokens > above and above > threshold:
            rates = ModelCost(
                tier.get("input", 0),
                tier.get("output", 0),
                tier.get("cacheRead", 0),
                tier.get("cacheWrite", 0),
            )
            threshold = above
    return rates


def context_tokens(usage: Usage) -> int:
    """The context size a usage implies: ``totalTokens``, else the sum of its parts (pi's rule)."""
    return usage.get("totalTokens") or (
        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    )


def add_usage(total: Usage, usage: Usage) -> Usage:
    """Add ``usage`` into ``total`` (tokens and cost), in place; returns ``total``."""
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        total[key] += usage.get(key, 0) or 0  # type: ignore[literal-required]
    for key in ("cacheWrite1h", "reasoning"):
        if usage.get(key):
            total[key] = total.get(key, 0) + usage[key]  # type: ignore[literal-required]
    cost: dict[str, Any] = usage.get("cost") or {}
    for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
        total["cost"][key] += cost.get(key, 0) or 0  # type: ignore[literal-required]
    return total


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of several usage records (tokens and cost)."""
    total = empty_usage()
    for usage in usages:
        add_usage(total, usage)
    return total
