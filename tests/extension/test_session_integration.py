"""Extensions on the real run-time session with the faux provider (what a user of tau would see)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from faux_model import FauxModel

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import (  # noqa: E402
    ExtensionRunner,
    ExtensionToolContext,
    ToolDefinition,
    ToolResult,
    load_extensions,
    load_factory,
)
from tau.session.manager import SessionManager  # noqa: E402


class Harness:
    """A session on faux, its recorded requests (the model messages each call received) and events."""

    def __init__(self, steps: list[dict[str, Any]], cwd: Path) -> None:
        scripted = FauxModel(steps, record=lambda context: list(context["messages"]))
        self.requests: list[list[dict[str, Any]]] = scripted.requests
        self.events: list[dict[str, Any]] = []
        self.manager = SessionManager.in_memory(str(cwd))
        self.session = session_module.AgentSession(
            self.manager,
            Settings.in_memory(),
            scripted.registry,
            scripted.model,
            cwd=str(cwd),
            stream_fn=scripted.stream,
        )
        self.session.subscribe(self.events.append)
        self.runner = ExtensionRunner(cwd=str(cwd), mode="json")

    async def load(self, *factories: Any) -> None:
        for index, factory in enumerate(factories):
            await load_factory(self.runner, factory, path=f"ext{index + 1}.py")
        self.runner.bind(self.session)

    def entries(self) -> list[tuple[str, str | None]]:
        return [
            (entry["type"], entry.get("message", {}).get("role") or entry.get("customType"))
            for entry in self.manager.get_entries()
        ]

    def roles(self, request: int) -> list[str]:
        return [message["role"] for message in self.requests[request]]


def test_turn_end_continues_with_a_hidden_custom_message(tmp_path):
    """pi's scenario c: a turn_end handler appends a hidden custom_message and asks for one more request."""
    harness = Harness([{"text": "first answer"}, {"text": "second answer"}], tmp_path)
    rounds = []

    def loop(tau):
        def on_turn_end(event, ctx):
            rounds.append((event.outcome, event.message["stopReason"], event.context["canContinue"]))
            if len(rounds) == 1:
                draft = {
                    "type": "custom_message",
                    "customType": "todo-loop:continue",
                    "content": "Continue working.",
                    "display": False,
                }
                return {"entries": [draft], "continue": True}
            return None

        tau.on("turn_end", on_turn_end)

    async def scenario() -> None:
        await harness.load(loop)
        await harness.session.prompt("start")

    asyncio.run(scenario())
    assert harness.entries()[-4:] == [
        ("message", "user"),
        ("message", "assistant"),
        ("custom_message", "todo-loop:continue"),
        ("message", "assistant"),
    ]
    hidden = harness.manager.get_entries()[-2]
    assert hidden["display"] is False and hidden["content"] == "Continue working."
    assert len(harness.requests) == 2
    assert harness.requests[1][-1]["role"] == "user"
    assert rounds == [("completed", "stop", False), ("completed", "stop", False)]
    assert "entry_appended" in [event["type"] for event in harness.events]


def test_the_model_calls_an_extension_tool_and_tool_result_handlers_patch_it(tmp_path):
    harness = Harness([{"tool": "greet", "args": {"name": "Ada"}}, {"text": "done"}], tmp_path)
    seen: list[Any] = []

    async def execute(call_id, params, signal, on_update, ctx):
        seen.append(isinstance(ctx, ExtensionToolContext) and ctx.cwd == str(tmp_path))
        return ToolResult.text(f"hello {params['name']}", details={"greeted": params["name"]})

    greet = ToolDefinition(
        name="greet",
        description="Greet someone.",
        parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        execute=execute,
        prompt_snippet="say hello to people",
        prompt_guidelines=["Greet people politely."],
    )

    def tools(tau):
        tau.register_tool(greet)

    def audit(tau):
        tau.on("tool_result", lambda event, ctx: {"details": {**event.details, "audited": True}})

    async def scenario() -> None:
        await harness.load(tools, audit)
        assert "greet" in harness.session.get_active_tool_names()
        prompt = harness.session.get_system_prompt()
        assert "say hello to people" in prompt and "Greet people politely." in prompt
        await harness.session.prompt("say hi to Ada")

    asyncio.run(scenario())
    result = next(
        e["message"]
        for e in harness.manager.get_entries()
        if e.get("message", {}).get("role") == "toolResult"
    )
    assert result["content"] == [{"type": "text", "text": "hello Ada"}]
    assert result["details"] == {"greeted": "Ada", "audited": True}
    assert seen == [True]
    assert "greet" in [tool["name"] for tool in harness.requests[0][0].get("toolsAdded", [])]


