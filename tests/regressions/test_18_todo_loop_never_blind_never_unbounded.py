"""Issue 18, items 1–5: todo-loop never nudges blind, never loops unbounded, and stops for a human;
``/todo reconcile`` never presents a lost list as an empty one.

Each test runs the bundled ``todo`` and ``todo-loop`` on a real, file-backed session with the faux
model, and counts what a user pays for: requests, and the hidden ``todo-loop:continue`` entries.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.bundled import todo, todo_loop
from tau.extension import ExtensionRunner, load_factory
from tau.session.manager import SessionManager

MARKER = "todo-loop:continue"


class UI:
    """Records notices (the loop's lines) and notifications; dialogs answer nothing."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.notes: list[str] = []

    def notice(self, message: str) -> None:
        self.notices.append(message)

    def notify(self, message: str, type: str = "info") -> None:
        self.notes.append(message)

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class Run:
    """One session with the bundled todo and todo-loop; ``path`` reopens an existing file."""

    def __init__(self, tmp_path: Path, steps: list[Any], *, path: Path | None = None, settings=None) -> None:
        self.scripted = FauxModel(steps, record=None)
        self.on_request: list[Any] = self.scripted.on_request
        if path is None:
            self.manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        else:
            self.manager = SessionManager.open(path, cwd_override=str(tmp_path))
        self.session = AgentSession(
            self.manager,
            Settings.in_memory(settings or {}),
            self.scripted.registry,
            self.scripted.model,
            cwd=str(tmp_path),
            stream_fn=self.scripted.stream,
        )
        self.ui = UI()
        self.runner = ExtensionRunner(cwd=str(tmp_path), mode="json", ui=self.ui)

    @property
    def requests(self) -> int:
        return self.scripted.count

    async def start(self) -> None:
        self.runner.bind(self.session)
        await load_factory(self.runner, todo.extension, path="bundled:todo")
        await load_factory(self.runner, todo_loop.extension, path="bundled:todo-loop")
        await self.session.start()

    def play(self, *prompts: str) -> None:
        """Start, then send each prompt after the previous run settled."""

        async def scenario() -> None:
            await self.start()
            for prompt in prompts:
                await self.session.prompt(prompt)

        asyncio.run(scenario())

    def markers(self) -> int:
        return sum(e.get("customType") == MARKER for e in self.manager.get_branch())

    def close(self) -> Path:
        path = Path(self.manager.get_session_file())
        self.manager.close()
        return path


def plan(*titles: str) -> dict[str, Any]:
    tasks = [{"title": title} for title in titles]
    return {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "tasks": tasks}}


def _last_todo_list(messages: list[dict]) -> dict:
    for message in reversed(messages):
        if (
            message.get("role") == "toolResult"
            and message.get("toolName") == "todo"
            and not message["isError"]
        ):
            text = "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
            lines = text.split("\n")
            return json.loads(lines[1] if lines[0].startswith("todo revision") else lines[0])
    raise AssertionError("no todo result")


def nudged(messages: list[dict]) -> bool:
    last = messages[-1]
    content = last.get("content")
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
    return text.startswith("Continue working")


def nudged_model(on_nudge: Any, answer: str) -> Any:
    """A faux factory: plans two tasks, then answers each nudge with ``on_nudge(list)``'s step and,
    after that step's result, with ``answer``. It never closes a task."""

    def respond(request: dict) -> list[dict]:
        messages = request["messages"]
        if not any(m.get("role") == "toolResult" for m in messages):
            step = plan("parse", "test")
        elif nudged(messages):
            step = on_nudge(_last_todo_list(messages))
        else:
            step = {"text": answer}
        return [step, {"factory": respond}]

    return respond


def update_first(listed: dict, **patch: Any) -> dict:
    update = {"id": listed["tasks"][0]["id"], **patch}
    return {
        "tool": "todo",
        "args": {"action": "update", "baseRevision": listed["revision"], "updates": [update]},
    }


def rename(listed: dict) -> dict:
    """Churn: rename the first task (todo only)."""
    return update_first(listed, title=f"parse, take {listed['revision']}")


def flip(listed: dict) -> dict:
    """Toggle: the first task between pending and in_progress."""
    return update_first(
        listed, status="in_progress" if listed["tasks"][0]["status"] == "pending" else "pending"
    )


churn = nudged_model(rename, "renamed it")
toggle = nudged_model(flip, "toggled it")
worker = nudged_model(lambda listed: {"bash": "true"}, "worked on it")  # real work, nothing closed


