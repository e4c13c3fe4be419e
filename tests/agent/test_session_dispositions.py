"""What became of a prompt (pi ``preflightResult``) and user bash results (pi ``recordBashResult``)."""

from __future__ import annotations

import asyncio

import pytest
from session_support import Harness, ScriptedHooks

from tau.agent.session import AgentSession
from waiting import Gate, until


def run(coro):
    return asyncio.run(coro)


def _texts(session: AgentSession, role: str) -> list[str]:
    out = []
    for message in session.messages:
        if message["role"] == role:
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0].get("text"))
    return out


# -- prompt dispositions -----------------------------------------------------------------------


def test_started_is_reported_before_agent_start(tmp_path):
    h = Harness(tmp_path, [{"text": "hi"}])
    order: list[str] = []
    h.session.subscribe(lambda event: order.append(event["type"]))
    run(h.session.prompt("hello", preflight_result=lambda d: order.append(f"preflight:{d}")))
    assert order.count("preflight:started") == 1
    assert order.index("preflight:started") < order.index("agent_start")


def test_an_input_handler_that_swallows_the_prompt_reports_handled(tmp_path):
    hooks = ScriptedHooks(input=lambda event: {"action": "handled"})
    h = Harness(tmp_path, [{"text": "never"}], hooks=hooks)
    seen: list[str] = []
    run(h.session.prompt("hello", preflight_result=seen.append))
    assert seen == ["handled"]
    assert "agent_start" not in h.types()


def test_an_extension_command_reports_handled(tmp_path):
    class CommandHooks(ScriptedHooks):
        async def execute_command(self, text):
            return text == "/hello"

    h = Harness(tmp_path, [], hooks=CommandHooks())
    seen: list[str] = []
    run(h.session.prompt("/hello", preflight_result=seen.append))
    assert seen == ["handled"]


def test_a_prompt_while_streaming_reports_queued_or_handled(tmp_path):
    swallow = {"on": False}
    hooks = ScriptedHooks(input=lambda event: {"action": "handled"} if swallow["on"] else None)
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command()}, {"text": "done"}, {"text": "after"}], hooks=hooks)
    seen: list[str] = []

    async def scenario():
        first = asyncio.ensure_future(h.session.prompt("go"))
        await until(lambda: "tool_execution_start" in h.types())
        await h.session.prompt("later", streaming_behavior="followUp", preflight_result=seen.append)
        swallow["on"] = True
        await h.session.prompt("eaten", streaming_behavior="steer", preflight_result=seen.append)
        gate.open()
        await first

    run(scenario())
    assert seen == ["queued", "handled"]
    assert "later" in _texts(h.session, "user") and "eaten" not in _texts(h.session, "user")


def test_a_refused_prompt_reports_nothing(tmp_path):
    h = Harness(tmp_path, [], model_overrides=None)
    h.session.agent.state.model = None
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="No model selected"):
        run(h.session.prompt("hello", preflight_result=seen.append))
    assert seen == []


# -- user bash ---------------------------------------------------------------------------------

RESULT = {"output": "hi\n", "exitCode": 0, "cancelled": False, "truncated": False}


def test_a_bash_result_is_stored_at_once_when_idle(tmp_path):
    h = Harness(tmp_path, [])
    h.session.record_bash_result("echo hi", RESULT, exclude_from_context=True)
    entry = h.session.session_manager.get_entries()[-1]
    message = entry["message"]
    assert list(message) == [
        "role",
        "command",
        "output",
        "exitCode",
        "cancelled",
        "truncated",
        "timestamp",
        "excludeFromContext",
    ]
    assert (message["command"], message["output"], message["excludeFromContext"]) == ("echo hi", "hi\n", True)
    assert h.session.messages[-1]["role"] == "bashExecution"


def test_a_bash_result_during_a_run_waits_for_the_run_to_end(tmp_path):
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command()}, {"text": "done"}])
    stored_at_settle: list[list[str]] = []
    h.session.subscribe(
        lambda event: (
            event["type"] == "agent_settled"
            and stored_at_settle.append(
                [e["message"]["role"] for e in h.manager.get_entries() if e["type"] == "message"]
            )
        )
    )

    async def scenario():
        first = asyncio.ensure_future(h.session.prompt("go"))
        await until(lambda: "tool_execution_start" in h.types())
        h.session.record_bash_result("echo side", {**RESULT, "output": "side\n"})
        assert h.session.has_pending_bash_messages
        gate.open()
        await first

    run(scenario())
    assert not h.session.has_pending_bash_messages
    assert stored_at_settle[0][-4:] == ["assistant", "toolResult", "assistant", "bashExecution"]
    assert h.roles()[-1] == "bashExecution"
