"""``searchTools()``, ``describeTool()`` and ``describeNamespace()``: finding the tools a script can
call, including those the codemode description does not list (pi's BM25 ranking of ``tool_search``).

The ranking: Okapi BM25 over each tool's description and schema text, with the tool name and its
namespace as separate fields; a tool matching more query terms ranks first, a term in the name
outweighs any number of mentions in the description, and a query that is exactly a tool's name puts
that tool first.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from tau.bundled.codemode.declarations import resolve_schema_ref
from tau.bundled.codemode.sandbox import UNDEFINED, SandboxGlobal, ScriptCallError
from tau.bundled.codemode.source import to_identifier

__all__ = ["DEFAULT_SEARCH_LIMIT", "discovery_globals", "rank_tools", "tokenize"]

DEFAULT_SEARCH_LIMIT = 8
_NAME_WEIGHT = 3
_NAMESPACE_WEIGHT = 0.5
_K1 = 1.2
_B = 0.75
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
    ]
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SEPARATORS = re.compile(r"[^\w]+|_+")
_ASCII_WORD = re.compile(r"^[a-z0-9]+$")


def _stem(term: str) -> str:
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and re.search(r"(ches|shes|sses|xes|zes)$", term):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def tokenize(text: str) -> list[str]:
    """Words split at identifier boundaries, lower-cased, without stop words, in singular form."""
    normalized = unicodedata.normalize("NFC", text)
    normalized = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", normalized)).lower()
    words = [word for word in _SEPARATORS.split(normalized) if word and word not in _STOP_WORDS]
    return [_stem(word) if _ASCII_WORD.match(word) else word for word in words]


def _schema_text(schema: Any, root: Any, parts: list[str], seen: set[int]) -> None:
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = resolve_schema_ref(ref, root)
        if isinstance(target, dict) and id(target) not in seen:
            seen.add(id(target))
            _schema_text(target, root, parts, seen)
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    if isinstance(schema.get("properties"), dict):
        for name, prop in schema["properties"].items():
            parts.append(name)
            _schema_text(prop, root, parts, seen)
    _schema_text(schema.get("items"), root, parts, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            for variant in schema[key]:
                _schema_text(variant, root, parts, seen)


def search_document(tool: Any, namespace: dict[str, Any] | None) -> dict[str, Any]:
    parts = [tool.description]
    _schema_text(tool.parameters, tool.parameters, parts, {id(tool.parameters)})
    namespace_text = (
        " ".join([namespace["name"], namespace.get("description") or "", namespace.get("instructions") or ""])
        if namespace
        else ""
    )
    return {
        "name": tool.name,
        "text": " ".join(p for p in parts if p.strip()),
        "namespaceText": namespace_text,
    }


def _normalized_name(name: str) -> str:
    return re.sub(r"[^a-z0-9_$]", "_", name.strip().lower())


def rank_tools(query: str, documents: list[dict[str, Any]], limit: int) -> list[str]:
    """The names of the best ``limit`` documents for ``query``."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not documents or limit <= 0:
        return []
    indexed = []
    for document in documents:
        counts: dict[str, int] = {}
        for term in tokenize(document["text"]):
            counts[term] = counts.get(term, 0) + 1
        segments = document["name"].split("__")
        indexed.append(
            {
                "name": document["name"],
                "name_terms": set(tokenize(document["name"])),
                "local": list(dict.fromkeys(tokenize(segments[-1]))),
                "counts": counts,
                "length": sum(counts.values()),
                "namespace_terms": set(tokenize(document.get("namespaceText") or "")),
            }
        )
    average = sum(d["length"] for d in indexed) / len(indexed) or 1
    idf = {}
    for term in terms:
        frequency = sum(
            1
            for d in indexed
            if term in d["name_terms"] or term in d["counts"] or term in d["namespace_terms"]
        )
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    full_name_bonus = sum(idf.values())
    exact_query = _normalized_name(query)
    matches = []
    for position, d in enumerate(indexed):
        norm = _K1 * (1 - _B + _B * d["length"] / average)
        score = 0.0
        covered = 0
        for term in terms:
            count = d["counts"].get(term, 0)
            weight = (
                (_NAME_WEIGHT if term in d["name_terms"] else 0)
                + (_NAMESPACE_WEIGHT if term in d["namespace_terms"] else 0)
                + count * (_K1 + 1) / (count + norm)
            )
            if weight > 0:
                covered += 1
            score += idf[term] * weight
        if score == 0:
            continue
        if d["local"] and all(term in terms for term in d["local"]):
            score += full_name_bonus
        name = _normalized_name(d["name"])
        exact = name == exact_query or name.endswith(f"__{exact_query}")
        matches.append((not exact, -covered, -score, position, d["name"]))
    matches.sort()
    return [match[-1] for match in matches[:limit]]


