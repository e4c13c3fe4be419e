"""Compaction and branch-summary settings (pi 1.6 ``compaction.*``, ``branchSummary.*``) and the threshold."""

from __future__ import annotations

from typing import Any

from tau.common.dataclass import dataclass
from tau.common.jsjson import dumps_str

__all__ = ["BranchSummarySettings", "CompactionSettings", "should_compact"]

_MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True)
class CompactionSettings:
    """``settings.json`` ``compaction`` block, after model overrides were resolved.

    Attributes:
        enabled: automatic (threshold and overflow) compaction; manual ``/compact`` ignores it.
        reserve_tokens: head-room kept free below the context window; compaction triggers above
            ``contextWindow - reserve_tokens``.
        keep_recent_tokens: estimated tokens of recent conversation kept verbatim after a compaction.
        cache_friendly: summary requests reuse the prefix the last request cached (tau's
            ``compaction.cacheFriendly``); ``False`` sends pi's exact requests.
    """

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    cache_friendly: bool = True

    @classmethod
    def from_settings(cls, settings: dict[str, Any], model_key: str | None = None) -> CompactionSettings:
        """Resolve the merged ``settings.json`` for the model ``"provider/modelId"``.

        Each token value falls back on its own: ``compaction.modelOverrides[model_key]``, then
        ``compaction``, then the default. ``enabled`` is global. A value that is not a
        non-negative safe integer raises ``ValueError`` naming the setting, as pi does.
        """
        block = settings.get("compaction")
        block = block if isinstance(block, dict) else {}
        enabled = block.get("enabled")
        cache_friendly = block.get("cacheFriendly")
        return cls(
            enabled=cls.enabled if enabled is None else bool(enabled),
            reserve_tokens=_token_setting(block, "reserveTokens", model_key, cls.reserve_tokens),
            keep_recent_tokens=_token_setting(block, "keepRecentTokens", model_key, cls.keep_recent_tokens),
            cache_friendly=cls.cache_friendly if cache_friendly is None else bool(cache_friendly),
        )


@dataclass(frozen=True)
class BranchSummarySettings:
    """``settings.json`` ``branchSummary`` block.

    Attributes:
        reserve_tokens: the branch being left is summarized within ``contextWindow - reserve_tokens``.
        skip_prompt: the interactive tree view does not ask whether to summarize.
    """

    reserve_tokens: int = 16384
    skip_prompt: bool = False

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> BranchSummarySettings:
        """Read ``branchSummary.reserveTokens`` and ``branchSummary.skipPrompt`` with their defaults."""
        block = settings.get("branchSummary")
        block = block if isinstance(block, dict) else {}
        reserve = block.get("reserveTokens")
        skip = block.get("skipPrompt")
        return cls(
            reserve_tokens=cls.reserve_tokens if reserve is None else reserve,
            skip_prompt=cls.skip_prompt if skip is None else bool(skip),
        )


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """True when ``context_tokens`` leaves less than ``reserve_tokens`` of the window free."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens


def _is_token_count(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value == int(value) and 0 <= value <= _MAX_SAFE_INTEGER


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else dumps_str(value)


def _token_setting(block: dict[str, Any], field: str, model_key: str | None, default: int) -> int:
    ordinary = block.get(field)
    if ordinary is not None and not _is_token_count(ordinary):
        raise ValueError(
            f"Invalid compaction.{field} setting: {_shown(ordinary)}. Expected a non-negative safe integer."
        )
    overrides = block.get("modelOverrides")
    entry = overrides.get(model_key) if isinstance(overrides, dict) and model_key is not None else None
    if entry is not None and not isinstance(entry, dict):
        raise ValueError(
            f'Invalid compaction.modelOverrides["{model_key}"] setting: {_shown(entry)}. Expected an object.'
        )
    override = entry.get(field) if entry is not None else None
    if override is not None and not _is_token_count(override):
        raise ValueError(
            f'Invalid compaction.modelOverrides["{model_key}"].{field} setting: {_shown(override)}. '
            "Expected a non-negative safe integer."
        )
    for value in (override, ordinary):
        if value is not None:
            return int(value)
    return default
