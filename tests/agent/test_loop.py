"""One low-level run: event order, tool execution rules, hooks (pi-agent-core ``runLoop``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loop_support import MODEL, Recorder, ScriptedModel, calls, text, tool

from tau.agent.hooks import AgentContext, LoopConfig, TurnUpdate
from tau.agent.loop import declare_tool_changes, run_loop, run_loop_continue
from tau.llm.stream import AbortSignal
from tau.llm.transcript import create_initial_system_message
from tau.tools.base import ToolResult, tool_declaration


def user(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": value}], "timestamp": 1}


def declared(tools) -> list[dict[str, Any]]:
    """A transcript head that already declares ``tools``, so the run adds no system message."""
    head = create_initial_system_message(None, [tool_declaration(t) for t in tools])
    return [head] if head else []


def run(
    model: ScriptedModel, tools=(), prompt: str = "go", recorder: Recorder | None = None, **hooks: Any
) -> tuple[Recorder, list[dict]]:
    recorder = recorder or Recorder()
    config = LoopConfig(model=MODEL, stream_fn=model, convert_to_llm=lambda messages: messages, **hooks)
    context = AgentContext(messages=declared(tools), tools=list(tools))
    messages = asyncio.run(run_loop([user(prompt)], context, config, recorder))
    return recorder, messages


def results(recorder: Recorder) -> list[dict[str, Any]]:
    return [e["message"] for e in recorder.of_type("message_end") if e["message"]["role"] == "toolResult"]


def tool_phase(recorder: Recorder) -> list[str]:
    """The outline of the first turn's tool calls: from the first tool event to ``turn_end``."""
    outline = recorder.outline()
    first = next(i for i, line in enumerate(outline) if line.startswith("tool_execution"))
    return outline[first : outline.index("turn_end assistant")]


def result_texts(recorder: Recorder) -> list[str]:
    return [message["content"][0]["text"] for message in results(recorder)]


# -- a text turn ---------------------------------------------------------------------------------


def test_text_turn_event_order_and_final_message():
    recorder, messages = run(ScriptedModel(text("Hello there, this is more than sixteen chars.")))
    assert recorder.types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",  # text_start
        "message_update",
        "message_update",
        "message_update",
        "message_update",  # text_end
        "message_end",
        "turn_end",
        "agent_end",
    ]
    start = recorder.events[4]["message"]
    assert (start["role"], start["content"], start["stopReason"]) == ("assistant", [], "pending")
    final = messages[-1]
    assert final["content"] == [{"type": "text", "text": "Hello there, this is more than sixteen chars."}]
    assert final["stopReason"] == "stop"
    assert final["thinkingLevel"] == "off"
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert recorder.events[-1]["messages"] == messages


def test_json_mode_message_update_carries_usage_and_tool_identity():
    recorder, _ = run(ScriptedModel(calls(("echo", {})), text("ok")), [tool("echo")])
    update = recorder.of_type("message_update")[0]
    assert list(update) == ["type", "usage", "assistantMessageEvent"]
    assert update["assistantMessageEvent"] == {
        "type": "toolcall_start",
        "contentIndex": 0,
        "id": "call_1",
        "toolName": "echo",
    }


def test_continue_needs_a_last_message_the_model_can_answer():
    config = LoopConfig(model=MODEL, stream_fn=ScriptedModel(), convert_to_llm=lambda m: m)
    with pytest.raises(ValueError, match="no messages"):
        asyncio.run(run_loop_continue(AgentContext(), config, Recorder()))
    assistant = {"role": "assistant", "content": [], "stopReason": "stop"}
    with pytest.raises(ValueError, match="role: assistant"):
        asyncio.run(run_loop_continue(AgentContext(messages=[assistant]), config, Recorder()))


