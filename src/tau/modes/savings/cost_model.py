"""The cache-aware cost of a sequence of requests (decisions.md "`tau savings`").

Every prompt token is either read from the provider's prompt cache or written to it: the messages a
request shares, as a prefix, with the previous request are read (0.1 x the input price) when that
request was made less than five minutes before (the cache's time to live, refreshed by every use);
the rest is written (1.25 x). Output is billed at the output price. Tokens are pi's estimate
(characters / 4 per message), so a request's figures follow from the session file alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from tau.llm.types import Model

__all__ = [
    "CACHE_READ",
    "CACHE_TTL_MS",
    "CACHE_WRITE",
    "CacheModel",
    "Figures",
    "PriceBook",
    "Prices",
    "add_figures",
    "empty_figures",
]

CACHE_WRITE = 1.25
CACHE_READ = 0.1
CACHE_TTL_MS = 5 * 60 * 1000
_PER_MILLION = 1_000_000


class Figures(TypedDict):
    """What a set of requests sends and costs. ``inputTokens`` = ``cacheRead`` + ``cacheWrite``;
    ``cost`` is input and output, ``inputCost`` the cache-aware input part alone (USD)."""

    requests: int
    inputTokens: int
    cacheRead: int
    cacheWrite: int
    outputTokens: int
    cost: float
    inputCost: float


def empty_figures() -> Figures:
    return {
        "requests": 0,
        "inputTokens": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "outputTokens": 0,
        "cost": 0.0,
        "inputCost": 0.0,
    }


def add_figures(total: Figures, part: Figures) -> Figures:
    """Add ``part`` into ``total`` in place; returns ``total``."""
    for key in ("requests", "inputTokens", "cacheRead", "cacheWrite", "outputTokens", "cost", "inputCost"):
        total[key] += part[key]  # type: ignore[literal-required]
    return total


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, and where they come from (``catalogue``, ``recorded``, ``override``, ``none``)."""

    input: float
    output: float
    source: str

    def cost(self, cache_read: int, cache_write: int, output: int) -> float:
        prompt = cache_read * CACHE_READ + cache_write * CACHE_WRITE
        return (prompt * self.input + output * self.output) / _PER_MILLION


UNPRICED = Prices(0.0, 0.0, "none")


@dataclass
class PriceBook:
    """Prices per ``(provider, model)``: an override, else the model registry, else the session's own
    recorded costs (``usage.cost`` divided by the tokens), else none (cost 0)."""

    lookup: Any = None  # ``(provider, model_id) -> Model | None``
    override: Prices | None = None
    recorded: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    _cache: dict[tuple[str, str], Prices] = field(default_factory=dict)

    def learn(self, message: dict[str, Any]) -> None:
        """Remember the per-token rates an assistant message's recorded usage implies."""
        usage = message.get("usage")
        cost = usage.get("cost") if isinstance(usage, dict) else None
        if not isinstance(cost, dict):
            return
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
            return Prices(model.cost.input, model.cost.output, "catalogue")
        rates = self.recorded.get(key, {})
        if "input" in rates:
            return Prices(round(rates["input"], 6), round(rates.get("output", 0.0), 6), "recorded")
        return UNPRICED


def _key(message: dict[str, Any]) -> tuple[str, str]:
    return str(message.get("provider", "")), str(message.get("model", ""))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class CacheModel:
    """The prompt cache of one replay: the previous request's messages and when it was made."""

    keys: list[Any] = field(default_factory=list)
    model: tuple[str, str] | None = None
    last_used_ms: int | None = None

    def request(
        self, keys: list[Any], tokens: list[int], at_ms: int | None, model: tuple[str, str]
    ) -> tuple[int, int]:
        """``(cacheRead, cacheWrite)`` of a request whose messages have ``keys`` and ``tokens``."""
        warm = self.model == model and (
            at_ms is None or self.last_used_ms is None or at_ms - self.last_used_ms <= CACHE_TTL_MS
        )
        shared = 0
        if warm:
            limit = min(len(keys), len(self.keys))
            while shared < limit and keys[shared] == self.keys[shared]:
                shared += 1
        read = sum(tokens[:shared])
        self.keys, self.model = keys, model
        if at_ms is not None:
            self.last_used_ms = at_ms
        return read, sum(tokens) - read
