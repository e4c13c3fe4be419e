"""Distinctive tokens: the evidence a model carries from what it saw into what it does next.

A later tool call that names ``parse_header``, ``src/calc.py`` or line ``412`` uses the earlier
output those came from. The context economy hides content (packing, receipts, compaction); when a
call uses a token that, at that moment, survives only in hidden content, the model needed evidence
it could no longer see: a *miss* (decisions.md, "The evidence wave"). ObservationPack uses the same
tokens the other way round: a result whose tokens the model keeps using is still in use.

A token is *distinctive* when it is specific enough that seeing it in a call means the model took it
from somewhere, not from common vocabulary (issue 25: "identifier, path, number"):

- a **path**: a word with a ``/`` between word characters (``src/calc.py``, ``./a/b``, ``/usr/lib``,
  ``src/tau/``) that is not two words of prose (one slash and no dot: ``Create/edit``), or a file
  name whose extension is a known file extension (``calc.py``, ``package-lock.json``, ``index.d.ts``);
- an **identifier** of at least four characters with an underscore, a digit, or a lower-to-upper
  case change (``parse_header``, ``utf8``, ``parseHeader``);
- a **number** of at least three digits (``412``; ``3.14`` counts its digits: ``3.14159``) that is not
  a round one of at most two significant digits (``100``, ``120``, ``500``, ``4000``: what a model
  chooses for ``head -n``, a timeout or a width rather than reads), or a hex string of at least seven
  characters with a digit and a letter (``a1b2c3d``, a commit).

Not distinctive (each rule was taken out after reading the misses it counted in the two real pi
sessions of the fixtures, ``docs/savings.md``): plain words, however long (``automatically``,
``undefined``, ``instanceof``: a model writes them from its vocabulary), a dotted name that is no
file name (``console.error``, ``Date.now``, ``this.state``) and two words joined by a slash
(``tool_use/tool_result``); the identifiers within them still count (``assistantMsg`` in
``assistantMsg.stopReason``).

Whether a distinctive token is evidence from hidden content is decided by the caller: it must occur
in the hidden original and nowhere in what the model can see.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from tau.common.lazy_regex import lazy_pattern
from tau.extension import tool_calls

__all__ = ["FILE_EXTENSIONS", "distinctive_tokens", "message_evidence_text", "tool_call_tokens"]

# The standard library's engine: these patterns mean the same in it as in ``regex``, and it reads a
# log several times faster (ObservationPack reads every result that enters the context).
_WORD = lazy_pattern(r"[A-Za-z0-9_./~-]+")
_PATH = lazy_pattern(r"[\w.~-]*\w/[\w.-]*\w[\w./-]*")
# A file name: the whole word, its last extension a known one (a dotted name such as ``Date.now`` or
# ``console.error`` is code, not a file).
_FILE_NAME = lazy_pattern(r"[A-Za-z0-9_-][\w.-]*\.([A-Za-z][A-Za-z0-9]{0,9})")
_IDENT = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_NUMBER = lazy_pattern(r"(?<![\w.])\d+(?:\.\d+)?(?![\d.])")
_HEX = lazy_pattern(r"(?<![\w])[0-9a-f]{7,}(?![\w])")
_CAMEL = lazy_pattern(r"[a-z][A-Z]")
# Round numbers of at most two significant digits: chosen (``head -n 100``, ``timeout 120``), not read.
_ROUND = lazy_pattern(r"[1-9]\d?0+")
# The extensions that make a dotted word a file name (lower case; compared case-insensitively).
# Left out on purpose, being member names far more often than extensions: env, map, key, out, err,
# min, d, a, o, m, v, r.
_EXTENSION_WORDS = """
    py pyi pyx pxd ipynb js mjs cjs jsx ts tsx mts cts vue svelte json jsonl json5 ndjson md mdx rst
    txt adoc org toml yaml yml ini cfg conf properties lock log csv tsv xml xsd xsl html htm xhtml css
    scss sass less svg png jpg jpeg gif webp ico bmp pdf c h cc cpp cxx hpp hh hxx ipp inl mm rs go
    java kt kts scala sc groovy gradle swift rb erb rake gemspec php pl pm lua sql sh bash zsh fish
    ps1 psm1 bat cmd dart ex exs erl hrl hs lhs ml mli fs fsi fsx cs csproj sln vb clj cljs cljc edn
    elm nim zig sv svh vhd vhdl proto graphql gql tf tfvars hcl nix el vim mk am ac cmake in tpl
    tmpl j2 jinja jinja2 mustache hbs ejs pug dockerfile gitignore dockerignore editorconfig patch
    diff orig bak rej tmp gz tgz bz2 xz zst zip tar jar war whl egg so dylib dll exe wasm class pyc
    pem crt cer csr tex bib snap lockb sum mod plist xcconfig pbxproj storyboard xib asm s
"""
FILE_EXTENSIONS = frozenset(_EXTENSION_WORDS.split())


def _is_distinctive_identifier(word: str) -> bool:
    return "_" in word.strip("_") or any(ch.isdigit() for ch in word) or bool(_CAMEL.search(word))


def _is_distinctive_number(number: str) -> bool:
    return sum(ch.isdigit() for ch in number) >= 3 and not _ROUND.fullmatch(number)


def _prose_pair(path: str, chunk: str, start: int) -> bool:
    """Whether a slashed word is two words of prose (``Create/edit``, ``error/aborted``, ``and/or``):
    one slash, no dot, not under the root (``/usr/lib`` is a path) nor ending in a slash."""
    return path.count("/") == 1 and "." not in path and not path.endswith("/") and chunk[start - 1 : start] != "/"


def _file_name(chunk: str) -> str | None:
    """The chunk as a file name, when it is one (a trailing sentence dot left out)."""
    name = chunk.rstrip(".")
    match = _FILE_NAME.fullmatch(name)
    return name if match is not None and match.group(1).lower() in FILE_EXTENSIONS else None


@functools.lru_cache(maxsize=1 << 16)
def _chunk_tokens(chunk: str) -> frozenset[str]:
    """The distinctive tokens of one word-like chunk; chunks repeat a lot in real output (the same
    paths, names and numbers), so they are remembered."""
    found: set[str] = set()
    for match in _PATH.finditer(chunk):
        path = match.group().rstrip(".")
        if not _prose_pair(path, chunk, match.start()):
            found.add(path)
    if (name := _file_name(chunk)) is not None:
        found.add(name)
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
