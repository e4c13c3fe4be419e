"""``tau.register_tool_renderer`` (pi ``registerToolRenderer``) and the mcp extension's use of it: a
resumed session draws calls to MCP tools whose server has not connected (or never does) as pi does,
``server/tool {arguments}`` and the result's text, not as an unknown tool."""

from __future__ import annotations

import asyncio
from typing import Any

from interactive_support import Screen, faux_session

from tau.extension.loader import load_extensions, load_factory
from tau.extension.runner import ExtensionRunner
from tau.modes.interactive.model import ToolBlock
from tau.modes.interactive.tool_rows import tool_row


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def _block(name: str) -> ToolBlock:
    block = ToolBlock(call_id="c1", name=name, args={"a": 1})
    block.status = "done"
    block.output = "3"
    block.result = {"content": [{"type": "text", "text": "3"}], "details": {"server": "demo", "tool": "add"}}
    return block


def test_the_mcp_extension_draws_a_call_of_an_unregistered_mcp_tool(tmp_path):
    runner = run(load_extensions(None, cli_paths=["builtin:mcp"], cwd=tmp_path, no_extensions=True))
    renderers = runner.get_tool_renderer("mcp__demo__add", None)
    assert renderers is not None
    row = tool_row(_block("mcp__demo__add"), renderers)
    assert row.title == 'demo/add {"a":1}'
    assert row.body == ["3"]
    assert runner.get_tool_renderer("not_mcp", None) is None  # other tools keep the default row


def test_resolvers_run_in_load_order_and_next_fills_in(tmp_path):
    runner = ExtensionRunner(cwd=str(tmp_path), mode="tui")
    seen: list[str] = []

    def first(tau):
        def resolve(name, next_renderer):
            seen.append("first")
            return next_renderer() or {"render_call": lambda args: "first"}

        tau.register_tool_renderer(resolve)

    def second(tau):
        def resolve(name, next_renderer):
            seen.append("second")
            return {"render_call": lambda args: "second"} if name == "x" else next_renderer()

        tau.register_tool_renderer(resolve)

    def broken(tau):
        tau.register_tool_renderer(lambda name, next_renderer: 1 / 0)

    async def load() -> None:
        for factory, path in ((first, "first.py"), (second, "second.py"), (broken, "broken.py")):
            await load_factory(runner, factory, path=path)

    run(load())
    errors: list[dict] = []
    runner.on_error(errors.append)
    assert runner.get_tool_renderer("x").render_call({}) == "second"
    assert seen == ["first", "second"]
    assert runner.get_tool_renderer("y").render_call({}) == "first"  # the broken one is skipped, reported
    assert errors and errors[0]["extensionPath"] == "broken.py" and errors[0]["event"] == "tool_renderer"


def test_a_resumed_mcp_call_is_drawn_by_the_mcp_extension_on_screen(tmp_path):
    steps = [{"tool": "mcp__demo__add", "args": {"a": 1}}, {"text": "done"}]
    session = faux_session(tmp_path, steps)
    runner = ExtensionRunner(cwd=str(tmp_path), mode="tui")

    async def scenario() -> str:
        from tau.bundled.mcp import extension as mcp_extension

        await load_factory(runner, mcp_extension, path="builtin:mcp")
        runner.bind(session)
        await session.prompt("add")  # no such tool: the call fails, its row stays in the history
        screen = Screen(session, runner)
        await screen.start()
        await screen.wait_text('demo/add {"a":1}')
        text = screen.text()
        await screen.quit()
        return text

    text = run(scenario())
    assert "mcp__demo__add {" not in text
