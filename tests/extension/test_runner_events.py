"""Each event's result semantics with two extensions (handler order = load order), on a fake host."""

from __future__ import annotations

import asyncio
from typing import Any

from extension_fakes import FakeHost

from tau.extension import ExtensionRunner, load_factory
from tau.extension.events import EVENT_TYPES, ToolCallEvent, TurnEndEvent, event_from_payload
from tau.llm.stream import DeferredPayload


def make_runner(
    *factories: Any, host: FakeHost | None = None
) -> tuple[ExtensionRunner, list[dict[str, Any]]]:
    runner = ExtensionRunner(cwd="/tmp", mode="json")
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)

    async def load() -> None:
        for index, factory in enumerate(factories):
            await load_factory(runner, factory, path=f"ext{index + 1}.py")

    asyncio.run(load())
    runner.bind(host or FakeHost())
    return runner, errors


def test_payload_becomes_a_dataclass_with_snake_case_attributes_and_pi_shaped_data():
    message = {"role": "toolResult", "toolCallId": "call_1", "content": []}
    event = event_from_payload(
        {
            "type": "turn_end",
            "turnIndex": 2,
            "message": message,
            "toolResults": [message],
            "messageEntryId": "ab12cd34",
        }
    )
    assert isinstance(event, TurnEndEvent)
    assert (event.turn_index, event.message_entry_id) == (2, "ab12cd34")
    assert event.tool_results[0]["toolCallId"] == "call_1"
    unknown = event_from_payload({"type": "something_new", "x": 1})
    assert unknown.type == "something_new" and unknown.raw == {"type": "something_new", "x": 1}


def test_every_pi_event_has_a_dataclass():
    pi_events = [
        "project_trust",
        "resources_discover",
        "mcp_servers_change",
        "session_start",
        "session_shutdown",
        "session_info_changed",
        "session_before_switch",
        "session_before_fork",
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_before_tree",
        "session_tree",
        "input",
        "before_agent_start",
        "agent_start",
        "agent_end",
        "agent_before_settle",
        "agent_settled",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "tool_call",
        "tool_result",
        "context",
        "context_with_system",
        "before_provider_headers",
        "before_provider_request",
        "after_provider_response",
        "provider_stream_event",
        "cache_warming_decision",
        "model_select",
        "thinking_level_select",
        "user_bash",
        "ui_prompt_start",
        "ui_prompt_end",
    ]
    assert sorted(pi_events) == sorted(EVENT_TYPES)


def test_handlers_run_in_load_order_then_registration_order_sync_or_async():
    seen = []

    def first(tau):
        tau.on("agent_start", lambda event, ctx: seen.append("1a"))

        async def later(event, ctx):
            seen.append("1b")

        tau.on("agent_start", later)

    def second(tau):
        tau.on("agent_start", lambda event, ctx: seen.append("2"))

    runner, _ = make_runner(first, second)
    assert asyncio.run(runner.emit({"type": "agent_start"})) is None
    assert seen == ["1a", "1b", "2"]


def test_unsubscribe_removes_the_handler():
    seen = []

    def ext(tau):
        off = tau.on("agent_start", lambda event, ctx: seen.append("x"))
        off()

    runner, _ = make_runner(ext)
    asyncio.run(runner.emit({"type": "agent_start"}))
    assert seen == [] and not runner.has_handlers("agent_start")


def test_a_raising_handler_is_reported_and_the_others_still_run():
    seen = []

    def broken(tau):
        def fail(event, ctx):
            raise ValueError("boom")

        tau.on("turn_start", fail)

    def fine(tau):
        tau.on("turn_start", lambda event, ctx: seen.append(event.turn_index))

    host = FakeHost()
    runner, errors = make_runner(broken, fine, host=host)
    asyncio.run(runner.emit({"type": "turn_start", "turnIndex": 3, "timestamp": 1}))
    expected = {"type": "extension_error", "extensionPath": "ext1.py", "event": "turn_start", "error": "boom"}
    assert errors == [expected]
    assert host.events == [expected]  # the session's listeners see it too
    assert seen == [3]


