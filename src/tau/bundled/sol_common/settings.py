"""The ``"sol"`` block of ``settings.json``: the context-economy switches and their validation.

Keys follow SoL-Pi's ``sol-pi.json`` (extensions.md §5.1). Sources are validated one by one, so an
error names the file that holds the offending value; later sources override earlier ones key by key.
The messages read like the host's settings warnings (file, key, expected type, what was given)
rather than SoL-Pi's, which name an internal project (issue 19).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["SOL_KEYS", "SolConfigError", "SolSettings", "parse_sol_settings"]


class SolConfigError(ValueError):
    """A ``sol`` settings value that cannot be used; the message names the key and the file."""


_BOOLEANS = {
    "actionFusion": "action_fusion",
    "observationPack": "observation_pack",
    "evidencePreservingReducer": "evidence_preserving_reducer",
    "evidenceExtractors": "evidence_extractors",
    "onlineContextCompact": "online_context_compact",
    "stalePacking": "stale_packing",
    "swapBatching": "swap_batching",
}
_STRINGS = {"reducerProvider": "reducer_provider", "reducerModel": "reducer_model"}
_POSITIVE_INTEGERS = {
    "observationPackHeadBytes": "observation_pack_head_bytes",
    "observationPackTailBytes": "observation_pack_tail_bytes",
    "staleAfterTurns": "stale_after_turns",
    "staleMaxTurns": "stale_max_turns",
    "staleMinTokens": "stale_min_tokens",
}
_RATIO = {"cacheWriteReadRatio": "cache_write_read_ratio"}
_FRACTIONS = {"staleRefetchChance": "stale_refetch_chance"}
SOL_KEYS: tuple[str, ...] = (*_BOOLEANS, *_STRINGS, *_RATIO, *_POSITIVE_INTEGERS, *_FRACTIONS)


@dataclass(frozen=True)
class SolSettings:
    """The effective ``sol`` settings (tau's default profile: fusion and packing on).

    Attributes:
        action_fusion: Register ``edit``/``write`` with ``then_run``.
        observation_pack: Replace large old tool results by placeholders.
        evidence_preserving_reducer: The reducer's model tier (opt-in): a reducer model picks the
            quotes of logs no extractor knows.
        evidence_extractors: The reducer's model-free tier (on): receipts of known log formats
            built by deterministic extractors.
        online_context_compact: Online Context Compact (opt-in).
        reducer_provider: The reducer model's provider (``None``: the session's).
        reducer_model: The reducer model id (``None``: the session's).
        cache_write_read_ratio: Cache write price over cache read price.
        observation_pack_head_bytes: Placeholder head excerpt budget (UTF-8 bytes).
        observation_pack_tail_bytes: Placeholder tail excerpt budget (UTF-8 bytes).
        stale_packing: ObservationPack also packs stale context: superseded and old tool results,
            old ``edit``/``write`` arguments.
        swap_batching: ObservationPack applies its pending swaps together, when the cache economics
            say they pay (off: each one as soon as it is due).
        stale_after_turns: The window: assistant turns without use after which a tool result or
            edit argument is old (the window a session starts with).
        stale_max_turns: How far the window widens in a session whose model refetches packed content.
        stale_min_tokens: The smallest result (estimated tokens) stale packing touches.
        stale_refetch_chance: The chance that an old result is needed again, which its packing
            must pay for (``0``: no economic floor, only ``stale_min_tokens``).
    """

    action_fusion: bool = True
    observation_pack: bool = True
    evidence_preserving_reducer: bool = False
    evidence_extractors: bool = True
    online_context_compact: bool = False
    reducer_provider: str | None = None
    reducer_model: str | None = None
    cache_write_read_ratio: float = 12.5
    observation_pack_head_bytes: int = 512
    observation_pack_tail_bytes: int = 512
    stale_packing: bool = True
    swap_batching: bool = True
    stale_after_turns: int = 4
    stale_max_turns: int = 12
    stale_min_tokens: int = 120
    stale_refetch_chance: float = 0.1


_OFF = "the context-economy mechanisms (sol) are off"


def _shown(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:59] + "…"


def _problem(path: str, key: str, expected: str, value: Any) -> SolConfigError:
    return SolConfigError(f"{path}: sol.{key} must be {expected}, got {_shown(value)}; {_OFF}")


def _checked(key: str, value: Any, path: str) -> Any:
    if key in _BOOLEANS:
        if not isinstance(value, bool):
            raise _problem(path, key, "a boolean (true or false)", value)
        return value
    if key in _STRINGS:
        if not isinstance(value, str) or not value.strip():
            raise _problem(path, key, "a non-empty string", value)
        return value.strip()
    if key in _RATIO:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:
            raise _problem(path, key, "a finite non-negative number", value)
        return float(value)
    if key in _FRACTIONS:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or not 0 <= value <= 1:
            raise _problem(path, key, "a number from 0 to 1", value)
        return float(value)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise _problem(path, key, "a positive integer", value)
    return value


def _validated(block: Any, path: str) -> dict[str, Any]:
    if not isinstance(block, dict):
        raise SolConfigError(f"{path}: sol must be an object, got {_shown(block)}; {_OFF}")
    values: dict[str, Any] = {}
    for key, value in block.items():
        if key not in SOL_KEYS:
            raise SolConfigError(
                f"{path}: sol has no key {json.dumps(key)} (known: {', '.join(SOL_KEYS)}); {_OFF}"
            )
        values[key] = _checked(key, value, path)
    return values


def parse_sol_settings(sources: Iterable[tuple[str, Any]]) -> SolSettings:
    """Validate each ``(path, sol block)`` in order and merge them key by key (later wins).

    Raises:
        SolConfigError: one line naming ``path``, the key, what it must be and what it is.
    """
    merged: dict[str, Any] = {}
    for path, block in sources:
        merged.update(_validated(block, path))
    fields = {**_BOOLEANS, **_STRINGS, **_RATIO, **_POSITIVE_INTEGERS, **_FRACTIONS}
    return SolSettings(**{fields[key]: value for key, value in merged.items()})
