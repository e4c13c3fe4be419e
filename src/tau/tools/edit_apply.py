"""Matching and applying ``edit`` replacements (pi 1.6 ``edit-diff.ts``).

Every ``oldText`` is matched against the original text (LF-normalized, BOM removed), exactly first.
If any edit only matches after fuzzy normalization (NFKC, trailing whitespace, smart quotes, Unicode
dashes and spaces), all edits are matched in the normalized text and each change is widened to the
whole lines it touches, so the lines around it keep their original bytes.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise

from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len

__all__ = [
    "AppliedEdits",
    "Replacement",
    "apply_edits",
    "apply_replacements_to_original",
    "normalize_for_fuzzy_match",
    "normalize_to_lf",
    "split_bom",
]

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trimEnd() removes.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass
class Replacement:
    """``match_length`` characters at ``match_index`` become ``new_text``."""

    match_index: int
    match_length: int
    new_text: str
    edit_index: int = -1


@dataclass
class AppliedEdits:
    base_content: str
    new_content: str
    replacements: list[Replacement]


def split_bom(text: str) -> tuple[str, str]:
    """``(bom, rest)``: a leading U+FEFF split off."""
    return ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, trailing whitespace stripped per line, smart quotes, dashes and special spaces made ASCII."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip(_JS_WHITESPACE) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass
class _Match:
    index: int
    length: int
    fuzzy: bool


def _find(content: str, old_text: str) -> _Match | None:
    index = content.find(old_text)
    if index != -1:
        return _Match(index, len(old_text), False)
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    return None if index == -1 else _Match(index, len(fuzzy_old), True)


def _count_occurrences(content: str, old_text: str) -> int:
    haystack = normalize_for_fuzzy_match(content)
    needle = normalize_for_fuzzy_match(old_text)
    if not needle:  # JS "abc".split("") splits into code units
        return js_len(haystack) - 1
    return haystack.count(needle)


def apply_edits(normalized_content: str, edits: list[dict[str, str]], path: str) -> AppliedEdits:
    """Match every edit against ``normalized_content`` and apply them; raise with pi's texts on failure."""
    pairs = [(normalize_to_lf(e["oldText"]), normalize_to_lf(e["newText"])) for e in edits]
    total = len(pairs)
    for index, (old_text, _) in enumerate(pairs):
        if not old_text:
            where = "oldText" if total == 1 else f"edits[{index}].oldText"
            raise ValueError(f"{where} must not be empty in {path}.")
    used_fuzzy = any((m := _find(normalized_content, old)) is not None and m.fuzzy for old, _ in pairs)
    base = normalize_for_fuzzy_match(normalized_content) if used_fuzzy else normalized_content
    matched = [_match_one(base, old, new, index, total, path) for index, (old, new) in enumerate(pairs)]
    matched.sort(key=lambda r: r.match_index)
    for previous, current in pairwise(matched):
        if previous.match_index + previous.match_length > current.match_index:
            raise ValueError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    replacements = _widen_to_lines(normalized_content, base, matched) if used_fuzzy else matched
    new_content = _apply(normalized_content, replacements)
    if new_content == normalized_content:
        if total == 1:
            raise ValueError(
                f"No changes made to {path}. The replacement produced identical content. This might indicate an "
                "issue with special characters or the text not existing as expected."
            )
        raise ValueError(f"No changes made to {path}. The replacements produced identical content.")
    return AppliedEdits(normalized_content, new_content, replacements)


def _match_one(base: str, old: str, new: str, index: int, total: int, path: str) -> Replacement:
    match = _find(base, old)
    if match is None:
        if total == 1:
            raise ValueError(
                f"Could not find the exact text in {path}. The old text must match exactly including all "
                "whitespace and newlines."
            )
        raise ValueError(
            f"Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace "
            "and newlines."
        )
    occurrences = _count_occurrences(base, old)
    if occurrences > 1:
        if total == 1:
            raise ValueError(
                f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide "
                "more context to make it unique."
            )
        raise ValueError(
            f"Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please "
            "provide more context to make it unique."
        )
    return Replacement(match.index, match.length, new, index)