# -- 2: bounded --------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [churn, toggle], ids=["churn", "toggle"])
def test_churning_the_list_is_stopped_after_three_stalls(tmp_path, model):
    run = Run(tmp_path, [{"factory": model}])

    run.play("do the plan")
    assert run.markers() == 3
    assert run.requests == 2 + 3 * 2  # plan and answer, then three rounds of one todo call and an answer
    assert run.ui.notices[-1] == "todo-loop: stopped with 2 tasks open: stalled (3 rounds without progress)"
    assert run.ui.notices[:3] == [f"todo-loop: continuing, 2 tasks open (round {n}/25)" for n in (1, 2, 3)]


def test_work_that_never_closes_a_task_stops_at_the_round_cap(tmp_path):
    run = Run(tmp_path, [{"factory": worker}])

    run.play("do the plan")
    assert run.markers() == 25
    assert run.requests == 2 + 25 * 2
    assert run.ui.notices[-1] == "todo-loop: stopped with 2 tasks open: round cap (25)"


# -- 1: never blind ----------------------------------------------------------------------------


ONE_ROUND = {"todoLoop": {"maxRounds": 1}}


def test_no_nudge_while_todo_is_not_an_active_tool(tmp_path):
    run = Run(
        tmp_path,
        [plan("parse", "test"), {"text": "planned"}, {"text": "hi"}, {"text": "more"}],
        settings=ONE_ROUND,
    )

    async def scenario() -> None:
        await run.start()
        await run.session.prompt("plan it")  # plan, answer, one continuation (the cap), answer
        run.session.set_active_tools(["read", "bash"])  # as `--tools read,bash`
        await run.session.prompt("just chat")

    asyncio.run(scenario())
    assert (run.requests, run.markers()) == (4, 1)
    assert run.ui.notices[-1] == "todo-loop: stopped with 2 tasks open: todo is not an active tool"


def _store(run: Run) -> Any:
    definition = next(d for e in run.runner.extensions for d in e.tools.values() if d.name == "todo")
    return definition.execute.__self__.store


def test_no_nudge_while_the_list_is_quarantined(tmp_path):
    steps = [plan("parse", "test"), {"text": "planned"}, {"text": "hi"}, {"text": "after the quarantine"}]
    run = Run(tmp_path, [*steps, {"text": "never sent"}], settings=ONE_ROUND)

    async def scenario() -> None:
        await run.start()
        await run.session.prompt("plan it")
        _store(run)._quarantine_for("a write could not be verified")
        await run.session.prompt("go on")

    asyncio.run(scenario())
    assert (run.requests, run.markers()) == (4, 1)
    assert run.ui.notices[-1] == "todo-loop: stopped: todo unavailable (a write could not be verified)"


def test_no_nudge_on_a_disconnected_branch(tmp_path):
    """A session file whose last line names a parent the file lacks (a failed write followed by a
    persisted tool result): reopened, todo cannot vouch for the list, and the loop does not nudge."""
    first = Run(
        tmp_path, [plan("parse", "test"), {"text": "planned"}, {"text": "stopping"}], settings=ONE_ROUND
    )
    first.play("plan it")
    path = first.close()
    orphan = {
        "type": "message",
        "id": "0000beef",
        "parentId": "deadbeef",  # the failed write: never on disk
        "timestamp": "2026-12-01T00:00:00.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "bash",
            "content": [],
            "isError": False,
            "timestamp": 5,
        },
    }
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(orphan, separators=(",", ":")) + "\n")
    again = Run(tmp_path, [{"text": "hello"}, {"text": "never sent"}], path=path, settings=ONE_ROUND)

    again.play("go on")
    assert (again.requests, again.markers()) == (1, 0)
    assert again.ui.notices == [
        "todo-loop: stopped: todo unavailable (the branch is disconnected at entry '0000beef' (its parent "
        "'deadbeef' is missing); navigate to a verified entry and reconcile)"
    ]


# -- 3: one reader -----------------------------------------------------------------------------


def newest_state(manager: SessionManager) -> dict:
    return next(e for e in reversed(manager.get_branch()) if e.get("customType") == "pi-todo:state")["data"]


def test_an_entry_todo_rejects_is_rejected_by_the_loop_too(tmp_path):
    """A newer ``schemaVersion: 2`` entry with every task completed: todo ignores it (the older open
    list is current), and so does the loop, which goes on."""
    first = Run(
        tmp_path, [plan("parse", "test"), {"text": "planned"}, {"text": "stopping"}], settings=ONE_ROUND
    )

    first.play("plan it")
    done = [{**task, "status": "completed"} for task in newest_state(first.manager)["tasks"]]
    first.manager.append_custom_entry("pi-todo:state", {"schemaVersion": 2, "revision": 2, "tasks": done})
    path = first.close()
    again = Run(tmp_path, [{"text": "resumed"}, {"text": "continued"}], path=path, settings=ONE_ROUND)

    again.play("go on")
    assert again.markers() == 2  # one from before, one new
    assert any("ignoring malformed pi-todo:state entry" in note for note in again.ui.notes)


