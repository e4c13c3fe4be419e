"""The economic model: the request horizon and every decision reason.

The anchors of extensions.md §5.6.4 were made with the older debt formula (W × (r − 1), any positive
saving). decisions.md changes both: debt = max(0, W − (A − M)) × max(0, r − 1) and a saving under
1,000 tokens is ``non_positive_saving``. The expectations below are recomputed under those rules,
with s = 10 requests since the last compaction where an anchor gives none.
"""

from __future__ import annotations

import pytest

from tau.bundled.occ.economics import Economics, decide, estimate_horizon

ANCHOR = {
    "write_tokens": 80_000,
    "archive_tokens": 60_000,
    "samples": [4, 6, 5],
    "remaining_boundaries": 4,
    "average_increment": 2_000,
    "context_window": 200_000,
    "cache_write_read_ratio": 1,
    "prior_compaction_count": 0,
    "requests_since_compaction": 10,
}


def test_the_horizon_example():
    horizon = estimate_horizon([4, 6, 5], 3, 100_000, 200_000, 5_000)
    assert (horizon.mean, horizon.expected, horizon.window_upper, horizon.unbounded) == (5, 16, 20, 16)


def test_the_horizon_without_samples_window_or_growth():
    horizon = estimate_horizon([], 3, 100_000, None, None)
    assert (horizon.mean, horizon.unbounded, horizon.window_upper, horizon.expected) == (0, 1, None, 1)
    assert estimate_horizon([5], 2, 100, 1000, 0).window_upper is None
    assert estimate_horizon([5], 2, 2000, 1000, 10).window_upper == 0


def test_the_horizon_lower_bound_with_a_deviation_factor():
    economics = Economics(remaining_request_stddev_k=1)
    assert estimate_horizon([4, 6], 2, 0, None, None, economics).lower == 2.5
    assert estimate_horizon([4, 6, 5], 2, 0, None, None, economics).lower == 4


def test_economic():
    decision = decide(**ANCHOR)
    assert (decision.compact, decision.reason) == (True, "economic")
    # r = 1: writing costs what reading costs, so the debt and the breakeven are 0
    assert (decision.saving_tokens, decision.new_debt_tokens, decision.breakeven_requests) == (59_000, 0, 0)
    assert (
        decision.horizon.expected,
        decision.horizon.window_upper,
        decision.effective_horizon_requests,
    ) == (21, 60, 42)


def test_non_positive_saving():
    decision = decide(**{**ANCHOR, "archive_tokens": 500})
    assert (decision.compact, decision.reason, decision.breakeven_requests) == (
        False,
        "non_positive_saving",
        None,
    )


@pytest.mark.parametrize(("archive", "compact"), [(1_999, False), (2_000, True)])
def test_the_minimum_saving_is_1000_tokens(archive, compact):
    decision = decide(**{**ANCHOR, "archive_tokens": archive})
    assert decision.compact is compact
    assert decision.reason == ("economic" if compact else "non_positive_saving")


def test_window_protection():
    decision = decide(
        **{**ANCHOR, "write_tokens": 195_000, "cache_write_read_ratio": 100},
        economics=Economics(window_reserve_tokens=10_000),
    )
    assert (decision.compact, decision.reason) == (True, "window_protection")
    assert decision.new_debt_tokens == (195_000 - 59_000) * 99


def test_cache_ratio_unavailable():
    decision = decide(**{**ANCHOR, "cache_write_read_ratio": None})
    assert (decision.compact, decision.reason, decision.breakeven_requests) == (
        False,
        "cache_ratio_unavailable",
        None,
    )


def test_carried_debt():
    decision = decide(
        **{**ANCHOR, "prior_compaction_count": 1, "cache_write_read_ratio": 2}, debt_tokens=2_000_000
    )
    assert (decision.compact, decision.reason) == (False, "deferred_carried_debt")
    assert decision.new_debt_tokens == 21_000 and decision.breakeven_requests == pytest.approx(
        21_000 / 59_000
    )
    assert decision.combined_breakeven_requests == pytest.approx(2_021_000 / 59_000)