def test_a_tool_calls_another_tool_through_ctx_execute_tool(tmp_path):
    harness = Harness([{"tool": "outer", "args": {}}, {"text": "done"}], tmp_path)
    calls: list[tuple[str, str, str | None]] = []

    async def outer(call_id, params, signal, on_update, ctx):
        outcome = await ctx.execute_tool("inner", {"value": 2})
        return ToolResult.text(f"inner said {outcome['result']['content'][0]['text']}")

    async def inner(call_id, params, signal, on_update, ctx):
        return ToolResult.text(str(params["value"] * 21))

    schema = {"type": "object", "properties": {"value": {"type": "number"}}}

    def ext(tau):
        tau.register_tool(
            ToolDefinition(name="outer", description="o", parameters={"type": "object"}, execute=outer)
        )
        tau.register_tool(ToolDefinition(name="inner", description="i", parameters=schema, execute=inner))
        tau.on("tool_call", lambda e, c: calls.append((e.tool_name, e.tool_call_id, e.parent_tool_call_id)))

    async def scenario() -> None:
        await harness.load(ext)
        await harness.session.prompt("go")

    asyncio.run(scenario())
    (outer_name, outer_id, outer_parent), (inner_name, inner_id, inner_parent) = calls
    assert (outer_name, outer_parent) == ("outer", None)
    assert (inner_name, inner_id, inner_parent) == ("inner", f"{outer_id}/1", outer_id)
    starts = [e for e in harness.events if e["type"] == "tool_execution_start"]
    assert [(e["toolName"], e.get("parentToolCallId")) for e in starts] == [
        ("outer", None),
        ("inner", outer_id),
    ]
    result = next(
        e["message"]
        for e in harness.manager.get_entries()
        if e.get("message", {}).get("role") == "toolResult"
    )
    assert result["content"][0]["text"] == "inner said 42"
    assert [m.get("toolCallId") for m in harness.requests[1] if m["role"] == "toolResult"] == [outer_id]


def two_runs_with_a_tool_change(harness: Harness) -> None:
    async def scenario() -> None:
        await harness.session.prompt("one")
        harness.session.set_active_tools(["read"])  # a mid-conversation system patch before run two
        await harness.session.prompt("two")

    asyncio.run(scenario())


def test_a_context_handler_editing_in_place_keeps_the_request_head(tmp_path):
    harness = Harness([{"text": "a"}, {"text": "b"}], tmp_path)

    def shout(tau):
        def handler(event, ctx):
            for message in event.messages:
                if message["role"] == "user":
                    message["content"] = [{"type": "text", "text": "SHOUTED"}]

        tau.on("context", handler)

    asyncio.run(harness.load(shout))
    two_runs_with_a_tool_change(harness)
    assert harness.roles(1) == ["system", "user", "assistant", "system", "user"]
    assert harness.requests[1][-1]["content"] == [{"type": "text", "text": "SHOUTED"}]
    stored = [
        e["message"] for e in harness.manager.get_entries() if e.get("message", {}).get("role") == "user"
    ]
    assert stored[-1]["content"] != [
        {"type": "text", "text": "SHOUTED"}
    ]  # the session file keeps what was said


def test_a_context_handler_returning_a_new_list_rebuilds_the_request_head(tmp_path):
    harness = Harness([{"text": "a"}, {"text": "b"}], tmp_path)

    def snapshot(tau):
        note = {"role": "custom", "customType": "snap", "content": "state", "display": False, "timestamp": 1}
        tau.on("context", lambda event, ctx: {"messages": [*event.messages, note]})

    asyncio.run(harness.load(snapshot))
    two_runs_with_a_tool_change(harness)
    assert harness.roles(1) == ["system", "user", "assistant", "user", "user"]
    assert [tool["name"] for tool in harness.requests[1][0]["toolsAdded"]] == ["read"]


def test_a_failing_handler_reaches_the_session_listeners_and_the_run_goes_on(tmp_path):
    harness = Harness([{"text": "fine"}], tmp_path)

    def broken(tau):
        def handler(event, ctx):
            raise RuntimeError("handler bug")

        tau.on("turn_start", handler)

    async def scenario() -> None:
        await harness.load(broken)
        await harness.session.prompt("hi")

    asyncio.run(scenario())
    errors = [e for e in harness.events if e["type"] == "extension_error"]
    assert errors == [
        {"type": "extension_error", "extensionPath": "ext1.py", "event": "turn_start", "error": "handler bug"}
    ]
    assert harness.entries()[-1] == ("message", "assistant")