def _apply(content: str, replacements: list[Replacement], offset: int = 0) -> str:
    parts: list[str] = []
    position = 0
    for replacement in sorted(replacements, key=lambda r: r.match_index):
        start = replacement.match_index - offset
        parts += [content[position:start], replacement.new_text]
        position = start + replacement.match_length
    parts.append(content[position:])
    return "".join(parts)


def _line_spans(content: str) -> list[tuple[int, int]]:
    return [match.span() for match in _LINES_WITH_ENDINGS.finditer(content)]


def _line_range(lines: list[tuple[int, int]], replacement: Replacement) -> tuple[int, int]:
    start = replacement.match_index
    end = replacement.match_index + replacement.match_length
    first = next((i for i, (s, e) in enumerate(lines) if s <= start < e), -1)
    if first == -1:
        raise ValueError("Replacement range is outside the base content.")
    last = first
    while last < len(lines) and lines[last][1] < end:
        last += 1
    if last >= len(lines):
        raise ValueError("Replacement range is outside the base content.")
    return first, last + 1


def _widen_to_lines(original: str, base: str, replacements: list[Replacement]) -> list[Replacement]:
    """Replacements of ``original`` that rewrite the touched lines from the fuzzy ``base``."""
    original_lines = _line_spans(original)
    base_lines = _line_spans(base)
    if len(original_lines) != len(base_lines):
        raise ValueError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )
    groups: list[tuple[int, int, list[Replacement]]] = []
    for replacement in sorted(replacements, key=lambda r: r.match_index):
        first, end = _line_range(base_lines, replacement)
        if groups and first < groups[-1][1]:
            start, current_end, members = groups[-1]
            groups[-1] = (start, max(current_end, end), [*members, replacement])
        else:
            groups.append((first, end, [replacement]))
    widened = []
    for first, end, members in groups:
        base_start, base_end = base_lines[first][0], base_lines[end - 1][1]
        original_start = original_lines[first][0]
        widened.append(
            Replacement(
                original_start,
                original_lines[end - 1][1] - original_start,
                _apply(base[base_start:base_end], members, base_start),
            )
        )
    return widened


def _line_ending_at(content: str, offset: int) -> str:
    """The line ending of the line holding ``offset``; a lone CR counts only in files without LF."""
    line_feed = content.find("\n", offset)
    if line_feed == -1:
        line_feed = content.rfind("\n", 0, offset + 1)
    if line_feed == -1:
        return "\r" if "\r" in content else "\n"
    return "\r\n" if line_feed > 0 and content[line_feed - 1] == "\r" else "\n"


def apply_replacements_to_original(original: str, replacements: list[Replacement]) -> str:
    """Apply replacements found in ``normalize_to_lf(original)`` to ``original`` itself.

    Text outside the replaced ranges keeps its bytes and line endings; line breaks in new text take
    the ending of the line where the replaced range starts.
    """
    crlf_positions = [m.start() for m in re.finditer("\r\n", original)]

    def to_original(offset: int) -> int:
        # The LF of the n-th CRLF sits at p - n in the normalized text.
        before = 0
        while before < len(crlf_positions) and crlf_positions[before] - before < offset:
            before += 1
        return offset + before

    parts: list[str] = []
    ends_with_cr = False

    def push(part: str) -> None:
        nonlocal ends_with_cr
        if not part:
            return
        if ends_with_cr and part[0] == "\n":
            parts.append("\n")  # keep a kept CR and an inserted LF from merging into one CRLF
        parts.append(part)
        ends_with_cr = part[-1] == "\r"

    position = 0
    for replacement in replacements:
        start = to_original(replacement.match_index)
        push(original[position:start])
        ending = _line_ending_at(original, start)
        push(replacement.new_text if ending == "\n" else replacement.new_text.replace("\n", ending))
        position = to_original(replacement.match_index + replacement.match_length)
    push(original[position:])
    return "".join(parts)
