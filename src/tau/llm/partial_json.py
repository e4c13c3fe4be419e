"""Tool-call arguments as JSON text arriving in pieces (pi-ai ``streaming-json`` / ``json-parse``).

While a provider streams a tool call, ``arguments`` holds the value of the text so far
(:func:`parse_streaming_json`, :class:`ToolArgumentsStream`); at the end the whole text is parsed once
(:func:`parse_tool_call_arguments`): malformed text gives ``{}`` plus an error that tool validation
reports back to the model.
"""

from __future__ import annotations

import json
from typing import Any

from tau.common.lazy_regex import lazy_pattern

__all__ = ["ToolArgumentsStream", "parse_streaming_json", "parse_tool_call_arguments", "repair_json"]

_VALID_ESCAPES = set('"\\/bfnrt')
_HEX4 = lazy_pattern(r"[0-9a-fA-F]{4}")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def repair_json(text: str) -> str:
    """Repair string literals: escape raw control characters, double backslashes of invalid escapes."""
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if not in_string:
            out.append(char)
            in_string = char == '"'
        elif char == '"':
            out.append(char)
            in_string = False
        elif char == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 5
            elif nxt and nxt in _VALID_ESCAPES:
                out.append("\\" + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ord(char) < 0x20:
            out.append(_CONTROL_ESCAPES.get(char, f"\\u{ord(char):04x}"))
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _loads_with_repair(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired == text:
            raise
        return json.loads(repaired)


def parse_tool_call_arguments(text: str | None) -> tuple[dict[str, Any], str | None]:
    """Parse the complete arguments text of a finished tool call: ``(arguments, argumentsError)``.

    Blank text is ``{}``. Text that is not a JSON object gives ``{}`` and an error that quotes the
    text the model sent, so the model can correct itself.
    """
    if not text or not text.strip():
        return {}, None
    try:
        parsed = _loads_with_repair(text)
        if not isinstance(parsed, dict):
            raise ValueError("Tool arguments must be a JSON object")
        return parsed, None
    except ValueError as exc:
        return {}, f"{exc}\n\nReceived arguments:\n{text}"


def parse_streaming_json(text: str | None) -> Any:
    """The value of possibly incomplete JSON text; ``{}`` when nothing can be read yet.

    Incomplete strings show the characters so far (an unfinished escape is held back), open
    containers show their members so far, a member whose value has not started is left out, and
    an unfinished literal or number shows once it reads as one.
    """
    if not text or not text.strip():
        return {}
    try:
        return _loads_with_repair(text)
    except ValueError:
        value = _PartialParser(text).value()
        return {} if value is _MISSING else value


class ToolArgumentsStream:
    """The arguments text of one streamed tool call and its partial value.

    Re-parsing the whole text on every piece would cost quadratic time for large arguments (a
    ``write`` of a big file), so the partial value is refreshed on every piece while the text is
    short and then each time the text has grown by half; it may lag a little behind the text,
    as pi's own preview does. :meth:`finish` always parses the complete text.
    """

    _EAGER_CHARS = 4096

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._parsed_length = 0
        self._arguments: dict[str, Any] = {}

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, delta: str) -> dict[str, Any]:
        """Add a piece of text; returns the partial arguments (a new object when they changed)."""
        self._parts.append(delta)
        self._length += len(delta)
        if self._length <= self._EAGER_CHARS or self._length >= self._parsed_length * 1.5:
            text = self.text
            self._parts = [text]
            self._parsed_length = self._length
            value = parse_streaming_json(text)
            self._arguments = value if isinstance(value, dict) else {}
        return self._arguments

    def finish(self) -> tuple[dict[str, Any], str | None]:
        return parse_tool_call_arguments(self.text)


_MISSING: Any = object()
_LITERALS = (("true", True), ("false", False), ("null", None))
_NUMBER = lazy_pattern(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_NUMBER_NO_EXPONENT_DIGITS = lazy_pattern(r"(-?(?:0|[1-9]\d*)(?:\.\d+)?)[eE][+-]?")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_DELIMITERS = set(' \t\n\r,:{}[]"')
_PLAIN_RUN = lazy_pattern(r'[^"\\]+')


class _PartialParser:
    """A lenient one-pass reader of a JSON prefix (see :func:`parse_streaming_json`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def value(self) -> Any:
        self._skip_ws()
        if self.pos >= len(self.text):
            return _MISSING
        char = self.text[self.pos]
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        if char == '"':
            text, _complete = self._string()
            return text
        return self._scalar()

    def _skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\n\r":
            self.pos += 1

    def _object(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.pos += 1
        while True:
            self._skip_ws()
            if self.pos >= len(self.text):
                return result
            char = self.text[self.pos]
            if char == "}":
                self.pos += 1
                return result
            if char in ",:":
                self.pos += 1
                continue
            if char != '"':
                self._skip_token()
                continue
            key, complete = self._string()
            if not complete:
                return result
            self._skip_ws()
            if self.pos < len(self.text) and self.text[self.pos] == ":":
                self.pos += 1
            member = self.value()
            if member is _MISSING:
                if self.pos >= len(self.text):
                    return result
                continue
            result[key] = member

    def _array(self) -> list[Any]:
        result: list[Any] = []
        self.pos += 1
        while True:
            self._skip_ws()
            if self.pos >= len(self.text):
                return result
            char = self.text[self.pos]
            if char == "]":
                self.pos += 1
                return result
            if char in ",:}":
                self.pos += 1
                continue
            item = self.value()
            if item is not _MISSING:
                result.append(item)

    def _string(self) -> tuple[str, bool]:
        """Read a string from its opening quote: ``(text so far, whether it closed)``."""
        out: list[str] = []
        text, n = self.text, len(self.text)
        i = self.pos + 1
        while i < n:
            run = _PLAIN_RUN.match(text, i)
            if run:
                out.append(run.group(0))
                i = run.end()
                continue
            char = text[i]
            if char == '"':
                self.pos = i + 1
                return "".join(out), True
            if i + 1 >= n:
                break  # an unfinished escape is held back
            nxt = text[i + 1]
            if nxt in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[nxt])
                i += 2
            elif nxt == "u":
                digits = text[i + 2 : i + 6]
                if len(digits) < 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                    break
                if _HEX4.fullmatch(digits):
                    out.append(chr(int(digits, 16)))
                    i += 6
                else:
                    out.append("\\u")
                    i += 2
            else:
                out.append("\\" + nxt)  # an invalid escape stays literal text
                i += 2
        self.pos = n
        return "".join(out), False

    def _skip_token(self) -> None:
        self.pos += 1
        while self.pos < len(self.text) and self.text[self.pos] not in _DELIMITERS:
            self.pos += 1

    def _scalar(self) -> Any:
        start = self.pos
        if self.text[start] in _DELIMITERS:
            return _MISSING  # a stray delimiter: the container loop steps over it
        self._skip_token()
        token = self.text[start : self.pos]
        at_end = self.pos >= len(self.text)
        for literal, literal_value in _LITERALS:
            if token == literal or (at_end and token and literal.startswith(token)):
                return literal_value
        if _NUMBER.fullmatch(token):
            return _number(token)
        if at_end:
            match = _NUMBER_NO_EXPONENT_DIGITS.fullmatch(token)
            if match:
                return _number(match.group(1))
        return _MISSING


def _number(token: str) -> int | float:
    if any(c in token for c in ".eE"):
        return float(token)
    return int(token)
