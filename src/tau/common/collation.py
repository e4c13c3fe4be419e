"""Sorting names the way JavaScript's ``localeCompare`` sorts them in Node (pi's ls, pi's MCP lists).

Node compares with ICU's root collation: punctuation and symbols first (in a fixed order), then
digits, then letters, with accents deciding only between names that are otherwise equal, and case
(lower first) only between names equal but for it. tau has no ICU; :func:`locale_key` reproduces
that order exactly for ASCII names and closely for Latin letters with accents (the order of the
marks is CLDR's), which is what file and server names nearly always hold. Other scripts sort after
Latin, by code point.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["locale_key", "locale_sorted"]

# printable ASCII, lower-cased, in ICU root order (read off Node 22: every pair differs at primary level)
_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_ASCII_WEIGHT = {char: index + 1 for index, char in enumerate(_ASCII_ORDER)}
_DIGITS = _ASCII_WEIGHT["0"]
_LETTERS_END = len(_ASCII_ORDER) + 1
# Letters ICU treats as expansions at primary level.
_EXPANSIONS = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "ı": "i", "þ": "th"}
# CLDR's secondary order of the common combining marks; others follow by code point.
_MARK_ORDER = [0x301, 0x300, 0x306, 0x302, 0x30C, 0x30A, 0x308, 0x30B, 0x303, 0x307, 0x327, 0x328, 0x304]
_MARK_WEIGHT = {mark: index + 1 for index, mark in enumerate(_MARK_ORDER)}


def _primary(char: str) -> int:
    weight = _ASCII_WEIGHT.get(char)
    if weight is not None:
        return weight
    category = unicodedata.category(char)
    if category[0] in "PSZC":  # punctuation, symbols, spaces: among ASCII punctuation, before digits
        return _DIGITS - 0.5 + ord(char) / 0x110000 * 0.49  # type: ignore[return-value]
    if category == "Nd":
        return _DIGITS + unicodedata.digit(char, 0)
    return _LETTERS_END + ord(char)


@lru_cache(maxsize=4096)
def _caseless_key(lowered: str) -> tuple[tuple[float, ...], tuple[tuple[int, ...], ...]]:
    """Primary weights of the base letters, then the accents of each, as ICU compares them."""
    primaries: list[float] = []
    secondaries: list[tuple[int, ...]] = []
    for char in unicodedata.normalize("NFD", lowered):
        if unicodedata.combining(char):
            if secondaries:
                secondaries[-1] = (*secondaries[-1], _MARK_WEIGHT.get(ord(char), 100 + ord(char)))
            continue
        for base in _EXPANSIONS.get(char, char):
            primaries.append(_primary(base))
            secondaries.append(())
    return tuple(primaries), tuple(secondaries)


def locale_key(name: str) -> tuple[tuple[float, ...], tuple[tuple[int, ...], ...], tuple[bool, ...]]:
    """The sort key of ``a.localeCompare(b)``: letters, then accents, then case (lower case first)."""
    primaries, secondaries = _caseless_key(name.lower())
    return primaries, secondaries, tuple(char.isupper() for char in name)


def locale_sorted(names: list[str]) -> list[str]:
    """``names`` in the order pi's ls shows them: ``a.toLowerCase().localeCompare(b.toLowerCase())``
    (Node's readdir gives them in byte order first; names equal but for case keep it)."""
    by_bytes = sorted(names, key=lambda name: name.encode("utf-8", "surrogateescape"))
    return sorted(by_bytes, key=lambda name: _caseless_key(name.lower()))
