"""codemode as an extension: how it is enabled, what it reaches, and what it offers scripts.

Tools of every exposure (an MCP-like ``codemode`` tool under a namespace, a ``deferred`` one, a
``hidden`` one, a ``model-only`` one), ``codemode.inlineBudget``, the options line, discovery,
``models``, output over budget, and ``store()`` following the branch.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from codemode_harness import Harness, code_call, text_of

from tau.bundled.codemode.store import read_store
from tau.extension import ToolDefinition, ToolResult
from tau.session.manager import SessionManager

NAMESPACE = {"name": "mcp__dev-radius", "aliases": ["dev-radius"], "description": "Radius dev server",
             "instructions": "Search first."}  # fmt: skip


def _tool(name: str, exposure: str, **extra: Any) -> ToolDefinition:
    async def execute(tool_call_id, params, signal, on_update, ctx):
        return ToolResult.text(f"{name} got {json.dumps(params, sort_keys=True)}")

    return ToolDefinition(
        name=name,
        description=f"The {name} tool: searches radius documents.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        execute=execute,
        exposure=exposure,
        **extra,
    )


def extra_tools(tau: Any) -> None:
    tau.register_tool(_tool("mcp__dev-radius__search", "codemode", namespace=NAMESPACE))
    tau.register_tool(_tool("lazy_lookup", "deferred"))
    tau.register_tool(_tool("withdrawn", "hidden"))
    tau.register_tool(_tool("ask_user", "model-only"))


class ExtraHarness(Harness):
    """The harness with ``extra_tools`` loaded before the bundled extensions."""

    async def start(self) -> Any:
        from tau.extension import load_extensions

        runner = await load_extensions(self.session, cli_paths=[extra_tools], cwd=str(self.cwd), mode="json")
        await self.session.start()
        return runner


def go(harness: Harness, *prompts: str) -> None:
    async def scenario() -> None:
        await harness.start()
        for prompt in prompts:
            await harness.session.prompt(prompt)

    asyncio.run(asyncio.wait_for(scenario(), 120))


def result_text(harness: Harness, index: int = 0) -> str:
    return text_of(harness.tool_results("codemode")[index])


def test_codemode_is_inactive_unless_selected(tmp_path):
    harness = Harness([{"text": "hi"}], tmp_path, {"defaultTools": ["read", "bash"]})
    go(harness, "hello")
    assert {"read", "bash"} <= set(harness.requests[0]["tools"])
    # fused edit/write replace built-ins the selection left out: they stay out, as codemode does
    assert not {"edit", "write", "codemode"} & set(harness.requests[0]["tools"])
    assert "codemode" in harness.session.get_offered_tool_names()
    (tmp_path / "b").mkdir()
    removed = Harness([{"text": "hi"}], tmp_path / "b", {"defaultTools": ["+codemode", "-write"]})
    go(removed, "hello")
    declared = [
        name for name in removed.requests[0]["tools"] if name in ("read", "bash", "edit", "write", "codemode")
    ]
    assert declared == ["read", "bash", "edit", "codemode"]


def test_scripts_reach_tools_by_exposure(tmp_path):
    script = """\
text(ALL_TOOLS.map((tool) => tool.name).sort());
text(await tools.mcp__dev_radius__search({ q: "alpha" }));
text(await tools["mcp__dev-radius__search"]({ q: "beta" }));
text(await tools.lazy_lookup({ q: "gamma" }));
for (const name of ["withdrawn", "ask_user", "codemode"]) {
  try { tools[name] } catch (error) { text(error.message.slice(0, error.message.indexOf(" exist.") + 7)) }
}
"""
    harness = ExtraHarness([code_call(script), {"text": "done"}], tmp_path)
    go(harness, "reach")
    declared = harness.requests[0]["tools"]
    assert "mcp__dev-radius__search" not in declared and "lazy_lookup" not in declared
    assert "ask_user" in declared and "withdrawn" not in declared
    description = declared["codemode"]["description"]
    # the codemode tool is listed under its namespace; the deferred one is not listed at all
    assert "## mcp__dev-radius\nRadius dev server" in description
    assert "### `mcp__dev_radius__search` (`mcp__dev-radius__search`)" in description
    assert "lazy_lookup" not in description
    output = result_text(harness)
    listed = json.loads(output.split("==> text 1/7 <==\n", 1)[1].split("\n", 1)[0])
    assert {"bash", "edit", "lazy_lookup", "mcp__dev_radius__search", "read", "write"} <= set(listed)
    assert not {"withdrawn", "ask_user", "codemode", "todo"} & set(listed)
    assert 'mcp__dev-radius__search got {"q": "alpha"}' in output
    assert 'mcp__dev-radius__search got {"q": "beta"}' in output
    assert 'lazy_lookup got {"q": "gamma"}' in output
    for name in ("withdrawn", "ask_user", "codemode"):
        assert f"tools.{name} does not exist." in output
    nested = harness.nested_ends()
    assert [e["toolCallId"].rsplit("/", 1)[1] for e in nested] == ["1", "2", "3"]
    assert all(e["parentToolCallId"] == harness.tool_results("codemode")[0]["toolCallId"] for e in nested)


def test_discovery_globals_find_unlisted_tools(tmp_path):
    script = """\
