"""JSON read and written the way JavaScript's ``JSON.parse``/``JSON.stringify`` do.

pi writes every session line with ``JSON.stringify``. tau must produce the same bytes, so
numbers use JavaScript's shortest round-trip format (``0.000009``, ``150000``, ``1e+21``,
``1.5e-7``; ``-0`` as ``0``), keys keep insertion order, there is no whitespace and
non-ASCII text stays raw UTF-8. orjson already escapes strings exactly like
``JSON.stringify``; only its float format differs, so floats are rewritten after the fact.

Depth: :func:`loads` refuses text nested deeper than :data:`MAX_DEPTH` levels with a ``ValueError``
(orjson's own limit, applied to the slower parser too, which would otherwise recurse until Python's
stack limit), so every consumer of parsed values knows how deep it may have to go. :func:`dumps`
writes a value of any depth (a deep one without recursion).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "MAX_DEPTH",
    "deeper_than",
    "dumps",
    "dumps_indented",
    "dumps_str",
    "js_number",
    "loads",
    "loads_text",
]

_MAX_SAFE = 2**53
# orjson's limit for reading; text nested deeper is refused by every parser here.
MAX_DEPTH = 1024
_STRING_TOKEN = lazy_pattern(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = lazy_pattern(r"[\[\]{}]")

# A JSON string token, or a number token that is not a plain integer. The string part is the
# "unrolled" form: a run of plain characters is one step of the regex engine, not one per character
# (the ``(?:[^"\\]|\\.)*`` form kept ~120 bytes of backtracking state per character of a string).
_TOKEN = lazy_pattern(
    rb'"[^"\\]*(?:\\.[^"\\]*)*"'
    rb"|(-?\d+(?:\.\d+)?[eE][+-]?\d+|-?\d+\.\d+|-?\d{16,}|NaN|-?Infinity)"
)
# Cheap pre-check: a number token (after ':', ',' or '[', or the whole output) that orjson writes
# otherwise than JavaScript: with an exponent, integral floats (``5.0``), 16+ digits. Every other
# float orjson writes in decimal notation with the shortest round-trip digits, as JavaScript does
# (a property test holds it to that). Text inside strings may match too; that only costs the slower
# exact path. The pattern starts with a character set, so the regex engine scans for it in C; an
# alternative with ``^`` would defeat that.
_MAYBE_FLOAT = lazy_pattern(rb"[:,\[]-?\d+(?:\.0[,\]}]|(?:\.\d+)?[eE])|[:,\[]-?\d{16}")
_BARE_FLOAT = lazy_pattern(rb"-?\d+(?:\.0\Z|(?:\.\d+)?[eE])|-?\d{16}")
_NUMBER_HEAD = frozenset(b"-0123456789")  # how a bare number's JSON starts (the only text _BARE_FLOAT matches)
_SURROGATE = lazy_pattern("[\ud800-\udfff]")
# Leaves the number pass keeps as they are (strings too, unless lone surrogates are looked for).
_KEPT = frozenset({str, bool, type(None)})
_KEPT_NOT_STR = frozenset({bool, type(None)})


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


def _string_literal(text: str) -> orjson.Fragment:
    """The JSON literal of a string with lone surrogates, as ``JSON.stringify`` writes it (``\\udXXX``)."""
    literal = json.dumps(text, ensure_ascii=False)
    return orjson.Fragment(_SURROGATE.sub(_escape_surrogate, literal).encode("utf-8"))


def _javascript_numbers(value: Any, strings: bool = False) -> Any:
    """A copy of ``value`` whose floats (and unsafe ints) are pre-formatted orjson fragments.

    With ``strings``, strings holding lone surrogates (which orjson refuses) become fragments too.
    """
    cls = value.__class__
    kept = _KEPT_NOT_STR if strings else _KEPT
    if cls is str:
        if strings and not value.isascii() and _SURROGATE.search(value) is not None:
            return _string_literal(value)
        return value
    if cls is dict:
        # Most values are leaves that stay as they are: test the class before recursing.
        return {
            key: item if item.__class__ in kept else _javascript_numbers(item, strings)
            for key, item in value.items()
        }
    if cls is list:
        return [item if item.__class__ in kept else _javascript_numbers(item, strings) for item in value]
    if cls is float:
        return orjson.Fragment(js_number(value).encode())
    if cls is int:
        return value if -_MAX_SAFE < value < _MAX_SAFE else orjson.Fragment(js_number(value).encode())
    # Subclasses and tuples, as orjson takes them.
    if isinstance(value, str):
        return _javascript_numbers(str(value), strings) if strings else value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        return orjson.Fragment(js_number(value).encode())
    if isinstance(value, int):
        return value if abs(value) < _MAX_SAFE else orjson.Fragment(js_number(value).encode())
    if isinstance(value, dict):
        return {key: _javascript_numbers(item, strings) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_javascript_numbers(item, strings) for item in value]
    return value


def _through_json_module(value: Any) -> bytes:
    # What orjson cannot take even with fragments (non-string keys, keys with lone surrogates).
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    raw = _SURROGATE.sub(_escape_surrogate, text).encode("utf-8")
    return _TOKEN.sub(_fix_token, raw)


def dumps(value: Any) -> bytes:
    """Serialize ``value`` to the bytes ``JSON.stringify(value)`` gives (UTF-8, no newline)."""
    try:
        raw = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError) as exc:
        if "Recursion limit" in str(exc):  # orjson writes 255 levels at most
            return _dumps_deep(value)
        # Lone surrogates (legal in JS strings) and ints beyond 64 bits: every such value becomes a
        # pre-encoded fragment, so memory stays a few times the output's size.
        try:
            return orjson.dumps(_javascript_numbers(value, strings=True))
        except (TypeError, orjson.JSONEncodeError):
            return _through_json_module(value)
        except RecursionError:
            return _dumps_deep(value)
    if _MAYBE_FLOAT.search(raw) is None and (raw[0] not in _NUMBER_HEAD or _BARE_FLOAT.match(raw) is None):
        return raw
    # orjson's float format differs from JavaScript's: re-encode with the numbers pre-formatted.
    return orjson.dumps(_javascript_numbers(value))


def _dumps_deep(value: Any) -> bytes:
    """:func:`dumps` of a deeply nested value: containers written from an explicit stack."""
    parts: list[bytes] = []
    stack: list[tuple[Iterator[Any], bytes, bool]] = []  # (what is left, closer, keyed)
    started: list[bool] = []

    def open_value(item: Any) -> None:
        if isinstance(item, dict):
            parts.append(b"{")
            stack.append((iter(item.items()), b"}", True))
            started.append(False)
        elif isinstance(item, list | tuple):
            parts.append(b"[")
            stack.append((iter(item), b"]", False))
            started.append(False)
        else:
            parts.append(dumps(item))

    open_value(value)
    while stack:
        items, closer, keyed = stack[-1]
        item: Any = next(items, _END)
        if item is _END:
            stack.pop()
            started.pop()
            parts.append(closer)
            continue
        if started[-1]:
            parts.append(b",")
        started[-1] = True
        if keyed:
            key, item = item
            parts.append(dumps(str(key)) + b":")
        open_value(item)
    return b"".join(parts)


def dumps_str(value: Any) -> str:
    """Like :func:`dumps`, as ``str``."""
    return dumps(value).decode("utf-8", "surrogatepass")


@dataclass
class _Open:
    """A container being written: what is left of it, the indent of its items, its closing bracket."""

    items: Iterator[Any]
    inner: str
    closer: str
    keyed: bool
    started: bool = False


def _open_value(value: Any, indent: str, parts: list[str], stack: list[_Open]) -> None:
    if isinstance(value, dict) and value:
        parts.append("{")
        stack.append(_Open(iter(value.items()), indent + "  ", "}", True))
    elif isinstance(value, list) and value:
        parts.append("[")
        stack.append(_Open(iter(value), indent + "  ", "]", False))
    else:
        parts.append(dumps_str(value))


def dumps_indented(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``: two-space indent, ``[]``/``{}`` for empty containers.

    Written without recursion into one list of parts: a value nested a thousand levels deep needs no
    stack, and a long string deep inside is copied once, not once per level above it.
    """
    parts: list[str] = []
    stack: list[_Open] = []
    _open_value(value, "", parts, stack)
    while stack:
        top = stack[-1]
        item: Any = next(top.items, _END)
        if item is _END:
            stack.pop()
            parts.append(f"\n{top.inner[:-2]}{top.closer}")  # only non-empty containers are opened
            continue
        parts.append(",\n" if top.started else "\n")
        parts.append(top.inner)
        top.started = True
        if top.keyed:
            key, item = item
            parts.append(f"{dumps_str(str(key))}: ")
        _open_value(item, top.inner, parts, stack)
    return "".join(parts)


