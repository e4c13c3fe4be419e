"""The hooks, command and tool of todo-loop on fake events (the decisions, without a session)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from todo_loop_fakes import FakeView, assistant, marker_entry, tasks_state, user

from tau.bundled.todo_loop.loop import BLOCK_PARAMETERS, NOT_RUNNING, TodoLoop
from tau.bundled.todo_loop.marker import NUDGE, NUDGE_WITH_BLOCK
from tau.extension import TurnEndEvent


class FakeEvents:
    """The event bus with nobody answering ``pi-todo:read`` (the bundled todo is not loaded)."""

    async def emit(self, channel, data=None):
        return None


class FakeTau:
    def __init__(self, agent_dir, settings=None, active=("todo", "todo_loop_block")) -> None:
        self.agent_dir = agent_dir
        self.settings = settings or {}
        self.active = list(active)
        self.registered: dict[str, Any] = {}
        self.events = FakeEvents()

    def get_settings(self):
        return self.settings

    def get_active_tools(self):
        return self.active

    def on(self, event, handler):
        self.registered[event] = handler

    def register_tool(self, definition):
        self.registered["tool"] = definition

    def register_command(self, name, description, handler, *, get_argument_completions=None):
        self.registered["command"] = (name, handler, get_argument_completions)


class FakeCtx:
    def __init__(self, view, cwd, *, pending=False) -> None:
        self._view = view
        self.cwd = str(cwd)
        self.pending = pending
        self.notes: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.ui = SimpleNamespace(
            notify=lambda message, type="info": self.notes.append((message, type)), notice=self.notices.append
        )

    @property
    def session_manager(self):
        if self._view is None:
            raise AssertionError("the session was read")
        return self._view

    def is_project_trusted(self):
        return True

    def has_pending_messages(self):
        return self.pending

    def has_waiting_input(self):
        return self.pending


def open_branch() -> FakeView:
    view = FakeView()
    view.add(user("build it"))
    view.add(tasks_state("pending", "completed"))
    view.add(assistant("did one"))
    return view


def turn_end(message: dict, **fields: Any) -> TurnEndEvent:
    return TurnEndEvent(message=message["message"], **fields)


def settle(loop: TodoLoop, event: TurnEndEvent, ctx: FakeCtx) -> dict | None:
    """The ``turn_end`` handler, awaited."""
    return asyncio.run(loop.on_turn_end(event, ctx))


@pytest.fixture
def loop(tmp_path):
    return TodoLoop(FakeTau(tmp_path / "agent"))


def test_a_settle_with_open_tasks_proposes_one_marker_and_keeps_earlier_drafts(loop, tmp_path):
    earlier = {"type": "custom", "customType": "other:record", "data": {}}
    result = settle(loop, turn_end(assistant(), entries=[earlier]), FakeCtx(open_branch(), tmp_path))
    assert result == {
        "entries": [
            earlier,
            {
                "type": "custom_message",
                "customType": "todo-loop:continue",
                "content": NUDGE_WITH_BLOCK,
                "display": False,
            },
        ],
        "continue": True,
    }


def test_without_the_block_tool_the_plain_sentence(tmp_path):
    loop = TodoLoop(FakeTau(tmp_path, active=["todo", "read"]))
    result = settle(loop, turn_end(assistant()), FakeCtx(open_branch(), tmp_path))
    assert result["entries"][0]["content"] == NUDGE


def test_a_tool_call_turn_returns_at_once_and_reads_nothing(loop, tmp_path):
    ctx = FakeCtx(None, tmp_path)  # reading the session would fail the test
    assert settle(loop, turn_end(assistant(stop="toolUse", tool="bash")), ctx) is None
    assert loop.state.rounds == 0


@pytest.mark.parametrize("stop", ["length", "error"])
def test_other_stop_reasons_do_not_continue(loop, tmp_path, stop):
    assert settle(loop, turn_end(assistant(stop=stop)), FakeCtx(open_branch(), tmp_path)) is None


def test_nothing_is_added_while_messages_are_queued(loop, tmp_path):
    assert settle(loop, turn_end(assistant()), FakeCtx(open_branch(), tmp_path, pending=True)) is None
    queued = turn_end(assistant(), context={"pendingMessages": [{"role": "user", "content": "steer"}]})
    assert settle(loop, queued, FakeCtx(open_branch(), tmp_path)) is None
    assert loop.state.rounds == 0


def test_nothing_is_added_when_another_handler_already_continues(loop, tmp_path):
    assert settle(loop, turn_end(assistant(), continue_=True), FakeCtx(open_branch(), tmp_path)) is None


def test_an_aborted_turn_is_recorded_not_continued(loop, tmp_path):
    event = turn_end(assistant(stop="aborted"), outcome="aborted")
    assert settle(loop, event, FakeCtx(open_branch(), tmp_path)) is None
    assert loop.state.state_line(disabled=False) == "state: stopped: aborted"
    # the next settle (a hidden continuation resumed the run) loops again
    assert settle(loop, turn_end(assistant()), FakeCtx(open_branch(), tmp_path))["continue"] is True


def test_the_kill_switch_in_the_agent_dir_stops_both_hooks_and_the_tool(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    loop = TodoLoop(FakeTau(agent))
    ctx = FakeCtx(open_branch(), tmp_path)
    messages = [
        {"role": "assistant", "stopReason": "stop"},
        marker_entry() | {"role": "custom"},
        {"role": "user"},
    ]
    (agent / "todo-loop.disabled").touch()
    assert settle(loop, turn_end(assistant()), ctx) is None
    assert loop.on_context(SimpleNamespace(messages=messages), ctx) is None
    refused = asyncio.run(loop.execute_block("c1", {"reason": "r"}, None, None, ctx))
    assert (refused.is_error, refused.content) == (True, [{"type": "text", "text": NOT_RUNNING}])
    (agent / "todo-loop.disabled").unlink()
    assert loop.on_context(SimpleNamespace(messages=messages), ctx) == {
        "messages": [messages[0], messages[2]]
    }
    assert settle(loop, turn_end(assistant()), ctx)["continue"] is True


def test_the_project_kill_switch(tmp_path):
    (tmp_path / ".tau").mkdir()
    (tmp_path / ".tau" / "todo-loop.disabled").touch()
    loop = TodoLoop(FakeTau(tmp_path / "agent"))
    assert settle(loop, turn_end(assistant()), FakeCtx(open_branch(), tmp_path)) is None


def test_the_block_tool(loop, tmp_path):
    ctx = FakeCtx(open_branch(), tmp_path)
    result = asyncio.run(loop.execute_block("c1", {"reason": "need credentials"}, None, None, ctx))
    assert result.content == [
        {"type": "text", "text": "todo loop stopped until the next human message: need credentials"}
    ]
    assert result.is_error is False
    assert settle(loop, turn_end(assistant()), ctx) is None
    ctx._view.add(user("here they are"))
    ctx._view.add(assistant())
    assert settle(loop, turn_end(assistant()), ctx)["continue"] is True


def test_the_block_tool_definition(loop):
    tool = loop.block_tool()
    assert tool.name == "todo_loop_block"
    assert tool.description == "Stop the todo loop's automatic continuation when you need the user; give the reason."
    assert (
        tool.parameters
        == BLOCK_PARAMETERS
        == {
            "type": "object",
            "properties": {"reason": {"type": "string", "minLength": 1}},
            "required": ["reason"],
            "additionalProperties": False,
        }
    )


def test_registration(tmp_path):
    tau = FakeTau(tmp_path)
    TodoLoop(tau).register()
    assert {"session_start", "turn_end", "context", "tool", "command"} <= set(tau.registered)
    name, _, complete = tau.registered["command"]
    assert name == "todoloop"
    assert complete("p") == [{"value": "pause", "label": "pause"}]
    assert complete("") == [{"value": w, "label": w} for w in ("status", "pause", "resume")]


def test_the_command(loop, tmp_path):
    ctx = FakeCtx(open_branch(), tmp_path)
    asyncio.run(loop.on_command("", ctx))
    asyncio.run(loop.on_command("pause", ctx))
    assert settle(loop, turn_end(assistant()), ctx) is None
    asyncio.run(loop.on_command("resume", ctx))
    asyncio.run(loop.on_command("status", ctx))
    asyncio.run(loop.on_command("stop", ctx))
    anchor = ctx._view.order[0]
    assert [note for note, _ in ctx.notes] == [
        f'state: running\nanchor: {anchor} "build it"\nrounds: 0/25\nstalls: 0/3\ntasks: 1/2 open (source: pi-todo:state)',
        f'state: paused\nanchor: {anchor} "build it"\nrounds: 0/25\nstalls: 0/3\ntasks: 1/2 open (source: pi-todo:state)',
        f'state: running\nanchor: {anchor} "build it"\nrounds: 0/25\nstalls: 0/3\ntasks: 1/2 open (source: pi-todo:state)',
        f'state: running\nanchor: {anchor} "build it"\nrounds: 0/25\nstalls: 0/3\ntasks: 1/2 open (source: pi-todo:state)',
        "Unknown /todoloop argument 'stop': use status, pause or resume",
    ]


def test_bad_settings_are_reported_once_and_ignored(tmp_path):
    loop = TodoLoop(FakeTau(tmp_path, settings={"todoLoop": {"maxRounds": "five"}}))
    ctx = FakeCtx(open_branch(), tmp_path)
    for _ in range(3):
        assert settle(loop, turn_end(assistant()), ctx)["continue"] is True
    assert ctx.notes == [
        (
            'settings.json: todoLoop.maxRounds must be a non-negative integer (0: no cap), got "five"; using the default 25',
            "warning",
        )
    ]