def test_a_command_runs_instead_of_a_prompt(tmp_path):
    harness = Harness([], tmp_path)  # any model call would fail: none is made
    ran = []

    async def handler(args, ctx):
        ran.append((args, ctx.is_idle()))
        ctx.ui.notify("ignored in JSON mode")

    async def scenario() -> None:
        await harness.load(lambda tau: tau.register_command("note", "take a note", handler))
        await harness.session.prompt("/note buy milk")

    asyncio.run(scenario())
    assert ran == [("buy milk", True)]
    assert harness.requests == []


def test_load_extensions_binds_a_cli_extension_to_the_session(tmp_path):
    path = tmp_path / "hello.py"
    path.write_text(
        "from tau.extension import ToolDefinition, ToolResult\n"
        "async def run(call_id, params, signal, on_update, ctx):\n"
        "    return ToolResult.text('hi')\n"
        "def extension(tau):\n"
        "    tau.register_tool(ToolDefinition(name='hello', description='h', parameters={'type': 'object'}, execute=run))\n",
        encoding="utf-8",
    )
    harness = Harness([], tmp_path)

    async def scenario() -> ExtensionRunner:
        return await load_extensions(
            harness.session, cli_paths=[path], cwd=tmp_path, no_extensions=True, mode="json"
        )

    runner = asyncio.run(scenario())
    assert harness.session.hooks is runner
    assert "hello" in harness.session.get_active_tool_names()


def test_a_command_moves_the_session_in_its_tree(tmp_path):
    harness = Harness([{"text": "a"}, {"text": "b"}], tmp_path)
    answers: list[dict[str, Any]] = []

    async def back(args, ctx):
        first_user = next(
            e for e in ctx.session_manager.get_branch() if e.get("message", {}).get("role") == "user"
        )
        answers.append(await ctx.navigate_tree(first_user["id"]))

    async def scenario() -> None:
        await harness.load(lambda tau: tau.register_command("back", "go back to the first prompt", back))
        await harness.session.prompt("one")
        await harness.session.prompt("two")
        await harness.session.prompt("/back")

    asyncio.run(scenario())
    assert answers[0]["cancelled"] is False and answers[0].get("editorText") == "one"
    assert [e.get("message", {}).get("role") for e in harness.manager.get_branch()] == [None, None, "system"]


def test_tool_call_handlers_rewrite_arguments_and_block_calls(tmp_path):
    harness = Harness(
        [
            {"tool": "greet", "args": {"name": "ada"}},
            {"tool": "greet", "args": {"name": "root"}},
            {"text": "ok"},
        ],
        tmp_path,
    )

    async def execute(call_id, params, signal, on_update, ctx):
        return ToolResult.text(f"hello {params['name']}")

    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def tools(tau):
        tau.register_tool(ToolDefinition(name="greet", description="g", parameters=schema, execute=execute))

    def capitalize(tau):
        def handler(event, ctx):
            event.input["name"] = event.input["name"].capitalize()

        tau.on("tool_call", handler)

    def guard(tau):
        def handler(event, ctx):
            if event.input["name"] == "Root":
                raise PermissionError("greeting root is not allowed")

        tau.on("tool_call", handler)

    async def scenario() -> None:
        await harness.load(tools, capitalize, guard)
        await harness.session.prompt("greet")

    asyncio.run(scenario())
    results = [
        e["message"]
        for e in harness.manager.get_entries()
        if e.get("message", {}).get("role") == "toolResult"
    ]
    assert [(r["content"][0]["text"], r["isError"]) for r in results] == [
        ("hello Ada", False),
        ("greeting root is not allowed", True),
    ]


def test_a_message_sent_from_agent_settled_starts_the_next_run_after_the_handlers(tmp_path):
    """OCC's continuation source: send_message(trigger_turn=True) from agent_settled."""
    harness = Harness([{"text": "a"}, {"text": "b"}], tmp_path)
    order: list[str] = []

    def first(tau):
        def handler(event, ctx):
            order.append("settled")
            if order.count("settled") == 1:
                tau.send_message(
                    {"customType": "occ", "content": "resume", "display": False}, trigger_turn=True
                )
                order.append("sent")

        tau.on("agent_settled", handler)

    def second(tau):
        tau.on("agent_settled", lambda e, c: order.append("second handler"))
        tau.on("agent_start", lambda e, c: order.append("run"))

    async def scenario() -> None:
        await harness.load(first, second)
        await harness.session.prompt("go")
        await harness.session.wait_for_idle()
        for _ in range(3000):  # up to 30 s: a loaded machine may take a while for the second run
            if len(harness.requests) == 2 and harness.session.is_idle():
                break
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert order[:4] == ["run", "settled", "sent", "second handler"]
    assert order[4] == "run"
    assert harness.entries()[-2:] == [("custom_message", "occ"), ("message", "assistant")]
