"""Whether compacting at a plan boundary pays (extensions.md §5.6.4, decisions.md "Context economy").

Compacting rewrites the cached prompt prefix: the post-compaction context is written to the cache
once instead of being read, at ``r`` times the read price. The saving is the removable history
``A`` minus the summary that replaces it (``M``), on every request left in the task. Compaction
pays when the debt ``max(0, W − (A − M)) × max(0, r − 1)`` is earned back within the expected
number of remaining requests, which is estimated from how many requests past plan steps took.
Near the end of the context window it is done regardless (window protection).

No economic compaction below a floor (issue 25): a context smaller than what the host's own
compaction keeps (``keepRecentTokens``) plus the summary that would replace the rest, or than 8% of
the context window when that is smaller, is left alone. Below it the debt looks small, but so is
what a compaction removes, and the model fetches much of it again afterwards (re-reads, re-runs:
priced as debt by :mod:`.state`): measured, compacting a 7k-token context cost 2.2x what not
compacting did, while on the economy benchmark's plan marathon compactions of 11–13k-token contexts
(of a 128k window) pay.
"""

from __future__ import annotations

import math
from typing import Literal

from tau.common.dataclass import dataclass

__all__ = [
    "DEFAULT_ECONOMICS",
    "FLOOR_WINDOW_SHARE",
    "MEMO_TOKENS",
    "MIN_SAVING_TOKENS",
    "Decision",
    "Economics",
    "Horizon",
    "Reason",
    "compaction_floor",
    "decide",
    "estimate_horizon",
]

MEMO_TOKENS = (
    1000  # the summary's estimated size (pi's native summary, DEFAULT_NATIVE_SUMMARY_TOKEN_ESTIMATE)
)
MIN_SAVING_TOKENS = 1000  # decisions.md: a smaller saving is not worth a compaction

Reason = Literal[
    "economic",
    "window_protection",
    "deferred_economic",
    "deferred_subsequent_margin",
    "deferred_carried_debt",
    "deferred_post_compaction_cooldown",
    "horizon_unavailable",
    "cache_ratio_unavailable",
    "native_not_compactable",
    "non_positive_saving",
    "below_floor",
]


@dataclass(frozen=True)
class Economics:
    """The model's constants."""

    remaining_request_scale: float = 1
    remaining_request_stddev_k: float = 0
    window_reserve_tokens: int = 16_384
    first_compaction_request_scale: float = 2
    subsequent_compaction_margin: float = 1.5
    minimum_requests_since_compaction: int = 2


DEFAULT_ECONOMICS = Economics()


@dataclass(frozen=True)
class Horizon:
    """How many requests the task probably has left.

    Attributes:
        mean: Mean requests per completed plan step.
        lower: The lower bound used (the mean when the standard-deviation factor is 0).
        unbounded: ``1 + floor(lower × remaining steps × scale)``.
        window_upper: Requests until the window fills at the average growth (``None``: unknown).
        expected: ``unbounded``, capped by ``window_upper`` when known.
    """

    mean: float
    lower: float
    unbounded: int
    window_upper: int | None
    expected: int


FLOOR_WINDOW_SHARE = 0.08  # of the context window, when that is below keepRecentTokens + the summary


def compaction_floor(
    keep_recent_tokens: float, context_window: int | None = None, memo_tokens: float = MEMO_TOKENS
) -> float:
    """The smallest context OCC compacts for economy: what the host's compaction keeps
    (``compaction.keepRecentTokens``, 20,000 by default) plus the summary, or 8% of the context
    window when that is smaller (10,240 tokens of a 128k window, 16,000 of a 200k one)."""
    floor = keep_recent_tokens + memo_tokens
    if context_window:
        floor = min(floor, FLOOR_WINDOW_SHARE * context_window)
    return floor


def estimate_horizon(
    samples: list[int],
    remaining_boundaries: int,
    context_tokens: float,
    context_window: int | None,
    average_increment: float | None,
    economics: Economics = DEFAULT_ECONOMICS,
) -> Horizon:
    """The request horizon from the requests each completed step took."""
    mean = sum(samples) / max(1, len(samples))
    lower = mean
    k = economics.remaining_request_stddev_k
    if k != 0:
        if len(samples) < 3:
            lower = mean * 0.5
        else:
            variance = sum((count - mean) ** 2 for count in samples) / (len(samples) - 1)
            lower = max(0.0, mean - k * math.sqrt(variance))
    unbounded = 1 + math.floor(lower * max(0, remaining_boundaries) * economics.remaining_request_scale)
    window_upper = None
    if context_window is not None and average_increment is not None and average_increment > 0:
        window_upper = max(0, math.floor((context_window - context_tokens) / average_increment))
    expected = unbounded if window_upper is None else min(unbounded, window_upper)
    return Horizon(mean, lower, unbounded, window_upper, expected)


