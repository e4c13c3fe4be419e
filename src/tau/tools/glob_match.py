"""Glob patterns as fd reads them (``fd --glob``: the ``globset`` crate with ``literal_separator``).

``*`` and ``?`` never cross a ``/``; ``**`` is recursive only as a whole path component (``**/x``,
``x/**``, ``a/**/b``), elsewhere it is two ``*``; ``[ab]``, ``[!ab]``/``[^ab]`` and ranges are classes;
``{a,b}`` alternates; ``\\`` escapes the next character. A pattern becomes an anchored regular
expression. fd's smart case is kept: a pattern with an upper-case letter matches case-sensitively.
"""

from __future__ import annotations

import re

from tau.common.dataclass import dataclass

__all__ = ["GlobError", "compile_glob", "has_uppercase"]


class GlobError(ValueError):
    """A pattern fd would refuse; the message is fd's."""


@dataclass
class _Class:
    negated: bool
    ranges: list[tuple[str, str]]


# Tokens: a literal character (str of length 1), "ANY", "STAR", "RPREFIX", "RSUFFIX", "RMIDDLE",
# a _Class, or a list of alternatives (each a token list).
_ANY, _STAR, _RPREFIX, _RSUFFIX, _RMIDDLE = "\0any", "\0star", "\0rprefix", "\0rsuffix", "\0rmiddle"


class _Parser:
    def __init__(self, glob: str) -> None:
        self.glob = glob
        self.chars = list(glob)
        self.pos = 0
        self.branches: list[list] = [[]]
        self.stack: list[int] = []
        self.prev: str | None = None
        self.cur: str | None = None

    def error(self, text: str) -> GlobError:
        return GlobError(f"error parsing glob '{self.glob}': {text}")

    def bump(self) -> str | None:
        self.prev = self.cur
        self.cur = self.chars[self.pos] if self.pos < len(self.chars) else None
        if self.cur is not None:
            self.pos += 1
        return self.cur

    def peek(self) -> str | None:
        return self.chars[self.pos] if self.pos < len(self.chars) else None

    def push(self, token) -> None:
        self.branches[-1].append(token)

    def parse(self) -> list:
        while (char := self.bump()) is not None:
            if char == "?":
                self.push(_ANY)
            elif char == "*":
                self.star()
            elif char == "[":
                self.char_class()
            elif char == "{":
                self.stack.append(len(self.branches))
                self.branches.append([])
            elif char == "}":
                if not self.stack:
                    raise self.error("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
                start = self.stack.pop()
                alternatives = self.branches[start:]
                del self.branches[start:]
                self.push(alternatives)
            elif char == "," and self.stack:
                self.branches.append([])
            elif char == "\\":
                escaped = self.bump()
                if escaped is None:
                    raise self.error("dangling '\\'")
                self.push(escaped)
            else:
                self.push(char)
        if self.stack:
            raise self.error("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
        return self.branches[0]

    def star(self) -> None:
        prev = self.prev
        if self.peek() != "*":
            self.push(_STAR)
            return
        self.bump()
        if not self.branches[-1]:
            if self.peek() not in (None, "/"):
                self.push(_STAR)
                self.push(_STAR)
            else:
                self.push(_RPREFIX)
                self.bump()
            return
        in_alternate = len(self.branches) > 1
        if prev != "/" and (not in_alternate or prev not in (",", "{")):
            self.push(_STAR)
            self.push(_STAR)
            return
        nxt = self.peek()
        if nxt is None or (nxt in (",", "}") and in_alternate):
            if nxt is None:
                self.bump()
            is_suffix = True
        elif nxt == "/":
            self.bump()
            is_suffix = False
        else:
            self.push(_STAR)
            self.push(_STAR)
            return
        last = self.branches[-1].pop()
        if last in (_RPREFIX, _RSUFFIX):
            self.push(last)
        else:
            self.push(_RSUFFIX if is_suffix else _RMIDDLE)

    def char_class(self) -> None:
        ranges: list[tuple[str, str]] = []
        negated = self.peek() in ("!", "^")
        if negated:
            self.bump()
        first = True
        in_range = False
        while True:
            char = self.bump()
            if char is None:
                raise self.error("unclosed character class; missing ']'")
            if char == "]" and not first:
                break
            if char == "-" and not first:
                if in_range:
                    self._extend(ranges, "-")
                    in_range = False
                else:
                    in_range = True
            elif in_range:
                self._extend(ranges, char)
                in_range = False
            else:
                ranges.append((char, char))
            first = False
        if in_range:
            ranges.append(("-", "-"))
        self.push(_Class(negated, ranges))

    def _extend(self, ranges: list[tuple[str, str]], end: str) -> None:
        start = ranges[-1][0]
        if end < start:
            raise self.error(f"invalid range; '{start}' > '{end}'")
        ranges[-1] = (start, end)


def _to_regex(tokens: list) -> str:
    parts: list[str] = []
    for token in tokens:
        if isinstance(token, _Class):
            inner = "".join(
                re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}"
                for low, high in token.ranges
            )
            parts.append(f"[{'^' if token.negated else ''}{inner}]")
        elif isinstance(token, list):
            alternatives = [alt for alt in (_to_regex(branch) for branch in token) if alt]
            if alternatives:
                parts.append(f"(?:{'|'.join(alternatives)})")
        elif token == _ANY:
            parts.append("[^/]")
        elif token == _STAR:
            parts.append("[^/]*")
        elif token == _RPREFIX:
            parts.append("(?:/?|.*/)")
        elif token == _RSUFFIX:
            parts.append("/.*")
        elif token == _RMIDDLE:
            parts.append("(?:/|/.*/)")
        else:
            parts.append(re.escape(token))
    return "".join(parts)


def _literals(tokens: list) -> str:
    out = []
    for token in tokens:
        if isinstance(token, _Class):
            out += [f"{low}{high}" for low, high in token.ranges]
        elif isinstance(token, list):
            out += [_literals(branch) for branch in token]
        elif len(token) == 1:
            out.append(token)
    return "".join(out)


def has_uppercase(glob: str) -> bool:
    """fd's smart case: whether the pattern holds an upper-case letter (in a literal or a class)."""
    return any(char.isupper() for char in _literals(_Parser(glob).parse()))


def compile_glob(glob: str, *, ignore_case: bool) -> re.Pattern[str]:
    """The anchored regular expression of ``glob``; raises :class:`GlobError` as fd would refuse it."""
    tokens = _Parser(glob).parse()
    body = ".*" if tokens == [_RPREFIX] else _to_regex(tokens)
    return re.compile(f"^{body}$", re.DOTALL | (re.IGNORECASE if ignore_case else 0))
