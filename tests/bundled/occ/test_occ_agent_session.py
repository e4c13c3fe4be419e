"""OCC on the real run-time session with the scripted faux model and ``update_plan`` as the plan
source (``todo`` and ``todo-loop`` disabled): two consecutive boundary compactions, each followed by
its automatic continuation before ``prompt()`` returns; the progress reaches the summarizer."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from faux_model import FauxModel, Summarizer

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import load_extensions  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

SETTINGS = {"sol": {"onlineContextCompact": True}, "compaction": {"keepRecentTokens": 100}}
SUMMARY = "## Goal\nBuild a, b and c.\n"


def big(tag: str, n: int) -> dict[str, Any]:
    return {"bash": f"{sys.executable} -c \"print('{tag}' * 9000)\" # {tag} {n}"}


def plan(a: str, b: str, c: str, progress: dict | None = None) -> dict[str, Any]:
    steps = [{"id": "a", "goal": "build a", "status": a}, {"id": "b", "goal": "build b", "status": b}]
    steps.append({"id": "c", "goal": "build c", "status": c})
    return {"tool": "update_plan", "args": {"steps": steps, **({"progress": progress} if progress else {})}}


def progress(command: str) -> dict[str, list[str]]:
    return {"files_changed": [], "verification": [command], "decisions": []}


STOPPED = "(this answer belongs to the stopped run)"


class Model(Summarizer):
    """Answers summary requests with a fixed summary and every other request from a queue.

    The request that follows a boundary's plan update belongs to the run OCC stops: tau's loop may
    still send it, and its answer is discarded, so it gets :data:`STOPPED` instead of the next step
    (had the run not been stopped, that text would show up as a final answer).
    """

    def __init__(self, queue: list[dict[str, Any]]) -> None:
        super().__init__(queue, SUMMARY)
        self.after_boundary = False

    def turn(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.after_boundary and request["messages"][-1]["role"] == "toolResult":
            self.after_boundary = False
            return {"text": STOPPED}
        step = self.turns.pop(0)
        self.after_boundary = bool(step.pop("boundary", False))
        return step


def test_two_consecutive_compactions_each_continue_before_prompt_returns(tmp_path):
    explore = [big("1", n) for n in range(6)] + [{"text": "Explored."}]
    build = [
        plan("in_progress", "pending", "pending"),
        {**plan("completed", "in_progress", "pending", progress("make a")), "boundary": True},
    ]
    after_first = [big("2", n) for n in range(6)] + [{"text": "b collected."}]
    finish = [
        {**plan("completed", "completed", "pending", progress("make b")), "boundary": True},
        plan("completed", "completed", "completed"),
    ]
    model = Model([*explore, *build, *after_first, *finish, {"text": "All done."}])
    scripted = FauxModel([{"factory": model}], record=None)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = session_module.AgentSession(
        manager, Settings.in_memory(SETTINGS), scripted.registry, scripted.model, cwd=str(tmp_path)
    )
    snapshots: list[list[str]] = []

    def kinds() -> list[str]:
        return [e.get("customType") or e["type"] for e in manager.get_entries() if e["type"] != "custom"]

    async def scenario():
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=["todo", "todo-loop"])
        await session.start()
        await session.prompt("explore")
        snapshots.append(kinds())
        await session.prompt("build")
        snapshots.append(kinds())
        await session.prompt("finish b")
        snapshots.append(kinds())

    asyncio.run(scenario())

    assert model.turns == []  # every scripted answer was asked for
    assert snapshots[0].count("compaction") == 0
    # prompt("build") returned only after the compaction and the continuation it started
    assert snapshots[1].count("compaction") == 1 and snapshots[1].count("sol-pi-online-context-compact") == 1
    assert snapshots[1].index("sol-pi-online-context-compact") == snapshots[1].index("compaction") + 1
    texts = [
        e["message"]["content"][0]["text"]
        for e in manager.get_entries()
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"]["stopReason"] == "stop"
    ]
    assert texts == ["Explored.", "b collected.", "All done."]
    assert snapshots[2].count("compaction") == 2 and snapshots[2].count("sol-pi-online-context-compact") == 2
    # the summarizer of each compaction got the progress recorded at its boundary
    first = [json.dumps(r["messages"]) for r in model.summaries()]
    assert any("make a" in text and "untrusted-progress-evidence" in text for text in first)
    assert any("make b" in text for text in first)
    # both compactions recorded; the plan, its samples (three boundaries) and the growth history kept
    states = [
        e["data"] for e in manager.get_entries() if e.get("customType") == "sol-pi-online-context-state-v1"
    ]
    final = states[-1]
    assert (final["nativeCompactionCount"], final["epoch"]) == (2, 2)
    assert len(final["completedBoundaryRequestCounts"]) == 3 and final["positiveContextDeltaCount"] > 0
    assert [step["status"] for step in final["plan"]] == ["completed"] * 3
