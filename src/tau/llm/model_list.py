"""``tau --list-models [QUERY]``: the registry's models as a table (provider, id, context window,
output limit, prices per million tokens), filtered by words or an id's subsequence."""

from __future__ import annotations

import sys
from typing import TextIO

from tau.llm.registry import ModelRegistry
from tau.llm.types import Model

__all__ = ["print_models"]


def _tokens(count: int) -> str:
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(count)


def _price(value: float) -> str:
    return "-" if not value else f"{value:g}"


def _matches_query(model: Model, query: str) -> bool:
    haystack = f"{model.provider}/{model.id} {model.name}".lower()
    model_id = model.id.lower()
    for token in query.lower().split():
        if token in haystack:
            continue
        position = 0
        for char in token:  # else a subsequence of the id ("gpt55" finds gpt-5.5)
            position = model_id.find(char, position) + 1
            if position == 0:
                return False
    return True


def print_models(query: str = "", registry: ModelRegistry | None = None, out: TextIO | None = None) -> int:
    """``tau --list-models [QUERY]``: a table of known models, with prices per million tokens."""
    out = out or sys.stdout
    registry = registry or ModelRegistry()
    if registry.error:
        print(f"Warning: errors loading models.json:\n{registry.error}", file=sys.stderr)
    models = [m for m in registry.get_all() if not query or _matches_query(m, query)]
    if not models:
        print(f'No models matching "{query}"' if query else "No models available.", file=out)
        return 1 if query else 0
    models.sort(key=lambda m: (m.provider, m.id))
    header = (
        "provider",
        "model",
        "context",
        "max-out",
        "thinking",
        "images",
        "in $/M",
        "out $/M",
        "cache r/w $/M",
        "key",
    )
    rows = [header] + [
        (
            m.provider,
            m.id,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
            _price(m.cost.input),
            _price(m.cost.output),
            f"{_price(m.cost.cacheRead)}/{_price(m.cost.cacheWrite)}",
            "yes" if registry.has_configured_auth(m) else "no",
        )
        for m in models
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(), file=out
        )
    return 0
