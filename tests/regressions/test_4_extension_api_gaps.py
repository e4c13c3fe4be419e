"""Issue 4 (agent core, extension API): acceptance points the existing tests left unproven.

- ``register_tool`` with ``exposure="inactive"``: the tool is registered (``get_all_tools``) but not
  declared to the model until ``set_active_tools`` names it.
- ``ctx.has_pending_messages()`` on the real session's ctx: true while a steering message waits.
- every public function of ``tau.extension`` that has a pi equivalent is in the pi → tau name table
  of ``docs/extensions.md``.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.extension import ExtensionRunner, ToolDefinition, ToolResult, load_factory
from tau.llm.transcript import current_tools
from tau.session.manager import SessionManager

ROOT = Path(__file__).resolve().parents[2]


class Harness:
    """An in-memory session on faux with the tool names declared to each request."""

    def __init__(self, steps: list[dict[str, Any]], cwd: Path) -> None:
        scripted = FauxModel(
            steps, record=lambda context: sorted(t["name"] for t in current_tools(context["messages"]))
        )
        self.declared: list[list[str]] = scripted.requests
        self.session = AgentSession(
            SessionManager.in_memory(str(cwd)),
            Settings.in_memory(),
            scripted.registry,
            scripted.model,
            cwd=str(cwd),
            stream_fn=scripted.stream,
        )
        self.runner = ExtensionRunner(cwd=str(cwd), mode="json")

    async def load(self, factory: Any) -> None:
        await load_factory(self.runner, factory, path="ext.py")
        self.runner.bind(self.session)


def _tool(name: str, exposure: str) -> ToolDefinition:
    async def execute(tool_call_id, params, signal, on_update, ctx):
        return ToolResult(content=[{"type": "text", "text": f"{name} ran"}])

    return ToolDefinition(
        name=name,
        label=name,
        description=f"the {name} tool",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        exposure=exposure,
    )


def test_an_inactive_tool_is_registered_but_declared_only_once_activated(tmp_path):
    harness = Harness([{"text": "one"}, {"text": "two"}], tmp_path)
    api: list[Any] = []

    def ext(tau):
        api.append(tau)
        tau.register_tool(_tool("shown", "active"))
        tau.register_tool(_tool("hidden", "inactive"))

    async def scenario() -> None:
        await harness.load(ext)
        tau = api[0]
        all_names = [t["name"] for t in tau.get_all_tools()]
        assert "shown" in all_names and "hidden" in all_names
        hidden_info = next(t for t in tau.get_all_tools() if t["name"] == "hidden")
        # pi's ToolInfo: an inactive tool is a "direct" one registered with defaultActive false
        assert hidden_info["exposure"] == "direct"
        assert "hidden" not in tau.get_active_tools()
        await harness.session.prompt("first")
        tau.set_active_tools([*tau.get_active_tools(), "hidden"])
        assert "hidden" in tau.get_active_tools()
        await harness.session.prompt("second")

    asyncio.run(asyncio.wait_for(scenario(), 60))
    first, second = harness.declared
    assert "shown" in first and "hidden" not in first
    assert "shown" in second and "hidden" in second


def test_ctx_has_pending_messages_while_a_steering_message_waits(tmp_path):
    harness = Harness([{"bash": "sleep 0.5"}, {"text": "done"}], tmp_path)
    seen: list[tuple[str, bool, bool]] = []

    def ext(tau):
        async def on_tool_start(event, ctx):
            await harness.session.steer("also this")
            seen.append(("tool_start", ctx.has_pending_messages(), ctx.is_idle()))

        def on_settled(event, ctx):
            seen.append(("settled", ctx.has_pending_messages(), ctx.is_idle()))

        tau.on("tool_execution_start", on_tool_start)
        tau.on("agent_settled", on_settled)

    async def scenario() -> None:
        await harness.load(ext)
        await harness.session.prompt("go")

    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert seen[0] == ("tool_start", True, False)
    assert seen[-1][:2] == ("settled", False)



def test_ctx_has_waiting_input_names_the_next_prompt_and_a_queued_follow_up(tmp_path):
    """Issue 25: ``ctx.has_waiting_input()`` is true while a human message waits to be sent: a
    follow-up queued during the run, or the next prompt the mode announced (``tau -p P1 P2``)."""
    harness = Harness([{"bash": "sleep 0.2"}, {"text": "one"}, {"text": "two"}, {"text": "three"}], tmp_path)
    seen: list[tuple[str, bool, bool]] = []

    def ext(tau):
        async def on_tool_start(event, ctx):
            await harness.session.follow_up("and this")
            seen.append(("follow-up", ctx.has_waiting_input(), ctx.has_pending_messages()))

        def on_turn_end(event, ctx):
            seen.append(("turn_end", ctx.has_waiting_input(), ctx.has_pending_messages()))

        tau.on("tool_execution_start", on_tool_start)
        tau.on("turn_end", on_turn_end)

    async def scenario() -> None:
        await harness.load(ext)
        harness.session.announce_prompts(1)
        await harness.session.prompt("go")
        harness.session.announce_prompts(0)
        await harness.session.prompt("last")

    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert seen[0] == ("follow-up", True, True)
    # "one" ends the run's first part while the follow-up is delivered; "two" answers it while the
    # announced prompt still waits; "three" answers the last prompt: nothing waits
    assert [flags[1] for flags in seen[1:]] == [True, True, True, False]


# pi name -> the public tau.extension function that is its equivalent (checked in pi 1.6's source:
# core/tools/truncate.ts, core/tools/path-utils.ts, core/exec.ts, core/extensions/loader.ts).
PI_EQUIVALENTS = {
    "format_size": "formatSize",
    "truncate_head": "truncateHead",
    "truncate_tail": "truncateTail",
    "expand_path": "expandPath",
    "resolve_to_cwd": "resolveToCwd",
    "exec_command": "execCommand",
    "load_extensions": "loadExtensions",
    "load_factory": "loadExtensionFromFactory",
}


def _name_table() -> str:
    text = (ROOT / "docs" / "extensions.md").read_text(encoding="utf-8")
    start = text.index("## pi names and tau names")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_equivalence_list_covers_the_public_functions():
    import tau.extension as ext

    functions = {n for n in ext.__all__ if inspect.isfunction(getattr(ext, n))}
    assert set(PI_EQUIVALENTS) <= functions


def test_every_public_function_with_a_pi_equivalent_is_in_the_name_table():
    table = _name_table()
    missing = [
        f"{pi} -> {tau}"
        for tau, pi in PI_EQUIVALENTS.items()
        if not (re.search(rf"\b{tau}\b", table) and re.search(rf"\b{pi}\b", table))
    ]
    assert missing == []


def test_a_command_calls_the_model_through_ctx_model_registry_complete(tmp_path):
    """``ctx.model_registry.complete()`` on the session's model, from an extension command."""
    harness = Harness([{"text": "first"}, {"text": "side answer"}], tmp_path)
    got: list[Any] = []

    async def ask(args, ctx):
        usage = ctx.get_context_usage()
        message = await ctx.model_registry.complete(
            ctx.model,
            {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": args, "timestamp": 1}]},
        )
        got.append((usage, message))

    async def scenario() -> None:
        await harness.load(lambda tau: tau.register_command("ask", "ask the model aside", ask))
        await harness.session.prompt("hello")
        await harness.session.prompt("/ask what now?")

    asyncio.run(asyncio.wait_for(scenario(), 60))
    ((usage, message),) = got
    assert message["role"] == "assistant" and message["stopReason"] == "stop"
    assert message["content"] == [{"type": "text", "text": "side answer"}]
    assert usage is not None and usage["contextWindow"] > 0 and (usage["tokens"] or 0) > 0
    assert len(harness.declared) == 1  # the side call is not a turn of the session
    roles = [m["role"] for m in harness.session.messages if m["role"] != "system"]
    assert roles == ["user", "assistant"]
