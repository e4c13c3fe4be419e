"""Streaming line selection equals selecting from the whole text (pi's two read paths agree)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.tools.read_lines import select_from_chunks, select_from_text


def chunked(data: bytes, size: int):
    return (data[i : i + size] for i in range(0, len(data), size))


def both(data: bytes, start: int, limit: int | None, size: int):
    streamed = select_from_chunks(chunked(data, size), start, limit)
    whole = select_from_text(data.decode("utf-8", "replace"), start, limit)
    return streamed, whole


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"\n", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\xac", b"xyz\n", b""]), max_size=60
    ).map(b"".join),
    start=st.integers(0, 12),
    limit=st.none() | st.integers(0, 12),
    size=st.integers(1, 7),
)
def test_small_inputs(data, start, limit, size):
    streamed, whole = both(data, start, limit, size)
    assert streamed == whole


def test_inputs_over_the_caps():
    rng = random.Random(7)
    for _ in range(12):
        lines = []
        for _ in range(rng.randint(1, 2600)):
            lines.append(
                ("é" if rng.random() < 0.2 else "x")
                * rng.choice([0, 1, 30, 200, 60000 if rng.random() < 0.01 else 5])
            )
        text = "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")
        data = text.encode()
        start = rng.choice([0, 0, 1, 5, len(lines) // 2])
        limit = rng.choice([None, None, 3, 2500])
        streamed, whole = both(data, start, limit, rng.choice([1000, 65536]))
        assert streamed == whole
