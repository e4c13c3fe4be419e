"""The cache-aware cost of a sequence of requests (decisions.md "`tau savings`").

A request is counted as the ``faux`` provider bills it (:func:`tau.llm.providers.faux.estimate_usage`):
the whole request rendered as one text (each message tagged with its role; the system prompt and
the tool declarations, where the session holds them, included), a token per 4 UTF-16 code units.
The longest prefix it shares with the previous request is read from the cache (0.1 x the input
price) when that request was made less than five minutes before with the same model (the cache's
time to live, refreshed by every use); the rest is written (1.25 x). Uncached input, which recorded
usage may hold, is billed at the input price, output at the output price. So a replayed request's
figures follow from the session file alone, and for a faux session they are exactly its bill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, TypedDict, TypeGuard

from tau.common.dataclass import dataclass
from tau.llm.cost import calculate_cost
from tau.llm.types import Model

__all__ = [
    "CACHE_READ",
    "CACHE_TTL_MS",
    "CACHE_WRITE",
    "CacheBreaks",
    "Figures",
    "PriceBook",
    "Prices",
    "PromptCache",
    "add_figures",
    "empty_figures",
    "figures_of",
]

CACHE_WRITE = 1.25
CACHE_READ = 0.1
CACHE_TTL_MS = 5 * 60 * 1000
_PER_MILLION = 1_000_000


class Figures(TypedDict):
    """What a set of requests sends and costs. ``inputTokens`` = ``uncachedInput`` + ``cacheRead`` +
    ``cacheWrite``; ``cost`` is input and output, ``inputCost`` the cache-aware input part alone (USD)."""

    requests: int
    inputTokens: int
    uncachedInput: int
    cacheRead: int
    cacheWrite: int
    outputTokens: int
    cost: float
    inputCost: float
    cacheBreaks: int  # requests that read less from the cache than the previous request sent
    rewrittenTokens: int  # what those requests wrote again of the previous prompt


def empty_figures() -> Figures:
    return {
        "requests": 0,
        "inputTokens": 0,
        "uncachedInput": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "outputTokens": 0,
        "cost": 0.0,
        "inputCost": 0.0,
        "cacheBreaks": 0,
        "rewrittenTokens": 0,
    }


def add_figures(total: Figures, part: Figures) -> Figures:
    """Add ``part`` into ``total`` in place; returns ``total``."""
    for key in _KEYS:
        total[key] += part.get(key, 0)
    return total


def figures_of(report: Mapping[str, Any]) -> Figures:
    """The figures of a report that holds them among other keys (``parts``, ``placeholders``)."""
    figures = empty_figures()
    for key in _KEYS:
        figures[key] = report[key]
    return figures


FigureKey = Literal[
    "requests",
    "inputTokens",
    "uncachedInput",
    "cacheRead",
    "cacheWrite",
    "outputTokens",
    "cost",
    "inputCost",
    "cacheBreaks",
    "rewrittenTokens",
]
_KEYS: tuple[FigureKey, ...] = (
    "requests",
    "inputTokens",
    "uncachedInput",
    "cacheRead",
    "cacheWrite",
    "outputTokens",
    "cost",
    "inputCost",
    "cacheBreaks",
    "rewrittenTokens",
)


def count_request(
    figures: Figures, prices: Prices, *, uncached: int = 0, read: int = 0, write: int = 0, output: int = 0
) -> Figures:
    """Add one request with these token counts to ``figures`` in place; returns ``figures``."""
    figures["requests"] += 1
    figures["inputTokens"] += uncached + read + write
    figures["uncachedInput"] += uncached
    figures["cacheRead"] += read
    figures["cacheWrite"] += write
    figures["outputTokens"] += output
    figures["cost"] += prices.cost(read, write, output, uncached=uncached)
    figures["inputCost"] += prices.cost(read, write, 0, uncached=uncached)
    return figures


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, and where they come from (``catalogue``, ``recorded``, ``override``, ``none``)."""

    input: float
    output: float
    source: str

    def cost(self, cache_read: int, cache_write: int, output: int, *, uncached: int = 0) -> float:
        prompt = uncached + cache_read * CACHE_READ + cache_write * CACHE_WRITE
        return (prompt * self.input + output * self.output) / _PER_MILLION


UNPRICED = Prices(0.0, 0.0, "none")