_END = object()


def loads(data: bytes | str) -> Any:
    """Parse JSON text; accepts lone surrogate escapes as ``JSON.parse`` does.

    Raises:
        ValueError: the text is not JSON, or is nested deeper than :data:`MAX_DEPTH` levels.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if isinstance(data, bytes):
            data = data.decode("utf-8", "surrogatepass")
    return loads_text(data)


def loads_text(text: str, **options: Any) -> Any:
    """``json.loads(text, **options)`` within :data:`MAX_DEPTH` (the parser for what orjson refuses).

    Raises:
        ValueError: the text is not JSON, or is nested deeper than :data:`MAX_DEPTH` levels.
    """
    if deeper_than(text, MAX_DEPTH):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    with _recursion_room():
        try:
            return json.loads(text, **options)
        except RecursionError as exc:  # the caller was already deep in its own stack
            raise ValueError("JSON nested too deeply") from exc


@contextlib.contextmanager
def _recursion_room() -> Iterator[None]:
    """Python's recursion limit raised (never lowered) so that :data:`MAX_DEPTH` levels parse.

    The parser recurses once per level; the default limit (1,000) counts the caller's frames too.
    """
    before = sys.getrecursionlimit()
    wanted = before + MAX_DEPTH + 100
    sys.setrecursionlimit(wanted)
    try:
        yield
    finally:
        if sys.getrecursionlimit() == wanted:  # nobody changed it meanwhile
            sys.setrecursionlimit(before)


def deeper_than(text: str, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than ``limit`` (exact only for valid JSON)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # the common case, at C speed
    depth = 0
    for bracket in _BRACKET.findall(_STRING_TOKEN.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False
