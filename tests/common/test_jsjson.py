"""JSON written as JavaScript's JSON.stringify writes it (decisions.md test vectors)."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.common import jsjson
from tau.common.jsjson import dumps, js_number, loads
from tau.common.jsstr import iso_from_ms, js_len, js_trim, ms_from_iso


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.000009, "0.000009"),
        (0.000021000000000000002, "0.000021000000000000002"),
        (150000, "150000"),
        (150000.0, "150000"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (1e-7, "1e-7"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (1e20, "100000000000000000000"),
        (2**60, "1152921504606847000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("inf"), "null"),
        (float("nan"), "null"),
    ],
)
def test_numbers_use_javascript_format(value, expected):
    assert dumps(value).decode() == expected
    assert js_number(value) == expected


def test_objects_have_no_spaces_keep_key_order_and_raw_unicode():
    value = {"b": 1, "a": [1.0, "é\u2028", None, True], "c": {"x": 0.1}}
    assert dumps(value) == '{"b":1,"a":[1,"é\u2028",null,true],"c":{"x":0.1}}'.encode()


def test_control_characters_are_escaped_as_javascript_does():
    assert dumps('a\x1fb\n\t"\\\x7f') == b'"a\\u001fb\\n\\t\\"\\\\\x7f"'


def test_numbers_inside_strings_are_left_alone():
    assert dumps({"t": "1.50 and 12345678901234567890 and 1e5"}) == (
        b'{"t":"1.50 and 12345678901234567890 and 1e5"}'
    )


def test_lone_surrogate_loads_and_round_trips():
    line = b'{"text":"bad \\ud800 half"}'
    value = loads(line)
    assert value == {"text": "bad \ud800 half"}
    assert dumps(value) == line


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_round_trips_through_the_javascript_format(x):
    text = js_number(x)
    assert float(text) == x or (x == 0 and float(text) == 0)
    assert not text.endswith(".0")
    assert "e-0" not in text and "e+0" not in text


def test_js_string_helpers():
    assert js_len("a😀") == 3
    assert js_len("plain") == 5
    assert js_trim("\ufeff\u00a0 x \x1c") == "x \x1c"
    assert iso_from_ms(1764460934169) == "2025-11-30T00:02:14.169Z"
    assert ms_from_iso("2025-11-30T00:02:14.169Z") == 1764460934169
    assert math.isclose(ms_from_iso("2026-11-29T23:42:14.000Z") % 1000, 0)


def test_every_line_pi_wrote_round_trips_byte_for_byte(pi_fixtures):
    files = sorted((pi_fixtures / "scenarios").glob("*.jsonl")) + sorted(
        (pi_fixtures / "real").glob("*.v3.jsonl")
    )
    assert files
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            assert dumps(loads(line)) == line, f"{path.name}:{number}"


# -- the fast and slow writer paths against the straightforward one ---------------------------------

_REFERENCE_TOKEN = re.compile(
    rb'"(?:[^"\\]|\\.)*"' rb"|(-?\d+(?:\.\d+)?[eE][+-]?\d+|-?\d+\.\d+|-?\d{16,}|NaN|-?Infinity)"
)


def _reference_dumps(value):
    """The writer as it was first written: json.dumps, surrogates escaped, every number token fixed."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    raw = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", text).encode("utf-8")
    return _REFERENCE_TOKEN.sub(jsjson._fix_token, raw)


_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "a\udfffb", "1.5", ":1e5", "[12345678901234567", "\\", '"', "\n"]
)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TEXT, children, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_dumps_equals_the_straightforward_writer(value):
    assert dumps(value) == _reference_dumps(value)


def test_a_long_string_with_a_lone_surrogate_is_written_in_bounded_memory():
    """Issue 17: the slow path kept ~120 bytes per character (a 10 MB string: 1.2 GB)."""
    import tracemalloc

    text = "x" * 2_000_000 + "\ud800" + "y" * 1_000
    tracemalloc.start()
    try:
        out = dumps({"content": text})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == b'{"content":"' + b"x" * 2_000_000 + b"\\ud800" + b"y" * 1_000 + b'"}'
    assert peak < 20 * len(text)


_BOUNDARIES = [
    m * 10.0**e for e in range(-330, 309) for m in (1.0, 1.5, 2.2250738585072014, 9.999999999999998)
] + [5e-324, 1.7976931348623157e308, 9007199254740993.0, 2.0**53, 2.0**63, 0.1, 0.0, -0.0]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_orjson_writes_differently_are_always_caught(x):
    """The pre-check lets orjson's bytes through only where they are JavaScript's."""
    for value in (x, [x], {"k": x}, [1, "a", {"k": [x]}]):
        assert dumps(value) == _reference_dumps(value)


def test_floats_at_the_notation_boundaries_are_written_as_javascript_does():
    for x in _BOUNDARIES:
        for value in (x, -x, [x, -x], {"a": x}):
            assert dumps(value) == _reference_dumps(value), x