def test_continue_emits_no_starting_messages():
    model = ScriptedModel(text("again"))
    config = LoopConfig(model=MODEL, stream_fn=model, convert_to_llm=lambda m: m)
    recorder = Recorder()
    added = asyncio.run(run_loop_continue(AgentContext(messages=[user("hi")]), config, recorder))
    assert recorder.outline() == [
        "agent_start",
        "turn_start",
        "message_start assistant",
        "message_end assistant",
        "turn_end assistant",
        "agent_end",
    ]
    assert [m["role"] for m in added] == ["assistant"]
    assert model.requests[0] == [user("hi")]


# -- tool execution --------------------------------------------------------------------------------


def _slow(name: str, delay: float):
    async def body(params, signal, on_update):
        await asyncio.sleep(delay)
        return ToolResult.text(name)

    return tool(name, body)


def _ends_after(name: str, recorder: Recorder, call_id: str):
    """A tool that ends once the call ``call_id`` has ended: a completion order without a race."""

    async def body(params, signal, on_update):
        while not any(
            e["type"] == "tool_execution_end" and e["toolCallId"] == call_id for e in recorder.events
        ):
            await asyncio.sleep(0.001)
        return ToolResult.text(name)

    return tool(name, body)


def test_parallel_tools_end_in_completion_order_and_results_in_source_order():
    model = ScriptedModel(calls(("slow", {}), ("fast", {})), text("done"))
    recorder = Recorder()
    run(model, [_ends_after("slow", recorder, "call_2"), _slow("fast", 0.0)], recorder=recorder)
    assert tool_phase(recorder) == [
        "tool_execution_start call_1",
        "tool_execution_start call_2",
        "tool_execution_end call_2",
        "tool_execution_end call_1",
        "message_start toolResult",
        "message_end toolResult",
        "message_start toolResult",
        "message_end toolResult",
    ]
    assert [m["toolCallId"] for m in results(recorder)] == ["call_1", "call_2"]
    # the results reach the next request in source order
    assert [m["role"] for m in model.requests[1]] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
    ]


@pytest.mark.parametrize("how", ["setting", "tool"])
def test_sequential_execution_runs_each_call_to_the_end_first(how):
    model = ScriptedModel(calls(("slow", {}), ("fast", {})), text("done"))
    slow = _slow("slow", 0.05)
    hooks: dict[str, Any] = {}
    if how == "setting":
        hooks["tool_execution"] = "sequential"
    else:
        slow.execution_mode = "sequential"
    recorder, _ = run(model, [slow, _slow("fast", 0.0)], **hooks)
    assert tool_phase(recorder) == [
        "tool_execution_start call_1",
        "tool_execution_end call_1",
        "message_start toolResult",
        "message_end toolResult",
        "tool_execution_start call_2",
        "tool_execution_end call_2",
        "message_start toolResult",
        "message_end toolResult",
    ]


def test_unknown_tool_is_an_error_result_without_duration():
    recorder, _ = run(ScriptedModel(calls(("nope", {"x": 1})), text("sorry")), [tool("echo")])
    end = recorder.of_type("tool_execution_end")[0]
    assert end == {
        "type": "tool_execution_end",
        "toolCallId": "call_1",
        "toolName": "nope",
        "result": {"content": [{"type": "text", "text": "Tool nope not found"}], "details": {}},
        "isError": True,
    }
    message = results(recorder)[0]
    assert list(message) == ["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"]


def test_invalid_arguments_name_the_field():
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
        "required": ["path"],
    }
    ran = []
    model = ScriptedModel(calls(("read", {"limit": "ten"})), text("fixing"))
    recorder, _ = run(model, [tool("read", lambda *a: ran.append(a), parameters=schema)])
    message = results(recorder)[0]
    assert message["isError"] is True
    assert message["content"][0]["text"] == (
        'Validation failed for tool "read":\n'
        "  - path: missing\n"
        "  - limit: expected number, got string\n\n"
        'Received arguments:\n{\n  "limit": "ten"\n}'
    )
    assert ran == []


def test_arguments_are_coerced_before_execution():
    seen = []
    schema = {"type": "object", "properties": {"limit": {"type": "number"}}}

    async def body(params, signal, on_update):
        seen.append(params)
        return ToolResult.text("ok")

    run(ScriptedModel(calls(("read", {"limit": "10"})), text("ok")), [tool("read", body, parameters=schema)])
    assert seen == [{"limit": 10}]