def test_session_before_cancel_short_circuits_and_last_result_wins():
    seen = []

    def ext1(tau):
        tau.on("session_before_fork", lambda e, c: {"skipConversationRestore": True})

    def ext2(tau):
        tau.on(
            "session_before_fork", lambda e, c: seen.append(e.entry_id) or {"skipConversationRestore": False}
        )

    runner, _ = make_runner(ext1, ext2)
    event = {"type": "session_before_fork", "entryId": "e1", "position": "before"}
    assert asyncio.run(runner.emit(event)) == {"skipConversationRestore": False}
    assert seen == ["e1"]

    def cancel(tau):
        tau.on("session_before_switch", lambda e, c: {"cancel": True})

    def never(tau):
        tau.on("session_before_switch", lambda e, c: seen.append("never"))

    runner, _ = make_runner(cancel, never)
    assert asyncio.run(runner.emit({"type": "session_before_switch", "reason": "new"})) == {"cancel": True}
    assert "never" not in seen


def test_input_transforms_chain_and_handled_stops():
    def upper(tau):
        tau.on("input", lambda e, c: {"action": "transform", "text": e.text.upper()})

    def exclaim(tau):
        tau.on("input", lambda e, c: {"action": "transform", "text": e.text + "!"})

    runner, _ = make_runner(upper, exclaim)
    result = asyncio.run(runner.emit_input({"type": "input", "text": "hi", "source": "rpc"}))
    assert result == {"action": "transform", "text": "HI!", "images": None}

    def handled(tau):
        tau.on("input", lambda e, c: {"action": "handled"})

    runner, _ = make_runner(handled, exclaim)
    assert asyncio.run(runner.emit_input({"type": "input", "text": "hi", "source": "rpc"})) == {
        "action": "handled"
    }
    runner, _ = make_runner()
    assert asyncio.run(runner.emit_input({"type": "input", "text": "hi", "source": "rpc"})) == {
        "action": "continue"
    }


def test_before_agent_start_collects_messages_and_later_handlers_see_the_prompt_override():
    seen = []

    def ext1(tau):
        tau.on(
            "before_agent_start",
            lambda e, c: {"message": {"customType": "a", "content": "A", "display": False}},
        )
        tau.on("before_agent_start", lambda e, c: {"systemPrompt": e.system_prompt + " (forced)"})

    def ext2(tau):
        def check(event, ctx):
            seen.append((event.prompt, event.system_prompt))
            return {"message": {"customType": "b", "content": "B", "display": True}}

        tau.on("before_agent_start", check)

    runner, _ = make_runner(ext1, ext2)
    event = {"type": "before_agent_start", "messageType": "user", "prompt": "go", "systemPrompt": "base"}
    result = asyncio.run(runner.emit_before_agent_start(event))
    assert [m["customType"] for m in result["messages"]] == ["a", "b"]
    assert result["systemPrompt"] == "base (forced)"
    assert seen == [("go", "base (forced)")]


SYSTEM = {"role": "system", "content": "prompt", "timestamp": 1}
PATCH = {"role": "system", "content": "", "sections": {"x": "y"}, "timestamp": 5}


def conversation() -> list[dict[str, Any]]:
    return [
        SYSTEM,
        {"role": "user", "content": "one", "timestamp": 2},
        PATCH,
        {"role": "assistant", "content": [{"type": "text", "text": "two"}], "timestamp": 3},
    ]


def test_context_edit_in_place_keeps_system_messages_where_they_were():
    def redact(tau):
        def handler(event, ctx):
            assert all(m["role"] != "system" for m in event.messages)
            event.messages[0]["content"] = "ONE"

        tau.on("context", handler)

    runner, _ = make_runner(redact)
    given = conversation()
    result = asyncio.run(runner.emit_context(given))
    assert [m["role"] for m in result] == ["system", "user", "system", "assistant"]
    assert result[1]["content"] == "ONE"
    assert given[1]["content"] == "one"  # the transcript itself is untouched
    assert runner.context_head_rebuilt is False


def test_context_new_list_rebuilds_the_head_and_chains_in_load_order():
    order = []

    def append(tau):
        def handler(event, ctx):
            order.append(len(event.messages))
            return {"messages": [*event.messages, {"role": "custom", "customType": "snap", "content": "s"}]}

        tau.on("context", handler)

    def drop_first(tau):
        def handler(event, ctx):
            order.append(len(event.messages))
            return {"messages": event.messages[1:]}

        tau.on("context", handler)

    runner, _ = make_runner(append, drop_first)
    result = asyncio.run(runner.emit_context(conversation()))
    assert order == [2, 3]
    assert [m["role"] for m in result] == ["system", "assistant", "custom"]
    assert result[0]["content"] == "prompt" and result[0]["sections"] == {"x": "y"}
    assert runner.context_head_rebuilt is True


