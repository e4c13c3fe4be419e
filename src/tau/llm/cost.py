"""Usage → cost in USD, as pi-ai's ``calculateCost`` computes it, and usage totals.

Prices on :class:`~tau.llm.types.ModelCost` are USD per million tokens. Anthropic bills a 1-hour
cache write (``cacheWrite1h``, a part of ``cacheWrite``) at twice the base input price.

Two adjustments follow what the response reports, as pi-ai 1.6 makes them:

- **Service tier** (OpenAI Responses ``response.service_tier``): ``flex`` costs half,
  ``priority`` (and ``fast``) twice (``gpt-5.5``: 2.5 times) the standard price, every part.
- **OpenRouter's billed cost** (``usage.cost`` in its streamed usage): replaces the total, marked
  ``totalFromProvider: true``; with your own key (``is_byok``) the upstream inference cost is added.
  The parts stay the catalogue's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from tau.llm.types import Cost, Model, ModelCost, Usage, empty_usage

__all__ = [
    "add_usage",
    "apply_openrouter_cost",
    "apply_service_tier",
    "calculate_cost",
    "context_tokens",
    "is_openrouter",
    "service_tier_multiplier",
    "total_usage",
]

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


def service_tier_multiplier(model_id: str, tier: Any) -> float:
    """How much a request on ``tier`` costs against the standard price (pi's multipliers)."""
    if tier == "flex":
        return 0.5
    if tier in ("priority", "fast"):
        return 2.5 if model_id == "gpt-5.5" else 2.0
    return 1.0


def apply_service_tier(usage: Usage, tier: Any, model_id: str) -> None:
    """Scale ``usage["cost"]`` (from :func:`calculate_cost`) to the service tier the response reports."""
    multiplier = service_tier_multiplier(model_id, tier)
    if multiplier == 1.0:
        return
    cost = usage["cost"]
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        cost[key] *= multiplier
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]


def is_openrouter(model: Model) -> bool:
    return model.provider == "openrouter" or "openrouter.ai" in (model.base_url or "")


def _valid_cost(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def apply_openrouter_cost(usage: Usage, reported: Mapping[str, Any]) -> None:
    """Take OpenRouter's billed cost as the total when its usage accounts for it completely."""
    if not _valid_cost(reported.get("cost")):
        return
    cost = usage["cost"]
    if reported.get("is_byok") is False:
        cost["total"] = reported["cost"]
        cost["totalFromProvider"] = True
        return
    if reported.get("is_byok") is not True or not isinstance(reported.get("cost_details"), Mapping):
        return
    details = reported["cost_details"]
    upstream = details.get("upstream_inference_cost")
    if upstream is None and "upstream_inference_cost" in details:
        prompt = details.get("upstream_inference_prompt_cost")
        completions = details.get("upstream_inference_completions_cost")
        if not (_valid_cost(prompt) and _valid_cost(completions)):
            return
        upstream = prompt + completions
    if not _valid_cost(upstream):
        return
    cost["total"] = reported["cost"] + upstream
    cost["totalFromProvider"] = True


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
    added: Mapping[str, Any] = usage  # a record read from a file may lack a field: 0 then
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        total[key] += added.get(key, 0) or 0
    for optional in ("cacheWrite1h", "reasoning"):
        if added.get(optional):
            total[optional] = total.get(optional, 0) + added[optional]
    cost: Mapping[str, Any] = added.get("cost") or {}
    for part in ("input", "output", "cacheRead", "cacheWrite", "total"):
        total["cost"][part] += cost.get(part, 0) or 0
    return total


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of several usage records (tokens and cost)."""
    total = empty_usage()
    for usage in usages:
        add_usage(total, usage)
    return total
