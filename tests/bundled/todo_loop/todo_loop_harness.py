"""todo-loop on the real run-time session with the scripted faux model.

``Harness`` records every request (the model messages each call received, system messages
included) and, beside it, what the session's own projection was at that moment, so a test can tell
a request the ``context`` hook changed from one it passed through. ``plan_extension`` is a
test-only ``todo`` tool (another todo than tau's, as a third-party one would be) that records
``pi-todo:state`` custom entries (the shape tau's ``todo`` writes), so these tests do not depend on
the bundled ``todo`` extension; the loop then reads the list from the branch.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.bundled.todo_loop import extension as todo_loop
from tau.bundled.todo_loop.marker import NUDGE, NUDGE_WITH_BLOCK
from tau.extension import ExtensionRunner, ToolDefinition, ToolResult, load_factory
from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm

NUDGES = (NUDGE, NUDGE_WITH_BLOCK)


class RecordingUI:
    """A UI that keeps what extensions notify and the notices they show (dialogs answer nothing)."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []
        self.notices: list[str] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notes.append((message, type))

    def notice(self, message: str) -> None:
        self.notices.append(message)

    def __getattr__(self, name: str) -> Any:
        def ignore(*args: Any, **kwargs: Any) -> None:
            return None

        return ignore


def plan_args(*statuses: str) -> dict[str, Any]:
    return {"tasks": [{"title": f"task {index + 1}", "status": s} for index, s in enumerate(statuses)]}


def plan_step(*statuses: str) -> dict[str, Any]:
    """A faux step: the model calls the test ``todo`` with tasks ``task 1``.. in these statuses."""
    return {"tool": "todo", "args": plan_args(*statuses)}


def plan_extension(tau: Any) -> None:
    revision = {"n": 0}

    async def execute(call_id, params, signal, on_update, ctx):
        revision["n"] += 1
        tasks = [
            {"id": f"t{i}", "title": t["title"], "description": "", "status": t["status"], "dependencies": []}
            for i, t in enumerate(params["tasks"])
        ]
        tau.append_entry("pi-todo:state", {"schemaVersion": 1, "revision": revision["n"], "tasks": tasks})
        return ToolResult.text(f"plan revision {revision['n']}")

    schema = {
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "status": {"type": "string"}},
                    "required": ["title", "status"],
                },
            }
        },
        "required": ["tasks"],
    }
    tau.register_tool(
        ToolDefinition(name="todo", description="Record the task list.", parameters=schema, execute=execute)
    )


class Harness:
    def __init__(
        self,
        steps: list[dict[str, Any]],
        cwd: Path,
        *,
        settings: dict[str, Any] | None = None,
        trusted: bool = False,
    ) -> None:
        scripted = FauxModel(steps, record=lambda context: list(context["messages"]))
        self.requests: list[list[dict[str, Any]]] = scripted.requests
        self.projected: list[list[dict[str, Any]]] = []
        self.events: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.on_request: list[Any] = scripted.on_request
        # first of the hooks: the session's projection as each request is made
        self.on_request.append(
            lambda _: self.projected.append(convert_to_llm(self.manager.build_session_context()["messages"]))
        )
        self.manager = SessionManager.in_memory(str(cwd))
        self.session = AgentSession(
            self.manager,
            Settings.in_memory(settings or {}),
            scripted.registry,
            scripted.model,
            cwd=str(cwd),
            stream_fn=scripted.stream,
        )
        self.session.subscribe(self.events.append)
        self.ui = RecordingUI()
        self.runner = ExtensionRunner(cwd=str(cwd), mode="json", ui=self.ui, trusted=trusted)
        self.runner.on_error(self.errors.append)

    async def load(self, *factories: Any) -> None:
        for index, factory in enumerate([plan_extension, todo_loop, *factories]):
            await load_factory(self.runner, factory, path=f"ext{index + 1}.py")
        self.runner.bind(self.session)

    def run(self, *prompts: str, extra: tuple[Any, ...] = ()) -> None:
        async def scenario() -> None:
            await self.load(*extra)
            for prompt in prompts:
                await self.session.prompt(prompt)

        asyncio.run(scenario())

    def run_more(self, coroutine_factory: Any) -> None:
        asyncio.run(coroutine_factory())

    async def command(self, text: str) -> list[str]:
        before = len(self.ui.notes)
        await self.runner.execute_command(text)
        return [message for message, _ in self.ui.notes[before:]]

    # -- reading the transcript ----------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        return self.manager.get_branch()

    def kinds(self) -> list[str]:
        """The branch as short labels: user/assistant/toolResult text, ``marker``, ``plan`` (a state entry)."""
        labels = []
        for entry in self.entries():
            if entry["type"] == "custom_message" and entry["customType"] == "todo-loop:continue":
                labels.append("marker")
            elif entry["type"] == "custom" and entry["customType"] == "pi-todo:state":
                labels.append("plan")
            elif entry["type"] == "message":
                message = entry["message"]
                role = message["role"]
                if role == "assistant":
                    calls = [b["name"] for b in message["content"] if b["type"] == "toolCall"]
                    text = "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")
                    labels.append(f"call:{','.join(calls)}" if calls else f"say:{text}")
                elif role == "user":
                    content = message["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    labels.append(f"user:{text}")
                elif role == "toolResult":
                    labels.append(f"result:{message['toolName']}")
        return labels

    def markers(self) -> list[dict[str, Any]]:
        return [
            e
            for e in self.entries()
            if e["type"] == "custom_message" and e["customType"] == "todo-loop:continue"
        ]

    def tool_result(self, tool_name: str) -> dict[str, Any]:
        """The first tool result of ``tool_name`` on the branch."""
        return next(
            e["message"]
            for e in self.entries()
            if e["type"] == "message"
            and e["message"]["role"] == "toolResult"
            and e["message"]["toolName"] == tool_name
        )
