"""Tool discovery: pi's BM25 ranking over tool metadata (``extensions/tool-search/tool.ts``).

Okapi BM25 over each tool's description with its schema's descriptions and property names, the
tool name and its namespace as separate fields:

- a tool that matches more of the query's terms, in any field, ranks above one that matches fewer,
  whatever their scores;
- a query term in the name counts three times its IDF, more than any number of mentions in the
  description; one in the namespace (name, description, instructions) half its IDF;
- a tool whose whole local name is in the query gets a bonus worth one more match of every term;
- a query that is exactly a tool's name (or the part after a ``__``) ranks that tool first;
- ties keep the order the tools were registered in.

Words are split at identifier boundaries (``readFile`` → ``read file``), lower-cased, stripped of
English stop words and of a plural ``s`` (``issues`` → ``issue``). Text that is not plain ASCII goes
through ICU's word segmenter, as pi's ``Intl.Segmenter`` (Node 22 carries ICU 78; the ``icu4py``
wheel of the ``icu`` extra the same), so unspaced scripts (Chinese, Japanese, Thai) split into pi's
words; without ``icu4py`` such text is split at spaces only (docs/mcp.md).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.jsmath import js_log

__all__ = ["Bm25Ranker", "SearchDocument", "search_document", "tokenize"]

_STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it of on or that the this to with".split()  # noqa: SIM905
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_ASCII_WORDS = re.compile(r"^[a-z0-9 ]*$")
_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
_PLURAL_ES = re.compile(r"(ches|shes|sses|xes|zes)$")
_NAME_UNSAFE = re.compile(r"[^a-z0-9_$]")
NAME_WEIGHT = 3
NAMESPACE_WEIGHT = 0.5


def _stem(term: str) -> str:
    """A naive singular, so ``issues`` matches ``issue`` and ``searches`` ``search``."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and _PLURAL_ES.search(term):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


_word_breaker: Any = None  # icu4py's WordBreaker, False when it is not installed


def _icu_words(text: str) -> list[str] | None:
    """ICU's words of ``text`` (``Intl.Segmenter``'s word-like segments), or ``None`` without ICU."""
    global _word_breaker
    if _word_breaker is None:
        try:
            from icu4py.breakers import WordBreaker

            _word_breaker = WordBreaker
        except ImportError:
            _word_breaker = False
    if _word_breaker is False:
        return None
    # The text holds only letters, marks, digits and spaces here: the segments that are not
    # spaces are the word-like ones.
    return [word for word in _word_breaker(text, "en") if not word.isspace()]


def tokenize(text: str) -> list[str]:
    """The search terms of ``text``."""
    import regex  # \p{…} classes; tau depends on it already

    normalized = unicodedata.normalize("NFC", text)
    normalized = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", normalized)).lower()
    normalized = regex.sub(r"[^\p{L}\p{M}\p{N}]+", " ", normalized)
    if _ASCII_WORDS.match(normalized):
        words = normalized.split(" ")
    else:
        segmented = _icu_words(normalized)
        words = normalized.split() if segmented is None else segmented
    return [
        _stem(word) if _ASCII_WORD.match(word) else word for word in words if word and word not in _STOP_WORDS
    ]


def _resolve_ref(ref: str, root: Any) -> Any:
    """A local ``$ref`` (``#``, ``#/$defs/Item``) in ``root``; ``None`` when it does not resolve."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _schema_text(schema: Any, root: Any, parts: list[str], seen: list[Any]) -> None:
    """Descriptions and property names, following local ``$ref``s once each."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve_ref(ref, root)
        if isinstance(target, dict) and not any(target is item for item in seen):
            seen.append(target)
            _schema_text(target, root, parts, seen)
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    if isinstance(schema.get("properties"), dict):
        for name, prop in schema["properties"].items():
            parts.append(name)
            _schema_text(prop, root, parts, seen)
    _schema_text(schema.get("items"), root, parts, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                _schema_text(variant, root, parts, seen)


@dataclass
class SearchDocument:
    """What a tool is searched by: its name, its text, and its namespace's text."""

    name: str
    text: str
    namespace_text: str = ""


def search_document(tool: dict[str, Any]) -> SearchDocument:
    """The document of a tool as ``get_all_tools()`` reports it."""
    parameters = tool.get("parameters")
    parts = [tool.get("description") or ""]
    _schema_text(parameters, parameters, parts, [parameters])
    namespace = tool.get("namespace")
    if isinstance(namespace, str):
        namespace = {"name": namespace}
    namespace_text = (
        " ".join(
            [
                namespace.get("name") or "",
                namespace.get("description") or "",
                namespace.get("instructions") or "",
            ]
        )
        if isinstance(namespace, dict)
        else ""
    )
    return SearchDocument(tool["name"], " ".join(part for part in parts if part.strip()), namespace_text)


def _normalize_name(name: str) -> str:
    return _NAME_UNSAFE.sub("_", name.strip().lower())


@dataclass
class _Indexed:
    name: str
    name_terms: set[str]
    local_terms: list[str]
    counts: dict[str, int]
    length: int
    namespace_terms: set[str]


def _index(document: SearchDocument) -> _Indexed:
    counts: dict[str, int] = {}
    for term in tokenize(document.text):
        counts[term] = counts.get(term, 0) + 1
    local = document.name.split("__")[-1]
    return _Indexed(
        document.name,
        set(tokenize(document.name)),
        list(dict.fromkeys(tokenize(local))),
        counts,
        sum(counts.values()),
        set(tokenize(document.namespace_text)),
    )


class Bm25Ranker:
    """Ranks documents for a query (``k1`` 1.2, ``b`` 0.75, as pi)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def rank(self, query: str, documents: list[SearchDocument], limit: int) -> list[tuple[str, float]]:
        """``(name, score)`` of the best ``limit`` matches, best first."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not documents or limit <= 0:
            return []
        indexed = [_index(document) for document in documents]
        average = sum(doc.length for doc in indexed) / len(indexed) or 1
        idf: dict[str, float] = {}
        for term in terms:
            frequency = sum(
                1
                for doc in indexed
                if term in doc.name_terms or term in doc.counts or term in doc.namespace_terms
            )
            idf[term] = js_log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
        full_name_bonus = sum(idf.values())
        exact_query = _normalize_name(query)
        matches = []
        for doc in indexed:
            norm = self.k1 * (1 - self.b + (self.b * doc.length) / average)
            score = 0.0
            covered = 0
            for term in terms:
                count = doc.counts.get(term, 0)
                weight = (
                    (NAME_WEIGHT if term in doc.name_terms else 0)
                    + (NAMESPACE_WEIGHT if term in doc.namespace_terms else 0)
                    + (count * (self.k1 + 1)) / (count + norm)
                )
                if weight > 0:
                    covered += 1
                score += idf[term] * weight
            if score == 0:
                continue
            if doc.local_terms and all(term in terms for term in doc.local_terms):
                score += full_name_bonus
            normalized = _normalize_name(doc.name)
            exact = normalized == exact_query or normalized.endswith(f"__{exact_query}")
            matches.append((doc.name, score, covered, exact))
        matches.sort(key=lambda match: (-int(match[3]), -match[2], -match[1]))
        return [(name, score) for name, score, _, _ in matches[:limit]]