@dataclass
class PriceBook:
    """Prices per ``(provider, model)``: an override, else the model registry, else the session's own
    recorded costs (``usage.cost`` divided by the tokens), else none (cost 0).

    Registry and recorded prices are scaled by how the session's requests of that model were billed
    against them (:meth:`learn`): a Responses service tier (flex half, priority twice the list
    price) or OpenRouter's own billed total (``totalFromProvider``) is in the recorded ``cost.total``
    of each request, so the measured figures and the stock-pi baseline are priced on those terms.
    """

    lookup: Any = None  # ``(provider, model_id) -> Model | None``
    override: Prices | None = None
    recorded: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # ``(provider, model)`` -> [recorded totals, the same usage at the list prices]
    billed: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    _cache: dict[tuple[str, str], Prices] = field(default_factory=dict)

    def learn(self, message: dict[str, Any]) -> None:
        """Remember the per-token rates an assistant message's recorded usage implies, and what it
        was billed against its list price."""
        usage = message.get("usage")
        if not isinstance(usage, dict) or not isinstance(cost := usage.get("cost"), dict):
            return
        self._learn_billed(_key(message), usage, cost)
        rates = self.recorded.setdefault(_key(message), {})
        for tokens_key, cost_key, factor, rate in (
            ("input", "input", 1.0, "input"),
            ("cacheWrite", "cacheWrite", CACHE_WRITE, "input"),
            ("cacheRead", "cacheRead", CACHE_READ, "input"),
            ("output", "output", 1.0, "output"),
        ):
            tokens, paid = usage.get(tokens_key), cost.get(cost_key)
            if rate not in rates and _number(tokens) and tokens > 0 and _number(paid) and paid > 0:
                rates[rate] = paid / tokens / factor * _PER_MILLION

    def _learn_billed(self, key: tuple[str, str], usage: dict[str, Any], cost: dict[str, Any]) -> None:
        total = cost.get("total")
        if not _number(total) or total <= 0:
            return
        model = self.lookup(*key) if self.lookup is not None else None
        if isinstance(model, Model) and (model.cost.input or model.cost.output):
            tokens = {k: usage.get(k) if _number(usage.get(k)) else 0 for k in _USAGE_TOKENS}
            listed = calculate_cost(model, tokens)["total"]  # type: ignore[arg-type]
        else:  # the recorded parts are the list prices of their day (a tier scales them too)
            listed = sum(part for k in _COST_PARTS if _number(part := cost.get(k)))
        if listed > 0:
            sums = self.billed.setdefault(key, [0.0, 0.0])
            sums[0] += total
            sums[1] += listed

    def billed_factor(self, provider: str, model_id: str) -> float:
        """What the session's requests of this model were billed, per unit of their list price."""
        recorded, listed = self.billed.get((provider, model_id), (0.0, 0.0))
        factor = recorded / listed if listed > 0 else 1.0
        return 1.0 if abs(factor - 1.0) <= 1e-6 else factor

    def prices(self, provider: str, model_id: str) -> Prices:
        if self.override is not None:
            return self.override
        key = (provider, model_id)
        if key not in self._cache:
            self._cache[key] = self._resolve(key)
        return self._cache[key]

    def _resolve(self, key: tuple[str, str]) -> Prices:
        model = self.lookup(*key) if self.lookup is not None else None
        if isinstance(model, Model) and (model.cost.input or model.cost.output):
            return self._as_billed(Prices(model.cost.input, model.cost.output, "catalogue"), key)
        rates = self.recorded.get(key, {})
        if "input" in rates:
            listed = Prices(round(rates["input"], 6), round(rates.get("output", 0.0), 6), "recorded")
            return self._as_billed(listed, key)
        return UNPRICED

    def _as_billed(self, listed: Prices, key: tuple[str, str]) -> Prices:
        factor = self.billed_factor(*key)
        if factor == 1.0:
            return listed
        source = f"{listed.source} x {factor:.6g} as billed"
        return Prices(round(listed.input * factor, 6), round(listed.output * factor, 6), source)


_USAGE_TOKENS = ("input", "output", "cacheRead", "cacheWrite", "cacheWrite1h")
_COST_PARTS = ("input", "output", "cacheRead", "cacheWrite")


def _key(message: dict[str, Any]) -> tuple[str, str]:
    return str(message.get("provider", "")), str(message.get("model", ""))


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class CacheBreaks:
    """Counts the requests whose cached prefix is shorter than the whole previous prompt (same model,
    within the cache's time to live): each one wrote again part of what was already cached."""

    previous: int | None = None
    model: tuple[str, str] | None = None
    last_ms: int | None = None

    def request(
        self, figures: Figures, read: int, prompt: int, at_ms: int | None, model: tuple[str, str]
    ) -> None:
        warm = self.model == model and (
            at_ms is None or self.last_ms is None or at_ms - self.last_ms <= CACHE_TTL_MS
        )
        if warm and self.previous is not None and read < self.previous:
            figures["cacheBreaks"] += 1
            figures["rewrittenTokens"] += self.previous - read
        self.previous, self.model = prompt, model
        if at_ms is not None:
            self.last_ms = at_ms


@dataclass
class PromptCache:
    """The provider's prompt cache across one replay: the previous request, its model and time."""

    _previous: dict[str, list[str]] = field(default_factory=dict)
    model: tuple[str, str] | None = None
    last_used_ms: int | None = None

    def request(self, messages: list[Any], at_ms: int | None, model: tuple[str, str]) -> tuple[int, int]:
        """``(cacheRead, cacheWrite)`` of a request sending ``messages`` (model messages, system included)."""
        from tau.llm.providers.faux import estimate_usage

        warm = self.model == model and (
            at_ms is None or self.last_used_ms is None or at_ms - self.last_used_ms <= CACHE_TTL_MS
        )
        if not warm:
            self._previous.clear()
        usage = estimate_usage(messages, [], session_id="replay", prompt_cache=self._previous)
        self.model = model
        if at_ms is not None:
            self.last_used_ms = at_ms
        return usage["cacheRead"], usage["cacheWrite"]