def complete_first(request: dict) -> dict:
    listed = _last_todo_list(request["messages"])
    update = {"id": listed["tasks"][0]["id"], "status": "completed"}
    return {
        "tool": "todo",
        "args": {"action": "update", "baseRevision": listed["revision"], "updates": [update]},
    }


def test_an_oversized_newer_entry_does_not_reopen_a_closed_list(tmp_path):
    """The other way round: a newer entry with 41 open tasks, which todo rejects (the limit is 40),
    over a list whose only task is closed: the loop does not continue."""
    steps = [plan("parse"), {"text": "planned"}, {"factory": complete_first}, {"text": "all done"}]
    first = Run(tmp_path, steps)

    first.play("plan it")
    assert [task["status"] for task in newest_state(first.manager)["tasks"]] == ["completed"]
    tasks = [
        {"id": f"t{n}", "title": f"t{n}", "description": "", "status": "pending", "dependencies": []}
        for n in range(41)
    ]
    first.manager.append_custom_entry("pi-todo:state", {"schemaVersion": 1, "revision": 3, "tasks": tasks})
    path = first.close()
    again = Run(tmp_path, [{"text": "resumed"}, {"text": "never sent"}], path=path)

    again.play("anything left?")
    assert again.requests == 1 and again.ui.notices == []


# -- 5: the human stops it ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behavior", "answers"),
    [("steer", ["OK, stopping"]), ("followUp", ["still working", "OK, stopping"])],
    ids=["steer", "follow-up"],
)
def test_a_human_message_during_the_run_is_the_last_word(tmp_path, behavior, answers):
    """A steer arrives after the bash call; a follow-up when the model would stop (then nothing is
    continued either: the queued message goes first). Either way the model's answer to it ends the run."""
    steps = [plan("parse", "test"), {"bash": "true"}, *[{"text": a} for a in answers], {"text": "never sent"}]
    run = Run(tmp_path, steps)

    def steer_once(n: int) -> None:
        if n == 2:  # while the model's bash call is being answered
            asyncio.get_running_loop().create_task(
                run.session.prompt("STOP working on this", streaming_behavior=behavior)
            )

    run.on_request.append(steer_once)

    run.play("do the plan")
    texts = [
        e["message"]["content"][0].get("text")
        for e in run.manager.get_branch()
        if e.get("type") == "message" and e["message"]["role"] in ("user", "assistant")
    ]
    assert "STOP working on this" in texts and texts[-1] == "OK, stopping"
    assert run.requests == 2 + len(answers) and run.markers() == 0
    assert run.ui.notices == ["todo-loop: stopped with 2 tasks open: a human message arrived during the run"]


# -- 4 (and 1): a list the file lost is unavailable, for /todo reconcile and for the loop -------------


def test_reconcile_after_the_file_lost_the_list_names_it_unavailable(tmp_path):
    """The session file loses its ``pi-todo:state`` line behind the running session's back: ``/todo
    reconcile`` says the list is unavailable (never ``revision 0`` with no tasks), ``list`` refuses,
    and the loop does not nudge a model that could not read the list."""
    listing = {"tool": "todo", "args": {"action": "list"}}
    steps = [plan("parse", "test"), {"text": "planned"}, {"text": "stopping"}, listing, {"text": "listed"}]
    run = Run(tmp_path, [*steps, {"text": "never sent"}], settings=ONE_ROUND)

    async def scenario() -> Path:
        await run.start()
        await run.session.prompt("plan it")  # plan, answer, one continuation (the cap), answer
        path = Path(run.manager.get_session_file())
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(line for line in lines if b'"pi-todo:state"' not in line))
        await run.runner.execute_command("/todo reconcile")
        await run.session.prompt("what is left?")
        return path

    path = asyncio.run(scenario())
    reason = (
        f"no pi-todo:state entry of this branch is a complete line of {path.name} "
        "(1 on the branch; the file changed outside this session)"
    )
    assert run.ui.notes[-1] == f"todo unavailable: {reason}"  # /todo reconcile's answer
    listed = [e["message"] for e in run.manager.get_branch() if e.get("type") == "message"][-2]
    assert listed["role"] == "toolResult" and listed["details"] == {"error": "storage_unavailable"}
    assert (run.requests, run.markers()) == (3 + 2, 1)  # "what is left?": the list call and the answer only
    assert run.ui.notices[-1] == f"todo-loop: stopped: todo unavailable ({reason})"
