"""``positions`` finds what the straightforward comprehension finds, in both of its regimes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.common.positions import positions

values = st.sampled_from(["system", "user", "assistant", None, 0, 1, True, "custom"])


@given(st.lists(values, max_size=80), values, st.integers(0, 5))
def test_positions_are_the_comprehension_s(items, value, start):
    assert positions(items, value, start) == [start + i for i, item in enumerate(items) if item == value]


def test_rare_and_frequent_values_take_both_paths():
    items = ["user", "assistant"] * 50 + ["system"] + ["user"] * 10
    assert positions(items, "system", 3) == [103]
    assert positions(items, "assistant") == list(range(1, 100, 2))
    assert positions(items, "custom") == []