const found = await searchTools("radius documents", { limit: 2 });
text(found.map((tool) => tool.name));
text((await describeTool("lazy_lookup")).split("\\n")[0]);
text(await describeTool("nothing") === undefined);
text(await describeNamespace("dev_radius"));
"""
    harness = ExtraHarness([code_call(script), {"text": "done"}], tmp_path, {"codemode": {"inlineBudget": 0}})
    go(harness, "find")
    description = harness.requests[0]["tools"]["codemode"]["description"]
    assert "## mcp__dev-radius (tools not listed)" in description and "### `" not in description
    output = result_text(harness)
    assert '["mcp__dev_radius__search","lazy_lookup"]' in output
    assert "The lazy_lookup tool: searches radius documents." in output
    assert "==> text 3/4 <==\ntrue" in output
    assert (
        '{"name":"mcp__dev-radius","description":"Radius dev server","instructions":"Search first.",'
        '"tools":["mcp__dev_radius__search"]}' in output
    )


def test_the_options_line_must_come_first(tmp_path):
    misplaced = 'text(1);\n// @options: {"timeout_ms": 10}'
    unknown = '// @options: {"memory": 1}\ntext(1)'
    harness = Harness([code_call(misplaced), code_call(unknown), {"text": "done"}], tmp_path)
    go(harness, "bad options")
    first, second = harness.tool_results("codemode")
    assert first["isError"] and text_of(first) == (
        "The // @options: line must be the first line of the input; found one on line 2"
    )
    assert second["isError"] and text_of(second) == (
        "@options only supports `max_output_tokens` and `timeout_ms`; got `memory`"
    )


def test_output_over_the_budget_keeps_both_ends_and_the_whole_text_in_a_file(tmp_path):
    script = '// @options: {"max_output_tokens": 50}\nfor (let n = 0; n < 100; n++) text("line " + n);'
    harness = Harness([code_call(script), {"text": "done"}], tmp_path)
    go(harness, "long")
    result = harness.tool_results("codemode")[0]
    text = text_of(result)
    assert "Warning: truncated output (original token count: " in text
    assert "line 0" in text and "line 99" in text and "line 50\n" not in text
    path = Path(result["details"]["fullOutputPath"])
    assert f"[Full output: {path} (read with offset/limit)]" in text
    assert "line 50" in path.read_text()
    path.unlink()


def test_models_lists_chat_models_and_refuses_classifiers(tmp_path):
    script = """\
text((await models.getModelsOfType("classifier")).length);
text((await models.getModelOfType("chat", "faux", "faux-1")).id);
try {
  await models.classify({ provider: "faux", id: "faux-1" }, { state: {}, questions: {} });
} catch (error) {
  text(error.message);
}
"""
    harness = Harness([code_call(script), {"text": "done"}], tmp_path)
    go(harness, "models")
    output = result_text(harness)
    assert "==> text 1/3 <==\n0" in output and "==> text 2/3 <==\nfaux-1" in output
    assert '"faux/faux-1" is a chat model, not a classifier model.' in output
    assert "tau has no classifier models" in output


def test_store_follows_the_branch(tmp_path):
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    root = manager.append_custom_entry("codemode-store", {"set": {"a": 1, "b": 2}, "delete": []})
    manager.append_custom_entry("codemode-store", {"set": {"a": 3}, "delete": ["b"]})
    assert read_store(manager.get_branch()) == {"a": 3}
    manager.branch(root)
    manager.append_custom_entry("codemode-store", {"set": {"c": [1]}, "delete": []})
    assert read_store(manager.get_branch()) == {"a": 1, "b": 2, "c": [1]}
    manager.append_custom_entry("codemode-store", {"set": "not an object", "delete": []})
    assert read_store(manager.get_branch()) == {"a": 1, "b": 2, "c": [1]}