@dataclass(frozen=True)
class Decision:
    """A compaction decision with every figure that led to it (tokens are read-price tokens)."""

    compact: bool
    reason: Reason
    write_tokens: float
    archive_tokens: float
    memo_tokens: float
    saving_tokens: float
    new_debt_tokens: float
    horizon: Horizon | None
    breakeven_requests: float | None
    combined_breakeven_requests: float | None
    effective_horizon_requests: float | None
    cache_write_read_ratio: float | None
    prior_compaction_count: int
    requests_since_compaction: int | None


def _reason(
    *,
    compressible: bool,
    floor: bool,
    window: bool,
    economic: bool,
    cooldown: bool,
    horizon: Horizon | None,
    breakeven: float | None,
    first: bool,
    base_economic: bool,
    margin_open: bool,
    debt_open: bool,
) -> Reason:
    if not compressible:
        return "non_positive_saving"
    if window:
        return "window_protection"
    if floor:
        return "below_floor"
    if economic:
        return "deferred_post_compaction_cooldown" if cooldown else "economic"
    if horizon is None:
        return "horizon_unavailable"
    if breakeven is None:
        return "cache_ratio_unavailable"
    if not first and base_economic and not margin_open:
        return "deferred_subsequent_margin"
    if not first and base_economic and not debt_open:
        return "deferred_carried_debt"
    return "deferred_economic"


def decide(
    *,
    write_tokens: float,
    archive_tokens: float,
    samples: list[int] | None,
    remaining_boundaries: int,
    average_increment: float | None,
    context_window: int | None,
    cache_write_read_ratio: float | None,
    prior_compaction_count: int,
    requests_since_compaction: int | None,
    debt_tokens: float = 0,
    repayment_tokens: float = 0,
    memo_tokens: float = MEMO_TOKENS,
    economics: Economics = DEFAULT_ECONOMICS,
    floor_tokens: float = 0,
) -> Decision:
    """Decide whether to compact now. ``samples=None`` means no request horizon is available.

    ``floor_tokens``: no economic compaction of a context smaller than this (window protection
    still applies); :func:`compaction_floor` gives OCC's.
    """
    w = write_tokens
    horizon = (
        None
        if samples is None
        else estimate_horizon(samples, remaining_boundaries, w, context_window, average_increment, economics)
    )
    saving = archive_tokens - memo_tokens
    ratio = None if cache_write_read_ratio is None else max(0.0, cache_write_read_ratio - 1)
    new_debt = 0.0 if ratio is None else max(0.0, w - saving) * ratio
    breakeven = new_debt / saving if saving > 0 and ratio is not None else None
    combined = (
        (debt_tokens + new_debt) / (repayment_tokens + saving)
        if ratio is not None and repayment_tokens + saving > 0
        else None
    )
    first = prior_compaction_count == 0
    effective = None
    if horizon is not None:
        upper = math.inf if horizon.window_upper is None else horizon.window_upper
        effective = (
            min(horizon.expected * economics.first_compaction_request_scale, upper)
            if first
            else horizon.expected
        )
    expected = horizon.expected if horizon is not None else None
    base_economic = expected is not None and expected > 0 and breakeven is not None and breakeven <= expected
    margin_open = (
        expected is not None
        and breakeven is not None
        and breakeven * economics.subsequent_compaction_margin <= expected
    )
    debt_open = expected is not None and combined is not None and combined <= expected
    if first:
        economic = (
            effective is not None and effective > 0 and breakeven is not None and breakeven <= effective
        )
    else:
        economic = base_economic and margin_open and debt_open
    window = context_window is not None and w >= context_window - economics.window_reserve_tokens
    compressible = saving >= MIN_SAVING_TOKENS
    cooldown = (
        requests_since_compaction is not None
        and requests_since_compaction < economics.minimum_requests_since_compaction
    )
    below = w < floor_tokens
    compact = compressible and (window or (economic and not cooldown and not below))
    reason = _reason(
        compressible=compressible,
        floor=below,
        window=window,
        economic=economic,
        cooldown=cooldown,
        horizon=horizon,
        breakeven=breakeven,
        first=first,
        base_economic=base_economic,
        margin_open=margin_open,
        debt_open=debt_open,
    )
    if compact and archive_tokens == 0:
        compact, reason = False, "native_not_compactable"
    return Decision(
        compact=compact,
        reason=reason,
        write_tokens=w,
        archive_tokens=archive_tokens,
        memo_tokens=memo_tokens,
        saving_tokens=saving,
        new_debt_tokens=new_debt,
        horizon=horizon,
        breakeven_requests=breakeven,
        combined_breakeven_requests=combined,
        effective_horizon_requests=effective,
        cache_write_read_ratio=cache_write_read_ratio,
        prior_compaction_count=prior_compaction_count,
        requests_since_compaction=requests_since_compaction,
    )
