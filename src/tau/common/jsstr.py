"""Strings and times measured the way pi (JavaScript) measures them."""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["iso_from_ms", "iso_now", "js_len", "js_trim", "ms_from_iso", "ms_now"]

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim() removes.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``string.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_trim(text: str) -> str:
    """``String.prototype.trim()``."""
    return text.strip(_JS_WHITESPACE)


def ms_now() -> int:
    """Unix time in milliseconds (``Date.now()``)."""
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    """``new Date(ms).toISOString()``: ``2026-11-29T23:42:14.169Z``."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def iso_now() -> str:
    """The current time as ``new Date().toISOString()``."""
    return iso_from_ms(ms_now())


def ms_from_iso(text: str) -> int:
    """``new Date(text).getTime()`` for ISO strings like pi writes; raises ValueError otherwise."""
    value = text.replace("Z", "+00:00") if text.endswith("Z") else text
    return round(datetime.fromisoformat(value).timestamp() * 1000)
