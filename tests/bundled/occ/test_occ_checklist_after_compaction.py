"""After a compaction, the model's first request carries the current checklist (seed 002: the
snapshot "once when no exact successful full current result supplies it, including after …
compaction"), whichever compaction it was: Online Context Compact's boundary compaction (todo as
the plan), the host's threshold compaction, a manual one (issue 25, item 5)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

from faux_model import FauxModel, Summarizer
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.extension import load_extensions
from tau.session.manager import SessionManager

SUMMARY = "## Goal\nBuild a and b.\n"
_LIST = re.compile(r'\{"revision":(\d+),"tasks":\[.*\]\}')


def big(n: int) -> dict[str, Any]:
    return {"bash": f"{sys.executable} -c \"print('x' * 9000)\" # {n}"}


def texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append(block["text"])
    return out


def latest_list(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest checklist JSON the model can see (a todo result's list, or a snapshot block)."""
    for text in reversed(texts(messages)):
        found = _LIST.search(text)
        if found:
            return json.loads(found.group(0))
    return None


class Planner(Summarizer):
    """A faux model that plans a and b with todo, works on a, completes it, then finishes b.

    Ids are read from the newest list the request shows, so the model acts on what it sees.
    """

    def __init__(self) -> None:
        super().__init__(summary=SUMMARY)
        self.step = 0

    def todo(self, messages: list[dict[str, Any]], statuses: tuple[str, str]) -> dict[str, Any]:
        shown = latest_list(messages)
        updates = [
            {"id": task["id"], "status": status}
            for task, status in zip(shown["tasks"], statuses, strict=True)
            if task["status"] != status
        ]
        return {"tool": "todo", "args": {"action": "update", "baseRevision": shown["revision"], "updates": updates}}

    def turn(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        if any("Online context compaction finished" in text for text in texts(messages[-1:])):
            return self.todo(messages, ("completed", "completed"))
        last = messages[-1]
        boundary = last["role"] == "toolResult" and last.get("toolName") == "todo" and "(2 changes" in texts([last])[0]
        if boundary and latest_list(messages)["tasks"][1]["status"] == "in_progress":
            return {"text": "(the stopped run)"}
        script = [
            {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "tasks": [{"title": "a"}, {"title": "b"}]}},
            None,  # a in progress
            *(big(n) for n in range(6)),
            None,  # a completed, b in progress: the boundary
        ]
        if self.step < len(script):
            step = script[self.step]
            self.step += 1
            if step is None:
                statuses = ("in_progress", "pending") if self.step == 2 else ("completed", "in_progress")
                step = self.todo(messages, statuses)
            return step
        return {"text": "All done."}

    def sent(self) -> list[list[dict[str, Any]]]:
        """The messages of each of the agent's requests (summary requests left out)."""
        return [request["messages"] for request in self.turn_requests()]


def test_the_first_request_after_an_online_compaction_shows_the_current_checklist(tmp_path):
    model = Planner()
    scripted = FauxModel([{"factory": model}], record=None)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    settings = {"sol": {"onlineContextCompact": True}, "compaction": {"keepRecentTokens": 500}}
    session = AgentSession(
        manager, Settings.in_memory(settings), scripted.registry, scripted.model, cwd=str(tmp_path)
    )

    async def scenario() -> None:
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=["todo-loop"])
        await session.start()
        await session.prompt("build a and b")

    asyncio.run(scenario())
    kinds = [e.get("customType") or e["type"] for e in manager.get_entries()]
    assert kinds.count("compaction") == 1, kinds
    after = next(
        messages
        for messages in model.sent()
        if any("Online context compaction finished" in text for text in texts(messages))
    )
    shown = latest_list(after)
    assert shown is not None and [t["status"] for t in shown["tasks"]] == ["completed", "in_progress"]
    # once: the kept plan call's result shows it, so no snapshot block repeats it
    current = json.dumps(shown, separators=(",", ":"))
    assert sum(text.count(current) for text in texts(after)) == 1
    assert latest_list(model.sent()[-1])["tasks"][1]["status"] == "completed"  # b finished after it


def test_the_first_request_after_a_threshold_compaction_shows_the_current_checklist(tmp_path):
    steps = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "tasks": [{"title": "one"}, {"title": "two"}]}},
        {"text": "x" * 4000},
        {"text": SUMMARY},
        {"text": "after"},
    ]
    scripted = FauxModel(steps, model_overrides={"context_window": 2000})
    requests = scripted.requests
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    settings = {"compaction": {"enabled": True, "reserveTokens": 500, "keepRecentTokens": 200}}
    session = AgentSession(
        manager,
        Settings.in_memory(settings),
        scripted.registry,
        scripted.model,
        cwd=str(tmp_path),
        stream_fn=scripted.stream,
    )

    async def scenario() -> None:
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=["todo-loop"])
        await session.start()
        await session.prompt("plan it")
        await session.prompt("next")

    asyncio.run(scenario())
    assert [e["type"] for e in manager.get_branch()].count("compaction") == 1
    shown = latest_list([m for m in requests[-1] if m.get("role") != "system"])
    assert shown is not None and [t["title"] for t in shown["tasks"]] == ["one", "two"]
