"""JSON read and written the way JavaScript's ``JSON.parse``/``JSON.stringify`` do.

pi writes every session line with ``JSON.stringify``. tau must produce the same bytes, so
numbers use JavaScript's shortest round-trip format (``0.000009``, ``150000``, ``1e+21``,
``1.5e-7``; ``-0`` as ``0``), keys keep insertion order, there is no whitespace and
non-ASCII text stays raw UTF-8. orjson already escapes strings exactly like
``JSON.stringify``; only its float format differs, so floats are rewritten after the fact.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from tau.common.lazy_regex import lazy_pattern

__all__ = ["dumps", "dumps_str", "js_number", "loads"]

_MAX_SAFE = 2**53

# A JSON string token, or a number token that is not a plain integer.
_TOKEN = lazy_pattern(
    rb'"(?:[^"\\]|\\.)*"'
    rb"|(-?\d+(?:\.\d+)?[eE][+-]?\d+|-?\d+\.\d+|-?\d{16,}|NaN|-?Infinity)"
)
# Cheap pre-check: a number token (after ':', ',' or '[') with a fraction or exponent, or of 16+
# digits. Without one, orjson's output is already what JS writes. (Text inside strings may match too;
# that only costs the slower exact path.)
_MAYBE_FLOAT = lazy_pattern(rb"(?:^|[:,\[])-?\d+[.eE]|(?:^|[:,\[])-?\d{16}")
_SURROGATE = lazy_pattern("[\ud800-\udfff]")


def js_number(value: float | int) -> str:
    """Format a number exactly as JavaScript's ``String(number)`` / ``JSON.stringify`` does."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < _MAX_SAFE:
        return str(value)
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


def _fix_token(match: re.Match[bytes]) -> bytes:
    number = match.group(1)
    if number is None:
        return match.group(0)
    if number in (b"NaN", b"Infinity", b"-Infinity"):
        return b"null"
    if b"." in number or b"e" in number or b"E" in number:
        return js_number(float(number)).encode()
    return js_number(int(number)).encode()


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def _javascript_numbers(value: Any) -> Any:
    """A copy of ``value`` whose floats (and unsafe ints) are pre-formatted orjson fragments."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        return orjson.Fragment(js_number(value).encode())
    if isinstance(value, int):
        return value if abs(value) < _MAX_SAFE else orjson.Fragment(js_number(value).encode())
    if isinstance(value, dict):
        return {key: _javascript_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_javascript_numbers(item) for item in value]
    return value


def dumps(value: Any) -> bytes:
    """Serialize ``value`` to the bytes ``JSON.stringify(value)`` gives (UTF-8, no newline)."""
    try:
        raw = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        # Lone surrogates (legal in JS strings) and ints beyond 64 bits: slow path.
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        raw = _SURROGATE.sub(_escape_surrogate, text).encode("utf-8")
        return _TOKEN.sub(_fix_token, raw)
    if _MAYBE_FLOAT.search(raw) is None:
        return raw
    # orjson's float format differs from JavaScript's: re-encode with the numbers pre-formatted.
    return orjson.dumps(_javascript_numbers(value))


def dumps_str(value: Any) -> str:
    """Like :func:`dumps`, as ``str``."""
    return dumps(value).decode("utf-8", "surrogatepass")


def loads(data: bytes | str) -> Any:
    """Parse JSON text; accepts lone surrogate escapes as ``JSON.parse`` does."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if isinstance(data, bytes):
            data = data.decode("utf-8", "surrogatepass")
        return json.loads(data)
