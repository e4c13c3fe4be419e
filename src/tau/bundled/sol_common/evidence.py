"""Distinctive tokens: the evidence a model carries from what it saw into what it does next.

A later tool call that names ``parse_header``, ``src/calc.py`` or line ``412`` uses the earlier
output those came from. The context economy hides content (packing, receipts, compaction); when a
call uses a token that, at that moment, survives only in hidden content, the model needed evidence
it could no longer see: a *miss* (decisions.md, "The evidence wave"). ObservationPack uses the same
tokens the other way round: a result whose tokens the model keeps using is still in use.

A token is *distinctive* when it is specific enough that seeing it in a call means the model took it
from somewhere, not from common vocabulary:

- a **path**: a word with a ``/`` between word characters (``src/calc.py``, ``./a/b``), or a file name
  with an extension of letters (``calc.py``, ``Makefile.am``);
- an **identifier** of at least four characters with an underscore, a digit, or a lower-to-upper
  case change (``parse_header``, ``utf8``, ``parseHeader``), or any word of at least eight letters;
- a **number** of at least three digits (``412``; ``3.14`` counts its digits: ``3.14159``), or a hex
  string of at least seven characters with a digit and a letter (``a1b2c3d``, a commit).

Whether a distinctive token is evidence from hidden content is decided by the caller: it must occur
in the hidden original and nowhere in what the model can see.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from tau.extension import tool_calls

__all__ = ["distinctive_tokens", "message_evidence_text", "tool_call_tokens"]

# The standard library's engine: these patterns mean the same in it as in ``regex``, and it reads a
# log several times faster (ObservationPack reads every result that enters the context).
_WORD = re.compile(r"[A-Za-z0-9_./~-]+")
_PATH = re.compile(r"(?:[\w.~-]*\w/[\w.-]*\w[\w./-]*)|(?:[A-Za-z0-9_-]+\.[A-Za-z][A-Za-z0-9]{0,7})")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\d.])")
_HEX = re.compile(r"(?<![\w])[0-9a-f]{7,}(?![\w])")
_CAMEL = re.compile(r"[a-z][A-Z]")


def _is_distinctive_identifier(word: str) -> bool:
    if "_" in word.strip("_") or any(ch.isdigit() for ch in word) or _CAMEL.search(word):
        return True
    return len(word) >= 8 and word.isalpha()


def _is_distinctive_number(number: str) -> bool:
    return sum(ch.isdigit() for ch in number) >= 3


@functools.lru_cache(maxsize=1 << 16)
def _chunk_tokens(chunk: str) -> frozenset[str]:
    """The distinctive tokens of one word-like chunk; chunks repeat a lot in real output (the same
    paths, names and numbers), so they are remembered."""
    found: set[str] = set()
    for path in _PATH.findall(chunk):
        found.add(path.rstrip("."))
    for word in _IDENT.findall(chunk):
        if _is_distinctive_identifier(word):
            found.add(word)
    for number in _NUMBER.findall(chunk):
        if _is_distinctive_number(number):
            found.add(number)
    for hexa in _HEX.findall(chunk):
        if any(ch.isdigit() for ch in hexa) and any(ch.isalpha() for ch in hexa):
            found.add(hexa)
    return frozenset(found)


def distinctive_tokens(text: str) -> set[str]:
    """The distinctive tokens of ``text`` (see the module docstring).

    Each distinct word is read once (the shortest token, a path like ``a.b``, has three characters).
    """
    found: set[str] = set()
    for chunk in set(_WORD.findall(text)):
        if len(chunk) >= 3:
            found |= _chunk_tokens(chunk)
    found.discard("")
    return found


def _argument_strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _argument_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _argument_strings(item)


def tool_call_tokens(message: dict[str, Any]) -> set[str]:
    """The distinctive tokens of an assistant message's tool-call arguments."""
    tokens: set[str] = set()
    for call in tool_calls(message):
        for text in _argument_strings(call.get("arguments")):
            tokens |= distinctive_tokens(text)
    return tokens


def message_evidence_text(message: dict[str, Any]) -> str:
    """What of an assistant message shows use of earlier output: its text and tool-call arguments."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "toolCall":
            parts.extend(_argument_strings(block.get("arguments")))
    return "\n".join(parts)