def test_context_without_handlers_returns_the_same_list():
    runner, _ = make_runner()
    given = conversation()
    assert asyncio.run(runner.emit_context(given)) is given


def test_context_with_system_sees_everything_and_dropping_the_head_is_reported():
    def strip(tau):
        tau.on(
            "context_with_system", lambda e, c: {"messages": [m for m in e.messages if m["role"] != "system"]}
        )

    runner, errors = make_runner(strip)
    result = asyncio.run(runner.emit_context(conversation()))
    assert [m["role"] for m in result] == ["user", "assistant"]
    assert errors[0]["event"] == "context_with_system"
    assert "leading system message" in errors[0]["error"]


def test_before_provider_request_chains_replacements():
    def add(tau):
        tau.on("before_provider_request", lambda e, c: {**e.payload, "a": 1})

    def nothing(tau):
        tau.on("before_provider_request", lambda e, c: None)

    def add_b(tau):
        tau.on("before_provider_request", lambda e, c: {**e.payload, "b": e.payload["a"] + 1})

    runner, _ = make_runner(add, nothing, add_b)
    assert asyncio.run(runner.emit_before_provider_request({"model": "m"})) == {"model": "m", "a": 1, "b": 2}


def test_a_deferred_payload_is_made_once_and_only_for_a_handler_that_reads_it():
    made = []

    def make():
        made.append(1)
        return {"model": "m", "messages": []}

    counted = []

    def counts(tau):
        tau.on("before_provider_request", lambda e, c: counted.append(e.type))

    def reads(tau):
        tau.on("before_provider_request", lambda e, c: {**e.payload, "seen": e.raw["payload"] is e.payload})

    runner, _ = make_runner(counts)
    deferred = DeferredPayload(make)
    assert asyncio.run(runner.emit_before_provider_request(deferred)) is deferred
    assert counted == ["before_provider_request"] and made == []

    runner, _ = make_runner(counts, reads, counts)
    answer = asyncio.run(runner.emit_before_provider_request(DeferredPayload(make)))
    assert answer == {"model": "m", "messages": [], "seen": True}
    assert made == [1]


def test_tool_call_first_block_wins_input_is_mutable_and_a_raise_blocks():
    seen = []

    def patch(tau):
        def handler(event: ToolCallEvent, ctx):
            event.input["command"] = "ls -la"

        tau.on("tool_call", handler)

    def block(tau):
        tau.on("tool_call", lambda e, c: {"block": True, "reason": f"no {e.input['command']}"})

    def after(tau):
        tau.on("tool_call", lambda e, c: seen.append("ran"))

    runner, _ = make_runner(patch, block, after)
    args = {"command": "ls"}
    event = {"type": "tool_call", "toolName": "bash", "toolCallId": "call_1", "input": args}
    assert asyncio.run(runner.emit_tool_call(event)) == {"block": True, "reason": "no ls -la"}
    assert args == {"command": "ls -la"} and seen == []

    def raises(tau):
        def handler(event, ctx):
            raise PermissionError("not allowed here")

        tau.on("tool_call", handler)

    runner, errors = make_runner(raises, after)
    assert errors == []  # pi does not report a blocking tool_call failure, it becomes the result
    assert asyncio.run(runner.emit_tool_call(event)) == {"block": True, "reason": "not allowed here"}
    assert seen == []
    runner, _ = make_runner(after)
    assert asyncio.run(runner.emit_tool_call(event)) is None


def test_tool_result_patches_chain_and_new_content_drops_structured_content():
    seen = []

    def replace(tau):
        tau.on("tool_result", lambda e, c: {"content": [{"type": "text", "text": "short"}]})

    def mark(tau):
        def handler(event, ctx):
            seen.append((event.content[0]["text"], event.structured_content, event.parent_tool_call_id))
            return {"isError": True}

        tau.on("tool_result", handler)

    runner, _ = make_runner(replace, mark)
    event = {
        "type": "tool_result",
        "toolName": "bash",
        "toolCallId": "call_1/1",
        "parentToolCallId": "call_1",
        "input": {},
        "content": [{"type": "text", "text": "long"}],
        "details": {"d": 1},
        "structuredContent": {"output": "long"},
        "isError": False,
    }
    result = asyncio.run(runner.emit_tool_result(event))
    assert result == {"content": [{"type": "text", "text": "short"}], "details": {"d": 1}, "isError": True}
    assert seen == [("short", None, "call_1")]
    runner, _ = make_runner()
    assert asyncio.run(runner.emit_tool_result(event)) is None


