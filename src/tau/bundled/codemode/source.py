"""The codemode source format (pi ``@earendil-works/pi-codemode/source``): JavaScript, optionally
after one ``// @options: {...}`` line, and the identifier a script uses for a tool.

Only ``max_output_tokens`` and ``timeout_ms`` are options. The options line must be the first line;
one anywhere else, invalid JSON, unknown fields, or an options line without code fail the call
before the script runs. The options line is replaced by an empty line, so stack-trace line numbers
still match what the model wrote.
"""

from __future__ import annotations

import json
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "OPTIONS_PREFIX",
    "SOURCE_GRAMMAR",
    "CodemodeSourceError",
    "ScriptSource",
    "parse_source",
    "to_identifier",
]

OPTIONS_PREFIX = "// @options:"
_FIELDS = ("max_output_tokens", "timeout_ms")
_FIELDS_TEXT = "`max_output_tokens` and `timeout_ms`"
# The largest delay a JavaScript timer takes, which bounds timeout_ms in pi.
MAX_TIMEOUT_MS = 2_147_483_647

# A Lark grammar for providers with grammar-constrained tool input (pi sends the same text, so a
# session declares the same tool). It fixes the shape of the options line only.
SOURCE_GRAMMAR = (
    "\n"
    "start: options_source | plain_source\n"
    "options_source: OPTIONS_LINE NEWLINE SOURCE\n"
    "plain_source: SOURCE\n"
    "\n"
    "OPTIONS_LINE: /[ \\t]*\\/\\/ @options:[^\\r\\n]*/\n"
    "NEWLINE: /\\r?\\n/\n"
    "SOURCE: /[\\s\\S]+/\n"
)

_IDENTIFIER_START = lazy_pattern(r"[A-Za-z_$]")
_IDENTIFIER_PART = lazy_pattern(r"[A-Za-z0-9_$]")


class CodemodeSourceError(ValueError):
    """The input is not a script codemode can run; the message says what to fix."""


@dataclass(frozen=True)
class ScriptSource:
    """A script to run and its limits (output tokens, wall time in ms)."""

    code: str
    max_output_tokens: int | None = None
    timeout_ms: int | None = None


def to_identifier(name: str) -> str:
    """The name scripts use for a tool: characters invalid in a JavaScript identifier become ``_``."""
    out: list[str] = []
    for char in name:
        pattern = _IDENTIFIER_START if not out else _IDENTIFIER_PART
        out.append(char if pattern.fullmatch(char) else "_")
    return "".join(out) or "_"


def _is_count(value: Any) -> bool:
    # JSON numbers that are non-negative safe integers (1.0 parses as a float in Python, an integer in JS)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and 0 <= value <= 2**53 - 1


def _parse_options(directive: str) -> dict[str, int]:
    if directive == "":
        raise CodemodeSourceError(f"@options must be a JSON object with supported fields {_FIELDS_TEXT}")
    try:
        value = json.loads(directive)
    except ValueError as exc:
        raise CodemodeSourceError(
            f"@options must be valid JSON with supported fields {_FIELDS_TEXT}: {exc}"
        ) from None
    if not isinstance(value, dict):
        raise CodemodeSourceError(f"@options must be a JSON object with supported fields {_FIELDS_TEXT}")
    for key in value:
        if key not in _FIELDS:
            raise CodemodeSourceError(f"@options only supports {_FIELDS_TEXT}; got `{key}`")
    options: dict[str, int] = {}
    if "max_output_tokens" in value:
        tokens = value["max_output_tokens"]
        if not _is_count(tokens):
            raise CodemodeSourceError(
                "@options field `max_output_tokens` must be a non-negative safe integer"
            )
        options["max_output_tokens"] = int(tokens)
    if "timeout_ms" in value:
        timeout = value["timeout_ms"]
        if not _is_count(timeout) or timeout == 0 or timeout > MAX_TIMEOUT_MS:
            raise CodemodeSourceError(
                f"@options field `timeout_ms` must be a positive integer up to {MAX_TIMEOUT_MS}"
            )
        options["timeout_ms"] = int(timeout)
    return options


def _js_trim_start(text: str) -> str:
    return text.lstrip(
        " \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    )


def parse_source(text: str) -> ScriptSource:
    """Split the optional options line from the script. Raises :class:`CodemodeSourceError`."""
    if _js_trim_start(text) == "":
        raise CodemodeSourceError(
            "Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line "
            '`// @options: {"max_output_tokens": 1000}`.'
        )
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if _js_trim_start(line).startswith(OPTIONS_PREFIX):
            raise CodemodeSourceError(
                f"The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {number}"
            )
    first = _js_trim_start(lines[0].removesuffix("\r"))
    if not first.startswith(OPTIONS_PREFIX):
        return ScriptSource(text)
    newline = text.find("\n")
    code = "" if newline == -1 else text[newline:]
    if _js_trim_start(code) == "":
        raise CodemodeSourceError(
            "The @options line must be followed by JavaScript source on subsequent lines"
        )
    options = _parse_options(first[len(OPTIONS_PREFIX) :].strip())
    return ScriptSource(code, options.get("max_output_tokens"), options.get("timeout_ms"))
