"""grep, find and ls give pi 1.6's results over the same tree (``data/pi_search_vectors.json``).

The vectors are pi's own tool definitions run over ``search_tree.py``'s tree with the real rg and
fd (``data/generate_pi_search_vectors.py``). tau runs each case in a fresh copy of the tree at the
same place and must give the same ``content`` and ``details``, or the same error text.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from search_tree import make_tree

from tau.tools import ToolContext, builtin_tool

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "pi_search_vectors.json").read_text(encoding="utf-8"))
PLACE = "/tmp/tau-search-tree"
# fd stops after limit + 1 results in the order its parallel walk finds them, so which files pi
# lists when more exist than the limit depends on the file system: tau lists the first in path order.
WALK_ORDER_DEPENDENT = {"find-limit"}


def _run(case: dict, root: Path) -> dict:
    tool = builtin_tool(case["tool"])
    try:
        result = asyncio.run(tool.execute("call_1", case["params"], None, None, ToolContext(cwd=str(root))))
    except Exception as exc:
        return {"error": str(exc).replace(str(root), PLACE)}
    data = json.loads(json.dumps(result.to_json()).replace(str(root), PLACE))
    return {"content": data["content"], "details": data.get("details")}


@pytest.fixture
def tree(tmp_path):
    # The vectors name the tree's folder; outputs are compared with it put back.
    return make_tree(tmp_path / "tree")


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_tool_result_equals_pi(case, tree):
    expected = {key: case[key] for key in ("content", "details", "error") if key in case}
    got = _run(case, tree)
    if case["name"] in WALK_ORDER_DEPENDENT:
        _assert_same_shape(case, got, tree)
        return
    assert got == expected


def _assert_same_shape(case: dict, got: dict, tree: Path) -> None:
    """Same notice and details; the listed paths are ``limit`` of the matches, in path order."""
    everything = _run({**case, "params": {**case["params"], "limit": 10_000}}, tree)
    all_paths = everything["content"][0]["text"].split("\n")
    listed, notice = got["content"][0]["text"].split("\n\n")
    expected_listed, expected_notice = case["content"][0]["text"].split("\n\n")
    assert notice == expected_notice and got["details"] == case["details"]
    assert listed.split("\n") == all_paths[: case["params"]["limit"]]
    assert set(expected_listed.split("\n")) <= set(all_paths)


def test_vectors_cover_every_tool_and_each_limit():
    names = {case["name"] for case in VECTORS}
    for tool in ("grep", "find", "ls"):
        assert any(case["tool"] == tool for case in VECTORS)
    assert {"grep-limit", "grep-byte-cap", "grep-long-line", "find-limit", "ls-limit"} <= names
    by_name = {case["name"]: case for case in VECTORS}
    assert "matchLimitReached" in by_name["grep-limit"]["details"]
    assert "truncation" in by_name["grep-byte-cap"]["details"]
    assert by_name["grep-long-line"]["details"] == {"linesTruncated": True}
    assert "entryLimitReached" in by_name["ls-limit"]["details"]
