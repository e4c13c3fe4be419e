"""AgentSession: persistence, the system prompt in the transcript, queues, custom messages, abort."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from session_support import Harness

from tau.agent.session import AgentSession
from tau.modes.inspect import main as inspect_main
from tau.session.manager import SessionManager
from waiting import Gate


def run(coro):
    return asyncio.run(coro)


def test_prompt_persists_every_message_in_pi_order(tmp_path):
    h = Harness(tmp_path, [{"bash": "echo hi"}, {"text": "done"}])
    run(h.session.prompt("run it"))
    assert h.entry_types() == [
        "model_change",
        "thinking_level_change",
        "message:system",
        "message:user",
        "message:assistant",
        "message:toolResult",
        "message:assistant",
    ]
    system = h.manager.get_entries()[2]["message"]
    assert list(system) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert [tool["name"] for tool in system["toolsAdded"]] == ["read", "bash", "edit", "write"]
    assert h.types()[-3:] == ["turn_end", "agent_end", "agent_settled"]
    assert h.events[-1] == {"type": "agent_settled", "aborted": False}
    # The file re-opens to the same context.
    reopened = SessionManager.open(h.manager.get_session_file(), read_only=True)
    assert reopened.build_session_context()["messages"] == h.session.messages


def test_system_message_is_written_once_then_only_on_change(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    run(h.session.prompt("a"))
    run(h.session.prompt("b"))
    assert h.entry_types().count("message:system") == 1
    h.session.set_active_tools(["read", "bash"])
    run(h.session.prompt("c"))
    systems = [e["message"] for e in h.manager.get_entries() if e.get("message", {}).get("role") == "system"]
    assert len(systems) == 2
    assert set(systems[1]["sections"]) == {"tools", "rules"}
    assert [tool["name"] for tool in systems[1]["toolsRemoved"]] == ["edit", "write"]


def test_resumed_session_restores_its_tool_loadout(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}])
    h.session.set_active_tools(["read"])
    run(h.session.prompt("a"))
    path = h.manager.get_session_file()
    h.manager.close()
    resumed = Harness(tmp_path, [{"text": "two"}], manager=SessionManager.open(path))
    assert resumed.session.get_active_tool_names() == ["read"]
    run(resumed.session.prompt("b"))
    assert resumed.entry_types().count("message:system") == 1  # nothing changed: no new patch


def test_no_model_refuses_with_a_clear_message(tmp_path):
    manager = SessionManager.in_memory(tmp_path)
    session = AgentSession(manager, cwd=tmp_path)
    with pytest.raises(RuntimeError, match="--model faux/faux-1 --faux-script FILE"):
        run(session.prompt("hello"))


def test_custom_message_idle_without_trigger_is_appended_without_a_turn(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}])
    run(h.session.prompt("a"))
    h.events.clear()
    run(h.session.send_custom_message({"customType": "note", "content": "fyi", "display": True}))
    assert h.types() == ["message_start", "message_end"]
    assert h.entry_types()[-1] == "custom_message"
    assert h.roles()[-1] == "custom"


def test_custom_message_with_trigger_starts_a_run(tmp_path):
    h = Harness(tmp_path, [{"text": "seen"}])
    run(
        h.session.send_custom_message(
            {"customType": "ping", "content": "go", "display": False}, trigger_turn=True
        )
    )
    assert h.entry_types()[-3:] == ["message:system", "custom_message", "message:assistant"]
    assert h.provider.requests[0]["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "go"}],
    } or (h.provider.requests[0]["messages"][-1]["role"] == "user")


def test_next_turn_custom_message_rides_with_the_next_prompt(tmp_path):
    h = Harness(tmp_path, [{"text": "ok"}])
    run(h.session.send_custom_message({"customType": "aside", "content": "context"}, deliver_as="nextTurn"))
    assert h.entry_types()[-1] == "thinking_level_change"
    run(h.session.prompt("question"))
    assert h.entry_types()[-4:] == ["message:system", "message:user", "custom_message", "message:assistant"]


def test_custom_message_while_streaming_without_trigger_waits_for_turn_end(tmp_path):
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command("echo x")}, {"text": "done"}])

    async def scenario():
        task = asyncio.create_task(h.session.prompt("go"))
        while not any(e["type"] == "tool_execution_start" for e in h.events):
            await asyncio.sleep(0.01)
        await h.session.send_custom_message({"customType": "late", "content": "later"}, trigger_turn=False)
        gate.open()
        await task

    run(scenario())
    kinds = h.entry_types()
    # never between the tool call and its result
    assert kinds[kinds.index("message:toolResult") + 1] == "custom_message"


def test_steer_and_follow_up_emit_queue_updates(tmp_path):
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command()}, {"text": "after steer"}, {"text": "after follow-up"}])

    async def scenario():
        task = asyncio.create_task(h.session.prompt("go"))
        while not any(e["type"] == "tool_execution_start" for e in h.events):
            await asyncio.sleep(0.01)
        assert await h.session.steer("turn left") == "queued"
        assert await h.session.follow_up("and then stop") == "queued"
        with pytest.raises(RuntimeError, match="Specify streamingBehavior"):
            await h.session.prompt("plain")
        gate.open()
        await task

    run(scenario())
    updates = [e for e in h.events if e["type"] == "queue_update"]
    assert updates[0] == {"type": "queue_update", "steering": ["turn left"], "followUp": []}
    assert updates[1] == {"type": "queue_update", "steering": ["turn left"], "followUp": ["and then stop"]}
    assert updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    users = [m for m in h.session.messages if m["role"] == "user"]
    assert [m["content"][0]["text"] for m in users] == ["go", "turn left", "and then stop"]


def test_abort_during_bash_leaves_a_clean_session(tmp_path):
    h = Harness(tmp_path, [{"bash": "sleep 20"}, {"text": "never"}])

    async def scenario():
        task = asyncio.create_task(h.session.prompt("go"))
        while not any(e["type"] == "tool_execution_start" for e in h.events):
            await asyncio.sleep(0.01)
        await h.session.abort()
        await task

    run(scenario())
    assert h.events[-1] == {"type": "agent_settled", "aborted": True}
    results = [m for m in h.session.messages if m["role"] == "toolResult"]
    assert results and results[0]["isError"] is True
    assert h.session.is_idle()
    assert inspect_main(["check", h.manager.get_session_file()]) == 0
    last = h.session.messages[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"


def test_session_name_label_and_custom_entry(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}])
    run(h.session.prompt("a"))
    h.session.set_session_name("My\nsession ")
    assert h.session.get_session_name() == "My session"
    assert h.events[-1] == {"type": "session_info_changed", "name": "My session"}
    user_id = next(e["id"] for e in h.manager.get_entries() if e.get("message", {}).get("role") == "user")
    h.session.set_label(user_id, "start")
    assert h.manager.get_label(user_id) == "start"
    h.session.append_custom_entry("state", {"n": 1})
    assert h.entry_types()[-3:] == ["session_info", "label", "custom"]
    assert [json.loads(line)["type"] for line in h.file_lines()][-1] == "custom"


def test_thinking_level_and_model_changes_are_recorded(tmp_path):
    h = Harness(tmp_path, [{"text": "x"}])
    assert h.session.get_thinking_level() == "off"  # faux-1 does not reason
    h.session.set_thinking_level("high")
    assert h.session.get_thinking_level() == "off"
    run(h.session.set_model(h.registry.find("faux", "faux-1")))
    assert h.entry_types()[-1] in ("model_change", "thinking_level_change")


@pytest.mark.parametrize(
    ("settings", "after"),
    [
        ({}, "high"),  # unset: the current level is kept (issue 22; pi's golden: set-model-keeps-level)
        ({"defaultThinkingLevel": "low"}, "low"),
        ({"defaultThinkingLevel": "low", "modelThinkingLevels": {"faux/faux-1": "minimal"}}, "minimal"),
    ],
)
def test_set_model_level_is_the_models_then_a_set_default_then_the_current(tmp_path, settings, after):
    h = Harness(tmp_path, [], settings=settings, model_overrides={"reasoning": True}, thinking_level="high")
    model = h.session.model
    run(h.session.set_model(model))
    assert h.session.get_thinking_level() == after
    changes = [e["level"] for e in h.events if e["type"] == "thinking_level_changed"]
    assert changes == ([] if after == "high" else [after])


def test_register_tool_replaces_a_builtin_and_is_declared(tmp_path):
    from tau.tools.base import ToolDefinition, ToolResult

    async def execute(call_id, params, signal, on_update, ctx) -> ToolResult:
        return ToolResult.text("custom read")

    h = Harness(tmp_path, [{"tool": "read", "args": {"path": "x"}}, {"text": "ok"}])
    h.session.register_tool(
        ToolDefinition(
            name="read", description="mine", parameters={"type": "object", "properties": {}}, execute=execute
        )
    )
    h.session.register_tool(
        ToolDefinition(
            name="extra", description="new", parameters={"type": "object", "properties": {}}, execute=execute
        )
    )
    assert h.session.get_active_tool_names() == ["read", "bash", "edit", "write", "extra"]
    run(h.session.prompt("go"))
    result = next(m for m in h.session.messages if m["role"] == "toolResult")
    assert result["content"] == [{"type": "text", "text": "custom read"}]
    system = next(m for m in h.session.messages if m["role"] == "system")
    assert {t["name"]: t["description"] for t in system["toolsAdded"]}["read"] == "mine"


def test_execute_tool_runs_a_nested_call_with_parent_id(tmp_path):
    h = Harness(tmp_path, [{"text": "ok"}])
    run(h.session.prompt("go"))
    h.events.clear()

    async def nested() -> dict[str, Any]:
        return await h.session.execute_tool("call_9", "bash", {"command": "echo nested"})

    answer = run(nested())
    assert answer["toolCall"]["id"] == "call_9/1"
    assert answer["isError"] is False
    assert answer["result"]["content"] == [{"type": "text", "text": "nested\n"}]
    ends = [e for e in h.events if e["type"] == "tool_execution_end"]
    assert ends[0]["parentToolCallId"] == "call_9"
    assert "toolResult" not in h.roles()[-1:]


def test_nested_calls_are_recorded_on_the_calling_tools_result(tmp_path):
    from tau.tools.base import ToolDefinition, ToolResult

    holder: dict[str, Any] = {}

    async def execute(call_id, params, signal, on_update, ctx) -> ToolResult:
        first = await holder["session"].execute_tool(call_id, "bash", {"command": "echo one"})
        second = await holder["session"].execute_tool(call_id, "nope", {})
        return ToolResult.text(first["result"]["content"][0]["text"] + str(second["isError"]))

    h = Harness(tmp_path, [{"tool": "combo", "args": {}}, {"text": "done"}])
    holder["session"] = h.session
    h.session.register_tool(
        ToolDefinition(
            name="combo",
            description="calls bash",
            parameters={"type": "object", "properties": {}},
            execute=execute,
        )
    )
    run(h.session.prompt("go"))
    result = next(m for m in h.session.messages if m["role"] == "toolResult")
    call_id = result["toolCallId"]
    assert result["content"] == [{"type": "text", "text": "one\nTrue"}]
    nested = result["nestedCalls"]
    assert nested["complete"] is True
    assert [(c["id"], c["name"], c["status"]) for c in nested["calls"]] == [
        (f"{call_id}/1", "bash", "ok"),
        (f"{call_id}/2", "nope", "error"),
    ]
    assert nested["calls"][1]["error"] == "Tool nope not found"
    starts = [
        e for e in h.events if e["type"] == "tool_execution_start" and e.get("parentToolCallId") == call_id
    ]
    assert [e["toolCallId"] for e in starts] == [f"{call_id}/1", f"{call_id}/2"]
    persisted = json.loads(h.file_lines()[-2])["message"]
    assert persisted["nestedCalls"] == nested


def test_custom_message_while_streaming_is_steered_by_default(tmp_path):
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command()}, {"text": "saw it"}])

    async def scenario():
        task = asyncio.create_task(h.session.prompt("go"))
        while not any(e["type"] == "tool_execution_start" for e in h.events):
            await asyncio.sleep(0.01)
        await h.session.send_custom_message({"customType": "hint", "content": "look here"})
        gate.open()
        await task

    run(scenario())
    kinds = h.entry_types()
    assert kinds[-3:] == ["message:toolResult", "custom_message", "message:assistant"]
    assert h.provider.requests[1]["messages"][-1]["content"] == [{"type": "text", "text": "look here"}]


def test_last_assistant_text_skips_replies_without_text_that_did_not_stop(tmp_path):
    h = Harness(tmp_path, [{"text": " answer "}, {"bash": "true"}, {"error": "boom"}])
    run(h.session.prompt("a"))
    assert h.session.get_last_assistant_text() == "answer"
    run(h.session.prompt("b"))  # a tool call, then a failed reply: neither has text
    assert h.session.get_last_assistant_text() == "answer"


def test_resume_keeps_a_removed_extension_tool_inactive_and_restores_an_active_one(tmp_path):
    from tau.tools.base import ToolDefinition, ToolResult

    async def execute(call_id, params, signal, on_update, ctx) -> ToolResult:
        return ToolResult.text("x")

    def tool(name: str) -> ToolDefinition:
        return ToolDefinition(
            name=name, description=name, parameters={"type": "object", "properties": {}}, execute=execute
        )

    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}])
    h.session.register_tool(tool("kept"))
    h.session.register_tool(tool("dropped"))
    run(h.session.prompt("a"))
    h.session.set_active_tools(["read", "kept"])
    run(h.session.prompt("b"))
    path = h.manager.get_session_file()
    h.manager.close()
    resumed = Harness(tmp_path, [{"text": "three"}], manager=SessionManager.open(path))
    # the extension layer registers its tools after the session is built
    resumed.session.register_tool(tool("kept"))
    resumed.session.register_tool(tool("dropped"))
    resumed.session.register_tool(tool("brand-new"))
    assert resumed.session.get_active_tool_names() == ["read", "kept", "brand-new"]