def test_combined_breakeven():
    # The public anchor (breakeven 5, combined 5 under W × (r − 1)): now a 100-token saving is too
    # small, and the figures follow the post-compaction debt.
    decision = decide(
        write_tokens=500,
        archive_tokens=200,
        memo_tokens=100,
        samples=[4, 6, 5],
        remaining_boundaries=4,
        average_increment=None,
        context_window=None,
        cache_write_read_ratio=2,
        prior_compaction_count=1,
        requests_since_compaction=10,
        debt_tokens=1000,
        repayment_tokens=200,
    )
    assert (decision.compact, decision.reason) == (False, "non_positive_saving")
    assert decision.new_debt_tokens == 400
    assert decision.breakeven_requests == 4
    assert decision.combined_breakeven_requests == pytest.approx(1400 / 300)


def test_the_cooldown_defers_economic_but_not_window_compaction():
    decision = decide(**{**ANCHOR, "prior_compaction_count": 1, "requests_since_compaction": 1})
    assert (decision.compact, decision.reason) == (False, "deferred_post_compaction_cooldown")
    assert (
        decide(**{**ANCHOR, "prior_compaction_count": 1, "requests_since_compaction": 2}).reason == "economic"
    )
    window = decide(**{**ANCHOR, "write_tokens": 190_000, "requests_since_compaction": 0})
    assert (window.compact, window.reason) == (True, "window_protection")


def test_horizon_unavailable():
    decision = decide(**{**ANCHOR, "samples": None})
    assert (decision.compact, decision.reason) == (False, "horizon_unavailable")


def test_subsequent_margin():
    # breakeven 14.x: under the 21-request horizon, but not with the 1.5 margin
    decision = decide(
        **{
            **ANCHOR,
            "prior_compaction_count": 1,
            "write_tokens": 150_000,
            "archive_tokens": 11_000,
            "cache_write_read_ratio": 2.05,
        }
    )
    assert decision.breakeven_requests == pytest.approx(140_000 * 1.05 / 10_000)
    assert (decision.compact, decision.reason) == (False, "deferred_subsequent_margin")


def test_deferred_economic_and_the_doubled_first_horizon():
    # first compaction: breakeven 27 is within twice the expected 21 requests
    first = decide(
        **{**ANCHOR, "write_tokens": 100_000, "archive_tokens": 11_000, "cache_write_read_ratio": 4}
    )
    assert first.breakeven_requests == 27 and first.horizon.expected == 21
    assert first.effective_horizon_requests == 42 and (first.compact, first.reason) == (True, "economic")
    later = decide(
        **{
            **ANCHOR,
            "write_tokens": 100_000,
            "archive_tokens": 11_000,
            "cache_write_read_ratio": 4,
            "prior_compaction_count": 1,
        }
    )
    assert (later.compact, later.reason) == (False, "deferred_economic")


def test_a_compact_decision_without_archive_is_not_compactable():
    decision = decide(**{**ANCHOR, "archive_tokens": 0}, memo_tokens=-5_000)
    assert (decision.compact, decision.reason) == (False, "native_not_compactable")


def test_no_economic_compaction_below_the_floor():
    """Issue 25: a context under keepRecentTokens plus the summary, or under 8% of the window when
    that is smaller, is never compacted for economy, however well the figures pay; at the floor the
    same figures compact, and window protection still overrides the floor."""
    from tau.bundled.occ.economics import MEMO_TOKENS, compaction_floor

    assert compaction_floor(20_000) == 20_000 + MEMO_TOKENS
    assert compaction_floor(20_000, 128_000) == 10_240 and compaction_floor(20_000, 400_000) == 21_000
    floor = compaction_floor(20_000, 200_000)
    assert floor == 16_000
    small = {**ANCHOR, "write_tokens": 15_000, "archive_tokens": 12_000}
    assert decide(**small).compact is True  # without a floor (the seed's rule) this compacts
    below = decide(**small, floor_tokens=floor)
    assert (below.compact, below.reason) == (False, "below_floor")
    at = decide(**{**small, "write_tokens": floor}, floor_tokens=floor)
    assert (at.compact, at.reason) == (True, "economic")
    tight = decide(**{**small, "context_window": 20_000}, floor_tokens=floor)
    assert (tight.compact, tight.reason) == (True, "window_protection")
