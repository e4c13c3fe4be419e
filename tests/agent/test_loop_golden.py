"""The loop against pi 1.6's own event streams.

``b-parallel-tools``: read + failing bash in parallel. ``c-turn-end-continue``: a ``turn_end``
handler appends a hidden custom message and asks to continue, so one context-only turn follows.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from loop_support import MODEL, Recorder, ScriptedModel, calls, text

from tau.agent.hooks import AgentContext, LoopConfig
from tau.agent.loop import run_loop
from tau.common import jsjson
from tau.session.messages import convert_to_llm
from tau.tools.base import ToolDefinition, ToolResult

# Events of the session layer, not of one low-level run.
SESSION_EVENTS = {"agent_settled", "entry_appended", "queue_update", "compaction_start", "compaction_end"}
VOLATILE = {"timestamp", "durationMs", "usage", "willRetry"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


def _golden(pi_fixtures, name: str = "b-parallel-tools") -> list[dict[str, Any]]:
    path = pi_fixtures / "scenarios" / f"{name}.events.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [event for event in lines if event["type"] not in SESSION_EVENTS]


def _reader(recorder: Recorder):
    async def read(params, signal, on_update):
        # Finishes after bash, as in the golden run: waits for bash's end event, not for a delay.
        while not any(e["type"] == "tool_execution_end" and e["toolName"] == "bash" for e in recorder.events):
            await asyncio.sleep(0.001)
        return ToolResult(
            content=[{"type": "text", "text": "hello world\nline2\n"}],
            structured_content="hello world\nline2\n",
        )

    return read


async def _bash(params, signal, on_update):
    on_update(ToolResult(content=[]))
    on_update(ToolResult(content=[{"type": "text", "text": "hi\n"}], details={}))
    return ToolResult(
        content=[{"type": "text", "text": "hi\n\n\nCommand exited with code 3"}],
        structured_content={"output": "hi\n", "truncated": False, "exit_code": 3, "wall_time_seconds": 0},
        is_error=True,
    )


def _tools(declarations: list[dict[str, Any]], recorder: Recorder) -> list[ToolDefinition]:
    runs = {"read": _reader(recorder), "bash": _bash}

    def make(declaration):
        run = runs.get(declaration["name"])

        async def execute(tool_call_id, params, signal, on_update, ctx):
            if run is None:
                raise AssertionError(f"{declaration['name']} was not called in the scenario")
            return await run(params, signal, on_update)

        return ToolDefinition(
            name=declaration["name"],
            description=declaration["description"],
            parameters=declaration["parameters"],
            execute=execute,
            constrained_sampling=declaration.get("constrainedSampling"),
        )

    return [make(declaration) for declaration in declarations]


def _replay(golden: list[dict[str, Any]]) -> Recorder:
    system = golden[2]["message"]
    user = golden[4]["message"]
    starting_system = {key: value for key, value in system.items() if key != "toolsAdded"}
    model = ScriptedModel(
        calls(
            ("read", {"path": "hello.txt"}),
            ("bash", {"command": "echo hi; exit 3"}),
            say="Reading the file and running a command.",
        ),
        text("Results: [read: hello world] [bash error: hi]"),
    )
    config = LoopConfig(model=MODEL, stream_fn=model, convert_to_llm=lambda messages: messages)
    recorder = Recorder(sdk=True)
    context = AgentContext(messages=[], tools=_tools(system["toolsAdded"], recorder))
    asyncio.run(run_loop([starting_system, user], context, config, recorder))
    return recorder


def test_parallel_tools_follow_pis_event_order(pi_fixtures):
    golden = _golden(pi_fixtures)
    recorder = _replay(golden)

    def outline(events):
        return [
            (event["type"], event.get("message", {}).get("role"), event.get("toolCallId")) for event in events
        ]

    assert outline(recorder.events) == outline(golden)


def test_parallel_tools_events_equal_pis_modulo_timing_and_usage(pi_fixtures):
    """Same keys in the same order, same values, apart from timestamps, durations and usage."""
    golden = _golden(pi_fixtures)
    recorder = _replay(golden)
    for ours, theirs in zip(recorder.events, golden, strict=True):
        assert jsjson.dumps(_strip(ours)) == jsjson.dumps(_strip(theirs)), theirs["type"]


def test_the_system_message_declares_the_executable_tools(pi_fixtures):
    golden = _golden(pi_fixtures)
    recorder = _replay(golden)
    system = recorder.events[2]["message"]
    assert list(system) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert system["toolsAdded"] == golden[2]["message"]["toolsAdded"]


def _replay_turn_end_continue(golden: list[dict[str, Any]]) -> tuple[Recorder, ScriptedModel]:
    system, user = golden[2]["message"], golden[4]["message"]
    answers = [
        e["message"] for e in golden if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    model = ScriptedModel(*(text(answer["content"][0]["text"]) for answer in answers))
    nudge = {
        "role": "custom",
        "customType": "nudge",
        "content": "Say more.",
        "display": False,
        "timestamp": 1,
    }
    decisions = []

    def finish_turn(turn, signal):
        # what the session layer does for a turn_end handler's {entries: [custom_message], continue: true}
        if decisions:
            return None
        decisions.append(turn.message)
        turn.context.messages.append(nudge)
        return {"action": "continue"}

    config = LoopConfig(model=MODEL, stream_fn=model, convert_to_llm=convert_to_llm, finish_turn=finish_turn)
    recorder = Recorder(sdk=True)
    context = AgentContext(tools=_tools(system["toolsAdded"], recorder))
    asyncio.run(run_loop([system, user], context, config, recorder))
    return recorder, model


def test_finish_turn_continue_matches_pis_turn_end_continuation(pi_fixtures):
    golden = _golden(pi_fixtures, "c-turn-end-continue")
    recorder, model = _replay_turn_end_continue(golden)
    for ours, theirs in zip(recorder.events, golden, strict=True):
        assert jsjson.dumps(_strip(ours)) == jsjson.dumps(_strip(theirs)), theirs["type"]
    requests = json.loads((pi_fixtures / "scenarios" / "c-turn-end-continue.requests.json").read_text())
    expected = [[m["role"] for m in r["context"]["messages"]] for r in requests["requests"]]
    assert [[m["role"] for m in request] for request in model.requests] == expected
    assert model.requests[1][-1]["content"] == [{"type": "text", "text": "Say more."}]