def test_a_thrown_error_becomes_the_result_the_model_reads():
    async def boom(params, signal, on_update):
        raise RuntimeError("disk on fire")

    recorder, _ = run(ScriptedModel(calls(("boom", {})), text("oh")), [tool("boom", boom)])
    end = recorder.of_type("tool_execution_end")[0]
    assert end["result"] == {"content": [{"type": "text", "text": "disk on fire"}], "details": {}}
    assert end["isError"] is True
    assert isinstance(end["durationMs"], int)
    assert results(recorder)[0]["isError"] is True


def test_a_returned_error_keeps_details_and_structured_content():
    async def fail(params, signal, on_update):
        return ToolResult.error("exit 2", details={"code": 2}, structured_content={"exit_code": 2})

    recorder, _ = run(ScriptedModel(calls(("sh", {})), text("oh")), [tool("sh", fail)])
    end = recorder.of_type("tool_execution_end")[0]
    assert end["result"] == {
        "content": [{"type": "text", "text": "exit 2"}],
        "details": {"code": 2},
        "structuredContent": {"exit_code": 2},
        "isError": True,
    }
    assert results(recorder)[0]["details"] == {"code": 2}


def test_updates_are_emitted_between_start_and_end():
    async def chatty(params, signal, on_update):
        on_update(ToolResult.text("1"))
        await asyncio.sleep(0)
        on_update(ToolResult.text("2"))
        return ToolResult.text("3")

    recorder, _ = run(ScriptedModel(calls(("chatty", {})), text("ok")), [tool("chatty", chatty)])
    tool_events = [e for e in recorder.events if e["type"].startswith("tool_execution")]
    assert [e["type"] for e in tool_events] == [
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_update",
        "tool_execution_end",
    ]
    assert [e["partialResult"]["content"][0]["text"] for e in tool_events[1:3]] == ["1", "2"]
    assert list(tool_events[1]) == ["type", "toolCallId", "toolName", "args", "partialResult"]


def test_length_stop_fails_every_call_without_running_it():
    ran = []
    model = ScriptedModel(calls(("a", {"x": 1}), ("b", {}), stop="length"), text("retrying"))
    recorder, _ = run(model, [tool("a", lambda *x: ran.append(1)), tool("b", lambda *x: ran.append(2))])
    assert ran == []
    assert result_texts(recorder) == [
        f'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
        "may be truncated. Re-issue the tool call with complete arguments."
        for name in ("a", "b")
    ]
    assert tool_phase(recorder)[:6] == [
        "tool_execution_start call_1",
        "tool_execution_end call_1",
        "message_start toolResult",
        "message_end toolResult",
        "tool_execution_start call_2",
        "tool_execution_end call_2",
    ]
    assert len(model.requests) == 2  # the model is asked again with the failures


def test_error_response_ends_the_run_without_running_tools():
    model = ScriptedModel({**calls(("a", {})), "stopReason": "error", "errorMessage": "overloaded"})
    seen = []
    recorder, messages = run(
        model, [tool("a")], finish_turn=lambda turn, signal: seen.append(turn.tool_results)
    )
    assert recorder.outline()[-3:] == ["message_end assistant", "turn_end assistant", "agent_end"]
    assert messages[-1]["stopReason"] == "error"
    assert messages[-1]["errorMessage"] == "overloaded"
    assert seen == [[]]


# -- hooks -----------------------------------------------------------------------------------------


def test_before_tool_call_blocks_with_its_reason():
    ran = []
    seen = []

    def guard(ctx, signal):
        seen.append((ctx.tool_call["name"], ctx.args))
        return {"block": True, "reason": "not in this directory"}

    recorder, _ = run(
        ScriptedModel(calls(("rm", {"path": "/"})), text("ok")),
        [tool("rm", lambda *a: ran.append(a))],
        before_tool_call=guard,
    )
    assert seen == [("rm", {"path": "/"})]
    assert ran == []
    assert result_texts(recorder) == ["not in this directory"]
    assert results(recorder)[0]["isError"] is True