def test_message_end_replacements_chain_and_a_role_change_is_refused():
    def first(tau):
        tau.on("message_end", lambda e, c: {"message": {**e.message, "content": "edited"}})

    def role_change(tau):
        tau.on("message_end", lambda e, c: {"message": {"role": "user", "content": "x"}})

    def second(tau):
        tau.on("message_end", lambda e, c: {"message": {**e.message, "content": e.message["content"] + "!"}})

    runner, errors = make_runner(first, role_change, second)
    event = {"type": "message_end", "message": {"role": "assistant", "content": "raw"}}
    assert asyncio.run(runner.emit_message_end(event)) == {
        "message": {"role": "assistant", "content": "edited!"}
    }
    assert errors[0]["error"] == "message_end handlers must return a message with the same role"


def test_boundary_drafts_and_continue_chain_with_a_rebuilt_context():
    built = []

    async def build(entries):
        built.append(len(entries))
        return {"canContinue": True, "drafts": len(entries)}

    def ext1(tau):
        draft = {"type": "custom_message", "customType": "loop", "content": "go on", "display": False}
        tau.on("turn_end", lambda e, c: {"entries": [*e.entries, draft], "continue": True})

    def ext2(tau):
        def handler(event: TurnEndEvent, ctx):
            assert event.continue_ is True and event.context == {"canContinue": True, "drafts": 1}
            return {"entries": [*event.entries, {"type": "custom", "customType": "mark"}]}

        tau.on("turn_end", handler)

    runner, _ = make_runner(ext1, ext2)
    event = {"type": "turn_end", "turnIndex": 0, "message": {}, "toolResults": [], "outcome": "completed"}
    result = asyncio.run(runner.emit_boundary(event, build))
    assert [d["type"] for d in result["entries"]] == ["custom_message", "custom"]
    assert result["continue"] is True and result["valid"] is True
    assert built == [0, 1, 2]


def test_boundary_invalid_drafts_are_discarded_and_continue_is_dropped():
    async def build(entries):
        if entries:
            raise ValueError("context_edit target zzz not found")
        return {"canContinue": False}

    def ext(tau):
        tau.on("agent_before_settle", lambda e, c: {"entries": [{"type": "context_edit"}], "continue": True})

    runner, errors = make_runner(ext)
    result = asyncio.run(runner.emit_boundary({"type": "agent_before_settle", "outcome": "completed"}, build))
    assert result == {"entries": [], "continue": False, "context": {"canContinue": False}, "valid": False}
    assert errors[0]["error"] == "Invalid boundary entries: context_edit target zzz not found"


def test_cache_warming_last_action_wins_and_project_trust_first_decision_wins():
    def warm(tau):
        tau.on("cache_warming_decision", lambda e, c: {"action": "warm"})
        tau.on("project_trust", lambda e, c: {"trusted": "undecided"})

    def stop(tau):
        tau.on("cache_warming_decision", lambda e, c: {"action": "stop"})
        tau.on("project_trust", lambda e, c: {"trusted": "yes"})

    runner, _ = make_runner(warm, stop)
    assert asyncio.run(runner.emit({"type": "cache_warming_decision", "action": "warm"})) == {
        "action": "stop"
    }
    assert asyncio.run(runner.emit_project_trust("/p")) == {"trusted": "yes"}


def test_resources_discover_combines_paths_with_their_extension():
    def ext1(tau):
        tau.on("resources_discover", lambda e, c: {"skillPaths": ["/s1"]})

    def ext2(tau):
        tau.on("resources_discover", lambda e, c: {"skillPaths": ["/s2"], "promptPaths": ["/p"]})

    runner, _ = make_runner(ext1, ext2)
    result = asyncio.run(runner.emit({"type": "resources_discover", "cwd": "/", "reason": "startup"}))
    assert result["skillPaths"] == [
        {"path": "/s1", "extensionPath": "ext1.py"},
        {"path": "/s2", "extensionPath": "ext2.py"},
    ]
    assert result["promptPaths"] == [{"path": "/p", "extensionPath": "ext2.py"}]
