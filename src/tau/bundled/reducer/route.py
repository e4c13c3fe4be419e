"""Which model the reducer's model tier calls, and what its calls cost against the session model's.

A configured ``sol.reducerProvider`` / ``sol.reducerModel`` always wins (a missing one is the
session's provider or model). With neither set, the reducer uses the cheapest current model of the
session's provider that the model registry knows: the one with the lowest input price (then output
price) among the provider's models that have a price, so an unpriced ``models.json`` entry is never
taken for a free one; the session's own model when none has a price, and on a tie.
"""

from __future__ import annotations

from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["Route", "cheapest_model", "choose_route", "price_ratio"]


@dataclass(frozen=True)
class Route:
    """The reducer model and why it was chosen: ``configured``, ``cheapest`` or ``session``."""

    provider: str
    model_id: str
    source: str

    def figures(self) -> dict[str, str]:
        return {"provider": self.provider, "model": self.model_id, "source": self.source}


def _price(model: Any) -> tuple[float, float]:
    cost = getattr(model, "cost", None)
    return float(getattr(cost, "input", 0) or 0), float(getattr(cost, "output", 0) or 0)


def _models(registry: Any) -> list[Any]:
    for name in ("get_available", "get_all"):
        getter = getattr(registry, name, None)
        if callable(getter):
            try:
                return list(getter())
            except Exception:  # a registry that cannot list is one that knows no alternative
                return []
    return []


def cheapest_model(registry: Any, current: Any) -> Any:
    """The cheapest priced model of ``current``'s provider (``current`` itself on a tie or when none is priced)."""
    provider = getattr(current, "provider", None)
    priced = [
        model
        for model in _models(registry)
        if getattr(model, "provider", None) == provider
        and any(_price(model))
        and "text" in (getattr(model, "input", ("text",)) or ("text",))
    ]
    if not priced:
        return current
    best = min(priced, key=lambda model: (*_price(model), getattr(model, "id", "")))
    if any(_price(current)) and _price(current) <= _price(best):
        return current
    return best


def choose_route(settings: Any, registry: Any, current: Any) -> Route | None:
    """The reducer model for a session whose model is ``current``."""
    provider = settings.reducer_provider or getattr(current, "provider", None)
    if settings.reducer_provider or settings.reducer_model:
        model_id = settings.reducer_model or getattr(current, "id", None)
        return Route(provider, model_id, "configured") if provider and model_id else None
    if current is None:
        return None
    chosen = cheapest_model(registry, current)
    source = "session" if chosen is current else "cheapest"
    return Route(chosen.provider, chosen.id, source)


def price_ratio(registry: Any, route: Route, current: Any) -> float | None:
    """The reducer model's input price over the session model's (``None`` when either is unknown)."""
    find = getattr(registry, "find", None)
    model = find(route.provider, route.model_id) if callable(find) else None
    mine, theirs = _price(model)[0], _price(current)[0]
    return mine / theirs if mine > 0 and theirs > 0 else None