def test_before_tool_call_block_without_reason_and_a_raising_guard():
    async def guard(ctx, signal):
        if ctx.tool_call["name"] == "a":
            return {"block": True}
        raise ValueError("guard crashed")

    recorder, _ = run(
        ScriptedModel(calls(("a", {}), ("b", {})), text("ok")), [tool("a"), tool("b")], before_tool_call=guard
    )
    assert result_texts(recorder) == ["Tool execution was blocked", "guard crashed"]


def test_after_tool_call_overrides_field_by_field():
    async def structured(params, signal, on_update):
        return ToolResult(
            content=[{"type": "text", "text": "raw"}], details={"a": 1}, structured_content={"s": 1}
        )

    def after(ctx, signal):
        assert ctx.result.content[0]["text"] == "raw" and ctx.is_error is False
        return {"content": [{"type": "text", "text": "cooked"}], "isError": True}

    recorder, _ = run(
        ScriptedModel(calls(("t", {})), text("ok")), [tool("t", structured)], after_tool_call=after
    )
    end = recorder.of_type("tool_execution_end")[0]
    # new content without structuredContent drops the old structured content; details stay
    assert end["result"] == {"content": [{"type": "text", "text": "cooked"}], "details": {"a": 1}}
    assert end["isError"] is True


def test_all_calls_terminating_end_the_run_without_another_request():
    async def final(params, signal, on_update):
        return ToolResult(content=[{"type": "text", "text": "bye"}], terminate=True)

    model = ScriptedModel(calls(("final", {}), ("final", {})), text("unused"))
    recorder, _ = run(model, [tool("final", final)])
    assert len(model.requests) == 1
    assert recorder.types()[-2:] == ["turn_end", "agent_end"]


def test_one_call_not_terminating_keeps_the_run_going():
    async def final(params, signal, on_update):
        return ToolResult(content=[{"type": "text", "text": "bye"}], terminate=True)

    model = ScriptedModel(calls(("final", {}), ("echo", {})), text("more"))
    run(model, [tool("final", final), tool("echo")])
    assert len(model.requests) == 2


def test_finish_turn_continue_runs_one_context_only_turn():
    decisions = iter([{"action": "continue"}, None])
    model = ScriptedModel(text("first"), text("second"))
    recorder, messages = run(model, finish_turn=lambda turn, signal: next(decisions))
    assert len(model.requests) == 2
    assert model.requests[1][-1]["content"] == [{"type": "text", "text": "first"}]
    assert recorder.outline().count("turn_start") == 2
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]


def test_finish_turn_continue_is_satisfied_by_tool_results():
    model = ScriptedModel(calls(("echo", {})), text("done"))
    run(
        model,
        [tool("echo")],
        finish_turn=lambda turn, signal: {"action": "continue"} if turn.tool_results else None,
    )
    assert len(model.requests) == 2  # no extra context-only turn


def test_finish_turn_end_stops_before_the_tool_results_are_answered():
    model = ScriptedModel(calls(("echo", {})), text("unused"))
    recorder, _ = run(model, [tool("echo")], finish_turn=lambda turn, signal: {"action": "end"})
    assert len(model.requests) == 1
    assert recorder.types()[-2:] == ["turn_end", "agent_end"]


def test_finish_turn_sees_the_turn_before_turn_end_is_emitted():
    recorder = Recorder()
    seen = []

    def finish(turn, signal):
        seen.append(
            (len(recorder.events), turn.message["stopReason"], [r["toolCallId"] for r in turn.tool_results])
        )

    config = LoopConfig(
        model=MODEL,
        stream_fn=ScriptedModel(calls(("echo", {})), text("x")),
        convert_to_llm=lambda m: m,
        finish_turn=finish,
    )
    echo = tool("echo")
    asyncio.run(
        run_loop([user("go")], AgentContext(messages=declared([echo]), tools=[echo]), config, recorder)
    )
    first_turn_end = recorder.types().index("turn_end")
    assert seen[0] == (first_turn_end, "toolUse", ["call_1"])


