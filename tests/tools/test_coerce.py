"""JavaScript number parsing and equality used by argument coercion."""

from __future__ import annotations

import math

import pytest

from tau.tools.coerce import js_equal, js_to_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        (" 4.5 ", 4.5),
        ("", 0),
        ("  ", 0),
        ("0x1F", 31),
        ("0b101", 5),
        ("0o17", 15),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("-Infinity", -math.inf),
        ("+7", 7),
    ],
)
def test_js_to_number(text, value):
    assert js_to_number(text) == value


@pytest.mark.parametrize("text", ["abc", "1_000", "0x", "-0x10", "1e", "--1", "1 2"])
def test_js_to_number_nan(text):
    assert math.isnan(js_to_number(text))


def test_js_equal_keeps_booleans_apart_from_numbers():
    assert js_equal(1, 1.0)
    assert not js_equal(True, 1)
    assert not js_equal("1", 1)
    assert js_equal(None, None)
    same = {"a": 1}
    assert js_equal(same, same) and not js_equal({"a": 1}, {"a": 1})
