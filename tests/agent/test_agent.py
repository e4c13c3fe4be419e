"""The stateful ``Agent`` with the faux provider: state, abort, steering, follow-ups, continuing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from loop_support import MODEL, Recorder, tool

from tau.agent.agent import Agent, AgentBusyError
from tau.llm.providers.faux import FauxProvider
from tau.tools.base import ToolAborted, ToolResult
from tau.tools.bash import bash_tool


def make_agent(*steps: dict[str, Any], tools=(), **options: Any) -> tuple[Agent, FauxProvider, Recorder]:
    faux = FauxProvider(steps)
    agent = Agent(model=MODEL, stream_fn=faux.stream, system_prompt="You are terse.", tools=tools, **options)
    recorder = Recorder()
    agent.subscribe(recorder)
    return agent, faux, recorder


def texts(agent: Agent, role: str) -> list[str]:
    out = []
    for message in agent.state.messages:
        if message["role"] == role:
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return out


def roles(agent: Agent) -> list[str]:
    return [message["role"] for message in agent.state.messages]


# -- prompt and state --------------------------------------------------------------------------------


def test_prompt_runs_a_text_turn_and_keeps_the_transcript():
    agent, faux, recorder = make_agent({"text": "Hi!"})
    asyncio.run(agent.prompt("hello"))
    assert roles(agent) == ["system", "user", "assistant"]
    assert texts(agent, "assistant") == ["Hi!"]
    assert agent.state.is_streaming is False
    assert agent.state.system_prompt == "You are terse."
    # the provider saw the leading system message, which declares no tools
    assert [m["role"] for m in faux.requests[0]["messages"]] == ["system", "user"]
    assert recorder.types()[0] == "agent_start" and recorder.types()[-1] == "agent_end"


def test_tools_are_declared_in_the_leading_system_message():
    agent, _faux, _ = make_agent({"tool": "echo", "args": {"x": 1}}, {"text": "done"}, tools=[tool("echo")])
    asyncio.run(agent.prompt("go"))
    head = agent.state.messages[0]
    assert [t["name"] for t in head["toolsAdded"]] == ["echo"]
    assert roles(agent) == ["system", "user", "assistant", "toolResult", "assistant"]


def test_state_while_streaming_and_running_tools():
    seen: list[tuple[str, bool, frozenset[str]]] = []
    agent, _, _ = make_agent({"tool": "echo", "args": {}}, {"text": "done"}, tools=[tool("echo")])
    agent.subscribe(
        lambda event, signal: seen.append(
            (event["type"], agent.state.is_streaming, agent.state.pending_tool_calls)
        )
    )
    asyncio.run(agent.prompt("go"))
    by_type = {kind: (streaming, pending) for kind, streaming, pending in seen}
    assert by_type["agent_start"][0] is True
    start = next(p for k, _, p in seen if k == "tool_execution_start")
    end = next(p for k, _, p in seen if k == "tool_execution_end")
    assert len(start) == 1 and end == frozenset()
    assert agent.state.pending_tool_calls == frozenset()


def test_a_second_prompt_while_running_is_refused():
    async def scenario():
        agent, _, _ = make_agent({"text": "slow " * 40})
        run = asyncio.create_task(agent.prompt("one"))
        await asyncio.sleep(0)
        with pytest.raises(AgentBusyError, match="steer"):
            await agent.prompt("two")
        await run

    asyncio.run(scenario())


def test_listeners_are_awaited_in_order_and_idle_waits_for_them():
    async def scenario():
        agent, _, _ = make_agent({"text": "ok"})
        order = []

        async def slow(event, signal):
            if event["type"] == "agent_end":
                await asyncio.sleep(0.02)
                order.append("slow done")

        agent.subscribe(slow)
        agent.subscribe(
            lambda event, signal: order.append("second") if event["type"] == "agent_end" else None
        )
        run = asyncio.create_task(agent.prompt("go"))
        await asyncio.sleep(0)
        await agent.wait_for_idle()
        assert order == ["slow done", "second"]
        assert agent.is_idle
        await run

    asyncio.run(scenario())


def test_unsubscribe_stops_delivery():
    agent, _, recorder = make_agent({"text": "a"}, {"text": "b"})
    asyncio.run(agent.prompt("one"))
    count = len(recorder.events)
    other = Recorder()
    unsubscribe = agent.subscribe(other)
    unsubscribe()
    asyncio.run(agent.prompt("two"))
    assert other.events == [] and len(recorder.events) > count


def test_exhausted_script_is_an_error_turn_recorded_in_state():
    agent, _, recorder = make_agent()
    asyncio.run(agent.prompt("hello"))
    assert agent.state.messages[-1]["stopReason"] == "error"
    assert agent.state.error_message == "No more faux responses queued"
    assert recorder.types()[-2:] == ["turn_end", "agent_end"]


def test_a_hook_that_raises_ends_the_run_with_a_failed_turn():
    def broken(messages):
        raise RuntimeError("converter broke")

    agent, _, recorder = make_agent({"text": "unused"}, convert_to_llm=broken)
    asyncio.run(agent.prompt("hello"))
    last = agent.state.messages[-1]
    assert (last["stopReason"], last["errorMessage"]) == ("error", "converter broke")
    assert recorder.types()[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert agent.is_idle and agent.state.is_streaming is False


# -- abort ---------------------------------------------------------------------------------------------


def test_abort_during_streaming_ends_the_response_as_aborted():
    async def scenario():
        agent, _, recorder = make_agent({"text": "a long answer " * 20}, {"text": "never"})

        def on_event(event, signal):
            if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
                agent.abort()

        agent.subscribe(on_event)
        await agent.prompt("go")
        return agent, recorder

    agent, recorder = asyncio.run(scenario())
    last = agent.state.messages[-1]
    assert last["stopReason"] == "aborted"
    assert last["errorMessage"] == "Request was aborted"
    assert last["content"][0]["text"].startswith("a long answer")
    assert agent.state.error_message == "Request was aborted"
    assert recorder.types()[-3:] == ["message_end", "turn_end", "agent_end"]


def test_abort_during_a_tool_gives_every_call_a_result_and_ends_the_run():
    async def scenario():
        running = asyncio.Event()

        async def wait_for_abort(params, signal, on_update):
            running.set()
            await signal.wait()
            raise ToolAborted()

        agent, faux, recorder = make_agent(
            {
                "content": [
                    {"type": "toolCall", "name": "wait", "arguments": {}},
                    {"type": "toolCall", "name": "wait", "arguments": {}},
                ],
                "stopReason": "toolUse",
            },
            {"text": "never"},
            tools=[tool("wait", wait_for_abort)],
        )
        run = asyncio.create_task(agent.prompt("go"))
        await running.wait()
        agent.abort()
        await agent.wait_for_idle()
        await run
        return agent, faux, recorder

    agent, faux, recorder = asyncio.run(scenario())
    results = [m for m in agent.state.messages if m["role"] == "toolResult"]
    assert [r["content"][0]["text"] for r in results] == ["Operation aborted", "Operation aborted"]
    assert all(r["isError"] for r in results)
    last = agent.state.messages[-1]
    assert (last["stopReason"], last["errorMessage"]) == ("aborted", "This operation was aborted")
    assert faux.call_count == 1  # as pi: the follow-up request is not made (issue 22)
    assert last["content"] == [] and last["usage"]["totalTokens"] == 0
    assert recorder.types()[-1] == "agent_end"


def test_abort_in_sequential_mode_skips_calls_not_started():
    ran = []

    async def scenario():
        async def first(params, signal, on_update):
            ran.append("first")
            agent.abort()
            return ToolResult.text("finished anyway")

        agent, _, _ = make_agent(
            {
                "content": [
                    {"type": "toolCall", "name": "first", "arguments": {}},
                    {"type": "toolCall", "name": "second", "arguments": {}},
                ],
                "stopReason": "toolUse",
            },
            tools=[tool("first", first), tool("second", lambda *a: ran.append("second"))],
            tool_execution="sequential",
        )
        await agent.prompt("go")
        return agent

    agent = asyncio.run(scenario())
    assert ran == ["first"]
    assert texts(agent, "toolResult") == ["finished anyway", "Operation aborted"]


def test_abort_kills_a_running_bash_command():

    async def scenario():
        agent, _, _recorder = make_agent({"bash": "sleep 60"}, {"text": "never"}, tools=[bash_tool()])
        agent.subscribe(
            lambda event, signal: agent.abort() if event["type"] == "tool_execution_start" else None
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        await agent.prompt("go")
        return agent, loop.time() - started

    agent, elapsed = asyncio.run(scenario())
    assert elapsed < 30  # the abort, not the 60 s sleep, ended it
    result = next(m for m in agent.state.messages if m["role"] == "toolResult")
    assert result["isError"] is True
    assert agent.state.messages[-1]["stopReason"] == "aborted"


def test_abort_keeps_queued_messages():
    async def scenario():
        agent, _, _ = make_agent({"text": "long " * 50})
        agent.subscribe(lambda e, s: agent.abort() if e["type"] == "message_update" else None)
        agent.follow_up("later")
        await agent.prompt("go")
        return agent

    agent = asyncio.run(scenario())
    assert agent.has_queued_messages()
    assert agent.clear_queues()[1][0]["content"][0]["text"] == "later"
    assert not agent.has_queued_messages()


# -- steering and follow-ups ---------------------------------------------------------------------------


def test_steering_is_delivered_after_the_current_turns_tools():
    async def scenario():
        async def slow(params, signal, on_update):
            agent.steer("change of plan")
            return ToolResult.text("tool done")

        agent, faux, recorder = make_agent(
            {"tool": "slow", "args": {}}, {"text": "ok, changing"}, tools=[tool("slow", slow)]
        )
        await agent.prompt("go")
        return agent, faux, recorder

    agent, faux, recorder = asyncio.run(scenario())
    assert roles(agent) == ["system", "user", "assistant", "toolResult", "user", "assistant"]
    assert texts(agent, "user") == ["go", "change of plan"]
    second_request = [m["role"] for m in faux.requests[1]["messages"]]
    assert second_request == ["system", "user", "assistant", "toolResult", "user"]
    # the steering message opens the second turn
    outline = recorder.outline()
    turn = outline.index("turn_start", 2)
    assert outline[turn + 1] == "message_start user"


def test_steering_one_at_a_time_versus_all():
    for mode, expected_requests in (("one-at-a-time", 3), ("all", 2)):

        async def scenario(mode=mode):
            async def steer_twice(params, signal, on_update):
                agent.steer("first")
                agent.steer("second")
                return ToolResult.text("ok")

            agent, faux, _ = make_agent(
                {"tool": "t", "args": {}},
                {"text": "a"},
                {"text": "b"},
                tools=[tool("t", steer_twice)],
                steering_mode=mode,
            )
            await agent.prompt("go")
            return agent, faux

        agent, faux = asyncio.run(scenario())
        assert faux.call_count == expected_requests, mode
        assert texts(agent, "user") == ["go", "first", "second"]


def test_follow_up_waits_until_the_agent_would_stop():
    async def scenario():
        async def queue(params, signal, on_update):
            agent.follow_up("and then this")
            return ToolResult.text("ok")

        agent, _, _ = make_agent(
            {"tool": "t", "args": {}}, {"text": "done"}, {"text": "done too"}, tools=[tool("t", queue)]
        )
        await agent.prompt("go")
        return agent

    agent = asyncio.run(scenario())
    assert roles(agent) == ["system", "user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert not agent.has_queued_messages()


def test_queue_modes_and_peek():
    agent, _, _ = make_agent()
    agent.follow_up("f1")
    agent.follow_up("f2")
    assert [m["content"][0]["text"] for m in agent.peek_queued_messages()] == ["f1"]
    agent.follow_up_mode = "all"
    assert len(agent.peek_queued_messages()) == 2
    agent.steer("s1")
    assert [m["content"][0]["text"] for m in agent.peek_queued_messages()] == ["s1"]
    with pytest.raises(ValueError, match="one-at-a-time"):
        agent.steering_mode = "some"  # type: ignore[assignment]


# -- continuing ----------------------------------------------------------------------------------------


def test_continue_after_an_error_retries_from_the_transcript():
    agent, _, _ = make_agent({"error": "overloaded"}, {"text": "second try"})
    asyncio.run(agent.prompt("go"))
    assert agent.state.messages[-1]["stopReason"] == "error"
    agent.state.messages = agent.state.messages[:-1]  # the session layer drops the failed attempt
    asyncio.run(agent.continue_run())
    assert texts(agent, "assistant") == ["second try"]
    assert texts(agent, "user") == ["go"]


def test_continue_from_an_assistant_message_needs_queued_messages():
    agent, _faux, _ = make_agent({"text": "one"}, {"text": "two"})
    asyncio.run(agent.prompt("go"))
    with pytest.raises(ValueError, match="role: assistant"):
        asyncio.run(agent.continue_run())
    agent.follow_up("more please")
    asyncio.run(agent.continue_run())
    assert texts(agent, "user") == ["go", "more please"]
    assert texts(agent, "assistant") == ["one", "two"]


def test_continue_without_messages_is_refused():
    agent, _, _ = make_agent()
    with pytest.raises(ValueError, match="No messages"):
        asyncio.run(agent.continue_run())


def test_reset_keeps_the_prompt_and_tools_only():
    agent, _, _ = make_agent({"text": "hi"}, tools=[tool("echo")])
    asyncio.run(agent.prompt("hello"))
    agent.follow_up("x")
    agent.reset()
    assert roles(agent) == ["system"]
    assert agent.state.system_prompt == "You are terse."
    assert not agent.has_queued_messages()


def test_abort_and_wait_returns_once_idle():
    async def scenario():
        agent, _, _ = make_agent({"text": "long " * 100})
        streaming = asyncio.Event()
        agent.subscribe(lambda event, signal: event["type"] == "message_update" and streaming.set())
        run = asyncio.create_task(agent.prompt("go"))
        await streaming.wait()  # mid-answer, however fast or slow the machine is
        await agent.abort_and_wait()
        assert agent.is_idle and agent.signal is None
        await run
        return agent

    agent = asyncio.run(scenario())
    assert agent.state.messages[-1]["stopReason"] == "aborted"


def test_changing_tools_between_runs_declares_the_change_before_the_prompt():
    agent, faux, _ = make_agent({"text": "a"}, {"text": "b"}, tools=[tool("echo")])
    asyncio.run(agent.prompt("one"))
    agent.state.tools = [tool("other")]
    asyncio.run(agent.prompt("two"))
    assert roles(agent) == ["system", "user", "assistant", "system", "user", "assistant"]
    change = agent.state.messages[3]
    assert [t["name"] for t in change["toolsAdded"]] == ["other"]
    assert change["toolsRemoved"] == [{"name": "echo"}]
    assert [m["role"] for m in faux.requests[1]["messages"]][-2:] == ["system", "user"]


def test_steer_and_follow_up_during_bash_match_pis_rpc_transcript(pi_fixtures):
    """The third prompt of ``rpc/rpc-session.jsonl``: steer and follow_up sent while ``sleep`` runs."""
    lines = [
        json.loads(line) for line in (pi_fixtures / "rpc" / "rpc-session.jsonl").read_text().splitlines()
    ]
    out = [json.loads(r["line"]) for r in lines if r["dir"] == "out"]
    third_run = [i for i, e in enumerate(out) if e.get("type") == "agent_start"][2]
    settled = next(i for i, e in enumerate(out) if i > third_run and e.get("type") == "agent_settled")
    skipped = {"message_update", "tool_execution_update", "queue_update", "response"}

    def outline(events):
        return [
            (
                e["type"],
                e.get("message", {}).get("role"),
                json.dumps(e.get("message", {}).get("content", ""))[:40],
            )
            for e in events
            if e["type"] not in skipped
        ]

    async def scenario():
        agent, _, recorder = make_agent(
            {"bash": "sleep 0.2; echo slow-done"},
            {"text": "echo: steer: please also say hi"},
            {"text": "echo: follow-up: one more thing"},
            tools=[bash_tool()],
        )

        def on_event(event, signal):
            if event["type"] == "tool_execution_start":
                agent.steer("steer: please also say hi")
                agent.follow_up("follow-up: one more thing")

        agent.subscribe(on_event)
        await agent.prompt("bash: sleep 1; echo slow-done")
        return recorder

    recorder = asyncio.run(scenario())
    ours = [e for e in recorder.events if e["type"] != "message_start" or e["message"]["role"] != "system"]
    theirs = outline(out[third_run:settled])
    assert [row[:2] for row in outline(ours)] == [row[:2] for row in theirs]
    users = [row[2] for row in outline(ours) if row[1] == "user"]
    assert users == [row[2] for row in theirs if row[1] == "user"]