def test_prepare_request_replaces_the_context_for_this_and_later_requests():
    model = ScriptedModel(calls(("echo", {})), text("done"))
    canonical = [*declared([tool("echo")]), user("canonical")]

    def prepare(request, signal):
        assert request.thinking_level == "off" and request.model is MODEL
        if len(model.requests) == 0:
            return TurnUpdate(context=AgentContext(messages=list(canonical), tools=request.context.tools))
        return None

    run(model, [tool("echo")], prepare_request=prepare)
    assert model.requests[0] == canonical
    assert [m["role"] for m in model.requests[1]] == ["system", "user", "assistant", "toolResult"]
    assert model.requests[1][:2] == canonical


def test_prepare_request_can_change_model_and_thinking_level():
    model = ScriptedModel(text("hm"))
    _recorder, messages = run(
        model, prepare_request=lambda request, signal: TurnUpdate(thinking_level="high")
    )
    assert model.options[0].reasoning == "high"
    assert messages[-1]["thinkingLevel"] == "high"


def test_prepare_next_turn_appends_messages_before_the_next_request():
    model = ScriptedModel(calls(("echo", {})), text("done"))
    note = {"role": "custom", "customType": "note", "content": "psst", "display": False, "timestamp": 2}
    recorder, _messages = run(
        model, [tool("echo")], prepare_next_turn=lambda turn, signal: TurnUpdate(messages=[note])
    )
    outline = recorder.outline()
    second = outline.index("turn_start", 2)
    assert outline[second : second + 3] == ["turn_start", "message_start custom", "message_end custom"]
    assert model.requests[1][-1] == note


def test_transform_context_changes_the_request_not_the_transcript():
    model = ScriptedModel(text("ok"))
    _recorder, messages = run(model, transform_context=lambda msgs, signal: [*msgs, user("injected")])
    assert model.requests[0][-1] == user("injected")
    assert [m["role"] for m in messages] == ["user", "assistant"]


def test_convert_to_llm_decides_what_the_model_sees():
    model = ScriptedModel(text("ok"))
    config = LoopConfig(
        model=MODEL,
        stream_fn=model,
        convert_to_llm=lambda msgs: [m for m in msgs if m["role"] != "custom"],
    )
    custom = {"role": "custom", "customType": "x", "content": "hidden", "display": True, "timestamp": 3}
    asyncio.run(run_loop([custom, user("go")], AgentContext(), config, Recorder()))
    assert model.requests[0] == [user("go")]


def test_api_key_is_asked_per_request():
    model = ScriptedModel(text("ok"))
    run(model, get_api_key=lambda provider: f"key-for-{provider}")
    assert model.options[0].api_key == "key-for-faux"


# -- queues ----------------------------------------------------------------------------------------


def test_steering_is_polled_before_the_first_request_and_after_each_turn():
    steering = [[user("early")], [user("mid")], []]
    model = ScriptedModel(text("one"), text("two"))
    _recorder, messages = run(model, get_steering_messages=lambda: steering.pop(0) if steering else [])
    assert [m["role"] for m in model.requests[0]] == ["user", "user"]
    assert model.requests[1][-1] == user("mid")
    assert [m["content"][0]["text"] for m in messages if m["role"] == "user"] == ["go", "early", "mid"]


def test_follow_ups_start_a_turn_only_when_the_run_would_stop():
    follow = [[user("later")], []]
    model = ScriptedModel(calls(("echo", {})), text("done"), text("after"))
    _recorder, messages = run(
        model, [tool("echo")], get_follow_up_messages=lambda: follow.pop(0) if follow else []
    )
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


# -- tool declarations -----------------------------------------------------------------------------


