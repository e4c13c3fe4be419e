"""The todo extension on the real run-time session with the faux model: what the model and the user see."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

import todo_planner as planner  # noqa: E402

from faux_model import FauxModel  # noqa: E402
from tau.agent.settings import Settings  # noqa: E402
from tau.bundled import todo  # noqa: E402
from tau.extension import ExtensionRunner, ToolDefinition, ToolResult, load_factory  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402


class RecordingUI:
    """A UI that records notifications and statuses (and shows no overlay)."""

    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.status: dict[str, str | None] = {}
        self.overlays: list[Any] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notices.append((type, message))

    def notice(self, message: str) -> None:
        self.notices.append(("notice", message))

    def set_status(self, key: str, text: str | None = None) -> None:
        self.status[key] = text

    async def custom(self, component: Any, **options: Any) -> Any:
        self.overlays.append(component)
        return None

    def __getattr__(self, name: str) -> Any:
        async def nothing(*args: Any, **kwargs: Any) -> None:
            return None

        return nothing


class Harness:
    def __init__(
        self,
        tmp_path: Path,
        steps: Any,
        *,
        file_backed: bool = True,
        mode: str = "json",
        settings: Any = None,
    ) -> None:
        scripted = FauxModel(steps)
        self.requests: list[list[dict[str, Any]]] = scripted.requests
        if file_backed:
            self.manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        else:
            self.manager = SessionManager.in_memory(str(tmp_path))
        self.session = session_module.AgentSession(
            self.manager,
            Settings.in_memory(settings),
            scripted.registry,
            scripted.model,
            cwd=str(tmp_path),
            stream_fn=scripted.stream,
        )
        self.ui = RecordingUI()
        self.runner = ExtensionRunner(cwd=str(tmp_path), mode=mode, ui=self.ui)

    async def start(self, *before: Any) -> None:
        self.runner.bind(self.session)
        for index, factory in enumerate(before):
            await load_factory(self.runner, factory, path=f"ext{index}.py")
        await load_factory(self.runner, todo.extension, path="bundled:todo")
        await self.session.start()

    def states(self) -> list[dict]:
        path = self.manager.get_session_file()
        records = [json.loads(line) for line in Path(path).read_text().splitlines()]
        return [r["data"] for r in records if r.get("customType") == "pi-todo:state"]

    def todo_results(self) -> list[dict]:
        return [
            entry["message"]
            for entry in self.manager.get_entries()
            if entry.get("type") == "message" and entry["message"].get("toolName") == "todo"
        ]


def snapshot_blocks(request: list[dict]) -> list[dict]:
    return [m for m in request if m.get("role") == "user" and "[todo snapshot" in json.dumps(m)]


def test_the_model_plans_and_completes_three_dependent_tasks(tmp_path):
    harness = Harness(tmp_path, [{"factory": planner.plan}])

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("plan and do the parser work")

    asyncio.run(scenario())
    states = harness.states()
    assert [s["revision"] for s in states] == [1, 2, 3, 4, 5, 6]
    final = states[-1]["tasks"]
    assert [(t["title"], t["status"]) for t in final] == [
        ("Write the parser", "completed"),
        ("Test the parser", "completed"),
        ("Document the parser", "completed"),
    ]
    assert final[1]["dependencies"] == [final[0]["id"]] and final[2]["dependencies"] == [final[1]["id"]]
    results = harness.todo_results()
    assert results[0]["content"][0]["text"] == '{"revision":0,"tasks":[]}'
    first_line, listed = results[1]["content"][0]["text"].split("\n")
    assert first_line == f"todo revision 1 (1 change: {final[0]['id'][:8]})"
    assert json.loads(listed) == {
        "revision": 1,
        "tasks": [{"id": final[0]["id"][:8], "title": "Write the parser", "status": "pending"}],
    }
    assert all(not r["isError"] for r in results)
    assert harness.ui.status["pi-todo"] == "todo 3/3 done"


def test_results_carry_the_list_so_no_block_is_ever_sent(tmp_path):
    harness = Harness(tmp_path, [{"factory": planner.plan}])

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("plan")

    asyncio.run(scenario())
    assert len(harness.requests) == 8
    assert all(snapshot_blocks(request) == [] for request in harness.requests)
    assert "pi-todo:snapshot" not in Path(harness.manager.get_session_file()).read_text()


def test_an_edit_outside_the_tool_is_sent_once_at_the_end_and_stays(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"text": "first"},
        {"bash": "true"},
        {"text": "second"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")
        [store] = _stores(harness)
        store.mutate({"action": "add", "baseRevision": 1, "title": "two (from /todo)"})
        await harness.session.prompt("again")

    asyncio.run(scenario())
    third, fourth = harness.requests[2:]
    [block] = snapshot_blocks(third)
    assert third[-1] == block and "[todo snapshot, revision 2]" in json.dumps(block)
    assert fourth[: len(third)] == third and snapshot_blocks(fourth) == [block]


def test_list_and_mutation_results_both_suppress_the_block(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"tool": "todo", "args": {"action": "list"}},
        {"text": "ok"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")

    asyncio.run(scenario())
    assert [len(snapshot_blocks(r)) for r in harness.requests] == [0, 0, 0]


def test_errors_are_error_results_with_the_code(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 3, "title": "one"}},
        {"text": "ok"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")

    asyncio.run(scenario())
    [result] = harness.todo_results()
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        'Error: revision conflict (baseRevision 3, current 0); call todo {"action":"list"} and retry'
    )
    assert result["details"] == {"error": "revision_conflict", "schemaVersion": 1, "revision": 0, "tasks": []}
    assert harness.states() == []


def test_remove_without_an_id_answers_invalid_arguments(tmp_path):
    """Issue 33, item 6: not ``unknown task id null`` (``unknown_task``)."""
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"tool": "todo", "args": {"action": "remove", "baseRevision": 1}},
        {"text": "ok"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")

    asyncio.run(scenario())
    result = harness.todo_results()[-1]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error: remove needs the id of the task to remove"
    assert result["details"]["error"] == "invalid_arguments"


def test_volatile_sessions_say_so_to_the_model(tmp_path):
    steps = [{"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}}, {"text": "ok"}]
    harness = Harness(tmp_path, steps, file_backed=False)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")

    asyncio.run(scenario())
    [result] = harness.todo_results()
    assert result["content"][0]["text"].endswith("\n(in-memory, not persistent after process exit)")
    assert snapshot_blocks(harness.requests[1]) == []  # the result says it
    assert harness.ui.status["pi-todo"] == "todo 0/1 done (in-memory, not persistent after process exit)"


def test_an_inactive_todo_tool_adds_nothing(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"text": "a"},
        {"text": "b"},
        {"text": "c"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")
        [store] = _stores(harness)
        store.mutate({"action": "add", "baseRevision": 1, "title": "two (from /todo)"})
        await harness.session.prompt("again")
        harness.session.set_active_tools([n for n in harness.session.get_active_tool_names() if n != "todo"])
        await harness.session.prompt("more")

    asyncio.run(scenario())
    assert len(snapshot_blocks(harness.requests[2])) == 1
    assert snapshot_blocks(harness.requests[3]) == []
    assert len(harness.states()) == 2  # the stored snapshots stay


def test_a_different_visible_todo_tool_fails_closed(tmp_path):
    async def other_todo(call_id, params, signal, on_update, ctx):
        return ToolResult.text("theirs")

    def third_party(tau):
        tau.register_tool(
            ToolDefinition(
                name="todo",
                description="someone else's todo",
                parameters={"type": "object", "properties": {"item": {"type": "string"}}},
                execute=other_todo,
            )
        )

    harness = Harness(tmp_path, [{"tool": "todo", "args": {"item": "x"}}, {"text": "ok"}])

    async def scenario() -> None:
        await harness.start(third_party)
        await harness.session.prompt("go")

    asyncio.run(scenario())
    assert harness.ui.notices == [
        ("warning", 'todo: another "todo" tool is active (ext0.py); pi-todo not loaded')
    ]
    assert harness.todo_results()[0]["content"][0]["text"] == "theirs"
    assert harness.states() == [] and "pi-todo" not in harness.ui.status
    assert all(not snapshot_blocks(r) for r in harness.requests)
    assert harness.runner.get_command("todo") is None


def test_slash_todo_outside_the_interactive_mode_gives_a_usage_hint(tmp_path):
    harness = Harness(tmp_path, [])

    async def scenario() -> None:
        await harness.start()
        assert await harness.runner.execute_command("/todo")

    asyncio.run(scenario())
    [(kind, text)] = harness.ui.notices
    assert kind == "info" and text.startswith("/todo opens the checklist in the interactive mode.")
    assert harness.manager.get_entries()[-1].get("customType") != "pi-todo:state"


def test_slash_todo_in_the_interactive_mode_opens_the_overlay(tmp_path):
    harness = Harness(tmp_path, [], mode="tui")

    async def scenario() -> None:
        await harness.start()
        assert await harness.runner.execute_command("/todo")

    asyncio.run(scenario())
    [overlay] = harness.ui.overlays
    assert overlay.render(80)[0].startswith("Todo · revision 0")
    assert harness.ui.notices[-1][1].startswith("/todo opens")  # this UI returned without showing it


def test_slash_todo_reconcile_lifts_a_quarantine(tmp_path):
    steps = [{"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}}, {"text": "ok"}]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("go")
        ext_store = next(iter(_stores(harness)))
        ext_store._quarantine_for("a test quarantine")
        assert harness.ui.status["pi-todo"] == "todo 0/1 done"
        await harness.runner.execute_command("/todo reconcile")

    asyncio.run(scenario())
    assert harness.ui.notices[-1] == ("info", "todo 0/1 done")
    assert harness.ui.status["pi-todo"] == "todo 0/1 done"


def _stores(harness: Harness) -> list[Any]:
    """The extension's store, found through its registered tool's bound method."""
    definition = next(d for ext in harness.runner.extensions for d in ext.tools.values() if d.name == "todo")
    return [definition.execute.__self__.store]


def test_tree_navigation_recovers_the_branch_state(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"text": "first"},
        {"tool": "todo", "args": {"action": "add", "baseRevision": 1, "title": "two"}},
        {"text": "second"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> Any:
        await harness.start()
        await harness.session.prompt("one")
        target = harness.manager.get_leaf_id()
        await harness.session.prompt("two")
        [store] = _stores(harness)
        assert store.state["revision"] == 2
        await harness.session.navigate_tree(target)
        return store

    store = asyncio.run(scenario())
    assert store.state["revision"] == 1 and [t["title"] for t in store.state["tasks"]] == ["one"]
    assert harness.ui.status["pi-todo"] == "todo 0/1 done"


def test_fork_recovers_the_checklist_in_the_new_file(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"text": "first"},
        {"tool": "todo", "args": {"action": "add", "baseRevision": 1, "title": "two"}},
        {"text": "second"},
        {"tool": "todo", "args": {"action": "list"}},
        {"text": "listed"},
    ]
    harness = Harness(tmp_path, steps)

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("one")
        await harness.session.prompt("two")
        second_prompt = next(
            e["id"]
            for e in reversed(harness.manager.get_entries())
            if e.get("type") == "message" and e["message"]["role"] == "user"
        )
        old_file = harness.manager.get_session_file()
        await harness.session.fork(second_prompt)  # the new file ends before "two"
        assert harness.manager.get_session_file() != old_file
        await harness.session.prompt("again")

    asyncio.run(scenario())
    [store] = _stores(harness)
    assert store.state["revision"] == 1 and store.mode == "file"
    listed = harness.todo_results()[-1]["content"][0]["text"]
    assert listed.startswith('{"revision":1,"tasks":[{"id":')


def test_compaction_recovers_and_the_compacted_list_is_sent_again(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}},
        {"text": "first"},
        {"text": "the summary"},  # the compaction call
        {"text": "after"},
    ]
    harness = Harness(tmp_path, steps, settings={"compaction": {"keepRecentTokens": 1}})

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("one " + "words " * 200)
        await harness.session.compact()
        await harness.session.prompt("next")

    asyncio.run(scenario())
    [store] = _stores(harness)
    assert store.state["revision"] == 1
    last = harness.requests[-1]
    blocks = snapshot_blocks(last)
    assert len(blocks) == 1 and "[todo snapshot, revision 1]" in json.dumps(blocks[0])
    assert any(e["type"] == "compaction" for e in harness.manager.get_branch())
    visible = [m for m in last if m["role"] != "system"]
    assert "compacted into the following summary" in json.dumps(visible[0]) and visible[-1] == blocks[0]


def test_print_mode_end_to_end_writes_the_checklist_to_the_session_file(tmp_path, run_tau):
    """`tau -p` with the faux model: plan three dependent tasks, complete them, check the session file."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": f"{planner.__file__}:plan_from_file"}]))
    env = {"TAU_FAUX_SCRIPT": str(script), "TAU_AGENT_DIR": str(tmp_path / "agent")}
    run = run_tau(["-p", "plan and do the parser work", "--model", "faux/faux-1"], env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("All three tasks are done.")
    [path] = (tmp_path / "agent" / "sessions").rglob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    states = [r for r in records if r.get("customType") == "pi-todo:state"]
    assert [s["data"]["revision"] for s in states] == [1, 2, 3, 4, 5, 6]
    assert [t["status"] for t in states[-1]["data"]["tasks"]] == ["completed"] * 3
    by_id = {r.get("id"): r for r in records}
    for state in states:  # each state entry hangs off the branch, after the call that made it
        parent = by_id[state["parentId"]]
        assert parent["type"] == "message" and parent["message"]["role"] == "assistant"
    assert "pi-todo:snapshot" not in path.read_text()


def test_other_extensions_read_the_checklist_on_the_event_bus(tmp_path):
    steps = [{"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": "one"}}, {"text": "ok"}]
    harness = Harness(tmp_path, [*steps, {"text": "still"}])
    answers = []

    def reader(tau):
        async def on_settled(event, ctx):
            request = {"ctx": ctx}
            await tau.events.emit("pi-todo:read", request)
            answers.append(request.get("todo"))

        tau.on("agent_settled", on_settled)

    async def scenario() -> None:
        await harness.start(reader)
        await harness.session.prompt("go")
        [store] = _stores(harness)
        store._quarantine_for("a test quarantine")
        await harness.session.prompt("again")

    asyncio.run(scenario())
    first, second = answers
    assert first["mode"] == "file" and first["reason"] is None and first["recorded"] is True
    assert first["state"] == harness.states()[-1]
    assert second == {"state": None, "reason": "a test quarantine", "mode": "unavailable", "recorded": False}
