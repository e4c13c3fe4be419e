"""A checklist over 10 KiB stays visible to the model (issue 33, item 1; seed 002).

ObservationPack replaces a successful result over 10 KiB by a placeholder after its first two full
sends. A ``todo`` result carries the current list, and ``todo`` adds no snapshot while one does, so
packing the newest ``todo`` result made a long checklist vanish from the model's context. The newest
successful ``todo`` result is never packed; an older one, superseded by a newer list, still is.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.extension import load_extensions
from tau.session.manager import SessionManager

# 24 tasks of ~500 bytes each: the mutation result's compact list is about 12 KB
TASKS = [{"title": f"step {n:02d}", "description": f"task {n:02d} " + "d" * 480} for n in range(24)]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def run(
    tmp_path: Path, steps: list[Any], sol: dict[str, Any]
) -> tuple[list[list[dict[str, Any]]], SessionManager]:
    scripted = FauxModel(steps)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = AgentSession(
        manager,
        Settings.in_memory({"disabledExtensions": ["todo-loop"], "sol": sol}),
        scripted.registry,
        scripted.model,
        cwd=str(tmp_path),
        stream_fn=scripted.stream,
    )

    async def scenario():
        await load_extensions(session, cwd=str(tmp_path), mode="json")
        await session.start()
        await session.prompt("plan the work and keep going")

    asyncio.run(scenario())
    return scripted.requests, manager


def complete_first(request: dict[str, Any]) -> dict[str, Any]:
    """Complete the first task (its id from the list the model sees)."""
    listed = [m for m in request["messages"] if m["role"] == "toolResult" and m["toolName"] == "todo"]
    first_id = re.search(r'"id":"([0-9a-f]{8,})"', text_of(listed[-1])).group(1)
    return {
        "tool": "todo",
        "args": {"action": "update", "baseRevision": 1, "updates": [{"id": first_id, "status": "completed"}]},
    }


def current_list_shown(request: list[dict[str, Any]], revision: int) -> bool:
    """Whether the request holds the whole list of ``revision`` in full (a result or a snapshot)."""
    marker = f'"revision":{revision},'
    for message in request:
        text = text_of(message)
        if marker in text and all(f"task {n:02d} " + "d" * 480 in text for n in range(24)):
            return True
    return False


# swaps applied as soon as they are due (batching waits for the cache economics, which may defer them)
@pytest.mark.parametrize("sol", [{}, {"swapBatching": False}], ids=["default", "unbatched"])
def test_a_12_kb_checklist_stays_visible_after_its_full_sends(tmp_path, sol):
    steps: list[Any] = [
        {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "tasks": TASKS}},
        *({"bash": f"echo {n}"} for n in range(4)),
        {"factory": complete_first},
        *({"bash": f"echo again {n}"} for n in range(4)),
        {"text": "done"},
    ]
    requests, manager = run(tmp_path, steps, sol)
    results = [
        e["message"]
        for e in manager.get_entries()
        if e["type"] == "message"
        and e["message"]["role"] == "toolResult"
        and e["message"]["toolName"] == "todo"
    ]
    assert [r["isError"] for r in results] == [False, False]
    assert len(text_of(results[0]).encode()) > 12_000  # over ObservationPack's 10 KiB threshold

    # revision 1 is in every request after its result, well past its two full sends
    assert len(requests) == 11
    assert all(current_list_shown(request, 1) for request in requests[1:6])
    # after the update, revision 2 is in every request
    assert all(current_list_shown(request, 2) for request in requests[6:])
    assert not any(m.get("customType") == "pi-todo:snapshot" for request in requests for m in request)
    if sol:  # revision 1's result, superseded, is packed as soon as it is due
        first_result = requests[-1][3]
        assert first_result["toolName"] == "todo"
        assert "obs_recall" in text_of(first_result)  # a placeholder (which rule packed it is obspack's)
        assert not current_list_shown(requests[-1], 1)
