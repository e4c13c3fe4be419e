"""``tool_search``: pi's BM25 ranking, checked against real pi 1.6's ranker on the same tools and
queries (``data/ranking.json``, made by ``node data/rank.mjs`` with pi 1.6's compiled
``extensions/tool-search/tool.js``), and the tool's answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import tau.bundled.tool_search as tool_search
from tau.bundled.tool_search.ranker import Bm25Ranker, search_document, tokenize

GOLDEN = json.loads((Path(__file__).parent / "data" / "ranking.json").read_text())


def test_search_documents_are_pis():
    for tool, expected in zip(GOLDEN["tools"], GOLDEN["documents"], strict=True):
        document = search_document(tool)
        assert (document.name, document.text, document.namespace_text) == (
            expected["name"],
            expected["text"],
            expected["namespaceText"],
        )


@pytest.mark.parametrize("case", GOLDEN["results"], ids=lambda case: case["query"])
def test_rankings_and_scores_equal_pis(case):
    documents = [search_document(tool) for tool in GOLDEN["tools"]]
    ranked = Bm25Ranker().rank(case["query"], documents, case["limit"])
    assert [{"name": name, "score": score} for name, score in ranked] == case["ranked"]


def test_tokens_split_identifiers_and_drop_stop_words_and_plurals():
    assert tokenize("getHTTPResponse of the XMLParser issues") == [
        "get",
        "http",
        "response",
        "xml",
        "parser",
        "issue",
    ]
    assert tokenize("dev-radius thread_read") == ["dev", "radiu", "thread", "read"]


UNSPACED = json.loads((Path(__file__).parent / "data" / "tokens.json").read_text())


@pytest.mark.parametrize("case", UNSPACED["tokens"], ids=lambda case: case["text"])
def test_unspaced_scripts_split_into_pis_words(case):
    """ICU's word segmenter, as pi's Intl.Segmenter (``data/tokens.json``, made by ``node
    data/tokens.mjs`` with pi 1.6's own ``tokenize``; Node 22.23 carries ICU 78.3, icu4py too)."""
    assert tokenize(case["text"]) == case["tokens"]


@pytest.mark.parametrize("case", UNSPACED["ranking"], ids=lambda case: case["query"])
def test_queries_in_unspaced_scripts_rank_as_pis(case):
    documents = [search_document(tool) for tool in UNSPACED["tools"]]
    ranked = Bm25Ranker().rank(case["query"], documents, 8)
    assert [{"name": name, "score": score} for name, score in ranked] == case["ranked"]


def test_without_icu_unspaced_text_splits_at_spaces(monkeypatch):
    from tau.bundled.tool_search import ranker

    monkeypatch.setattr(ranker, "_word_breaker", False)
    assert tokenize("查询天气预报 数据库") == ["查询天气预报", "数据库"]
    assert tokenize("getFiles now") == ["get", "file", "now"]  # ASCII never needed ICU


class FakeTau:
    def __init__(self, tools: list[dict[str, Any]], active: list[str]) -> None:
        self.tools, self.active, self.registered = tools, list(active), []

    def get_all_tools(self) -> list[dict[str, Any]]:
        return self.tools

    def get_active_tools(self) -> list[str]:
        return list(self.active)

    def set_active_tools(self, names: list[str]) -> None:
        self.active = list(names)

    def register_tool(self, definition: Any) -> None:
        self.registered.append(definition)


def _tool(name: str, description: str, exposure: str = "deferred") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {}},
        "exposure": exposure,
    }


def _search(fake: FakeTau, **params: Any) -> Any:
    tool_search.extension(fake)
    (definition,) = fake.registered
    return asyncio.run(definition.execute("call_1", params, None, None, SimpleNamespace()))


def test_matches_are_loaded_for_the_next_call_and_named_in_the_answer():
    fake = FakeTau(
        [
            _tool("read", "Read a file", "direct"),
            _tool("mcp__a__add", "Add two numbers.\nMore text."),
            _tool("mcp__a__sum", "Sum numbers", "codemode"),
            _tool("mcp__a__gone", "Add numbers", "hidden"),
            _tool("mcp__a__mul", "Multiply numbers"),
        ],
        ["read"],
    )
    result = _search(fake, query="add numbers", limit=2)
    assert result.content == [
        {
            "type": "text",
            "text": "Loaded 2 tools. They are available from your next call:\n"
            "- mcp__a__add: Add two numbers.\n- mcp__a__sum: Sum numbers",
        }
    ]
    assert result.details == {"loaded": ["mcp__a__add", "mcp__a__sum"]}
    assert fake.active == ["read", "mcp__a__add", "mcp__a__sum"]
    again = _search(FakeTau(fake.tools, fake.active), query="add")
    assert again.details == {"loaded": []} and again.content[0]["text"] == "No matching tools found."


def test_the_declaration_and_bad_arguments():
    fake = FakeTau([], [])
    tool_search.extension(fake)
    (definition,) = fake.registered
    assert (definition.name, definition.exposure, definition.default_active) == (
        "tool_search",
        "model-only",
        False,
    )
    assert definition.reaches_tools({"query": "x"}) == "all"
    assert definition.description == tool_search.TOOL_SEARCH_DESCRIPTION
    for params, message in (
        ({"query": "  "}, "query must not be empty"),
        ({"query": "x", "limit": 1.5}, "limit must be a positive integer"),
        ({"query": "x", "limit": 0}, "limit must be a positive integer"),
    ):
        with pytest.raises(ValueError, match=message):
            asyncio.run(definition.execute("c", params, None, None, None))
    assert asyncio.run(definition.execute("c", {"query": "x", "limit": 2.0}, None, None, None)).details == {
        "loaded": []
    }