def test_changed_tools_are_declared_before_the_prompt():
    echo, other = tool("echo"), tool("other")
    declared = {
        "role": "system",
        "content": "sys",
        "toolsAdded": [
            {
                "name": "echo",
                "description": "The echo tool.",
                "parameters": {"type": "object", "properties": {}},
            }
        ],
        "timestamp": 0,
    }
    context = AgentContext(messages=[declared], tools=[other])
    pending = declare_tool_changes(context, [user("go")])
    assert [m["role"] for m in pending] == ["system", "user"]
    assert pending[0]["toolsAdded"][0]["name"] == "other"
    assert pending[0]["toolsRemoved"] == [{"name": "echo"}]
    assert declare_tool_changes(AgentContext(messages=[declared], tools=[echo]), [user("go")]) == [user("go")]


def test_updates_from_a_worker_thread_reach_the_event_stream():
    async def threaded(params, signal, on_update):
        await asyncio.to_thread(on_update, ToolResult.text("from a thread"))
        await asyncio.sleep(0)
        return ToolResult.text("done")

    recorder, _ = run(ScriptedModel(calls(("t", {})), text("ok")), [tool("t", threaded)])
    updates = recorder.of_type("tool_execution_update")
    assert [u["partialResult"]["content"][0]["text"] for u in updates] == ["from a thread"]
    assert recorder.types().index("tool_execution_update") < recorder.types().index("tool_execution_end")


def test_a_tool_changing_its_arguments_leaves_the_transcript_alone():
    async def mutate(params, signal, on_update):
        params["path"] = "changed"
        return ToolResult.text("ok")

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    recorder, messages = run(
        ScriptedModel(calls(("t", {"path": "a.txt"})), text("ok")), [tool("t", mutate, parameters=schema)]
    )
    assert messages[1]["content"][0]["arguments"] == {"path": "a.txt"}
    assert recorder.of_type("tool_execution_start")[0]["args"] == {"path": "a.txt"}


def test_an_immediate_outcome_ends_during_preparation_of_a_parallel_batch():
    model = ScriptedModel(calls(("slow", {}), ("nope", {}), ("fast", {})), text("done"))
    recorder = Recorder()
    run(model, [_ends_after("slow", recorder, "call_3"), _slow("fast", 0.0)], recorder=recorder)
    assert tool_phase(recorder)[:6] == [
        "tool_execution_start call_1",
        "tool_execution_start call_2",
        "tool_execution_end call_2",
        "tool_execution_start call_3",
        "tool_execution_end call_3",
        "tool_execution_end call_1",
    ]
    assert [m["toolCallId"] for m in results(recorder)] == ["call_1", "call_2", "call_3"]


def test_an_abort_during_preparation_fails_the_rest_of_the_batch():
    signal = AbortSignal()
    ran = []

    def guard(ctx, sig):
        signal.abort()  # e.g. the user pressed Esc while a permission dialog was open
        return None

    recorder = Recorder()
    tools = [tool("a", lambda *x: ran.append("a")), tool("b", lambda *x: ran.append("b"))]
    config = LoopConfig(
        model=MODEL,
        stream_fn=ScriptedModel(calls(("a", {}), ("b", {})), text("never")),
        convert_to_llm=lambda m: m,
        before_tool_call=guard,
    )
    messages = asyncio.run(
        run_loop([user("go")], AgentContext(messages=declared(tools), tools=tools), config, recorder, signal)
    )
    assert ran == []
    assert result_texts(recorder) == ["Operation aborted", "Operation aborted"]
    assert messages[-1]["stopReason"] == "aborted"


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
def test_the_transcript_holds_the_very_messages_the_events_carried(mode):
    ended = []
    config = LoopConfig(
        model=MODEL,
        stream_fn=ScriptedModel(calls(("echo", {}), ("echo", {})), text("ok")),
        convert_to_llm=lambda m: m,
        tool_execution=mode,
    )
    echo = tool("echo")
    emit = lambda event: ended.append(event["message"]) if event["type"] == "message_end" else None  # noqa: E731
    added = asyncio.run(
        run_loop([user("go")], AgentContext(messages=declared([echo]), tools=[echo]), config, emit)
    )
    assert len(added) == len(ended)
    assert all(a is b for a, b in zip(added, ended, strict=True))