def _arguments(args: Any, count: int) -> list[Any]:
    """A spread call's first ``count`` arguments, missing ones as ``None``."""
    values = list(args or [])
    return [*values, *([None] * count)][:count]


def _is_namespace_name(namespace: dict[str, Any], query: str) -> bool:
    wanted = to_identifier(query)
    names = [namespace["name"], *(namespace.get("aliases") or [])]
    return any(name == query or to_identifier(name) == wanted for name in names)


def discovery_globals(tools: list[Any], samples: dict[str, str], namespace_of: Any) -> list[SandboxGlobal]:
    """The three lookup globals over the script's callable ``tools``."""

    def entry(name: str) -> dict[str, str]:
        return {"name": to_identifier(name), "description": samples.get(name, "")}

    def search(args: Any, signal: Any) -> Any:
        query, options = _arguments(args, 2)
        if not isinstance(query, str):
            raise ScriptCallError("searchTools() expects a query string")
        options = options if isinstance(options, dict) else {}
        limit = options.get("limit", DEFAULT_SEARCH_LIMIT)
        if limit is None:
            limit = DEFAULT_SEARCH_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit != int(limit) or limit <= 0:
            raise ScriptCallError("searchTools() limit must be a positive integer")
        wanted = options.get("namespace")
        if wanted is not None and not isinstance(wanted, str):
            raise ScriptCallError("searchTools() namespace must be a string")
        documents = []
        for tool in tools:
            namespace = namespace_of(tool.name)
            if wanted and (not namespace or not _is_namespace_name(namespace, wanted)):
                continue
            documents.append(search_document(tool, namespace))
        return [entry(name) for name in rank_tools(query, documents, int(limit))]

    def describe_tool(args: Any, signal: Any) -> Any:
        name = _arguments(args, 1)[0]
        if not isinstance(name, str):
            raise ScriptCallError("describeTool() expects a tool name")
        tool = next((t for t in tools if t.name == name or to_identifier(t.name) == name), None)
        return samples.get(tool.name) if tool is not None else UNDEFINED

    def describe_namespace(args: Any, signal: Any) -> Any:
        name = _arguments(args, 1)[0]
        if not isinstance(name, str):
            raise ScriptCallError("describeNamespace() expects a namespace name")
        found = None
        names = []
        for tool in tools:
            namespace = namespace_of(tool.name)
            if not namespace or not _is_namespace_name(namespace, name):
                continue
            found = found or namespace
            names.append(to_identifier(tool.name))
        if found is None:
            return UNDEFINED
        out: dict[str, Any] = {"name": found["name"]}
        if found.get("description"):
            out["description"] = found["description"]
        if found.get("instructions"):
            out["instructions"] = found["instructions"]
        out["tools"] = names
        return out

    return [
        SandboxGlobal("searchTools", search),
        SandboxGlobal("describeTool", describe_tool),
        SandboxGlobal("describeNamespace", describe_namespace),
    ]
