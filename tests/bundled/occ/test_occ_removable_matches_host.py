"""OCC's removable history is what the host's compaction then removes (within 5%): for a cut at a
user message, for a cut inside a turn (pi summarizes the turn's prefix apart and drops it too), and
for a boundary compaction OCC itself asks for, on the real run-time session with the faux model."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from faux_model import FauxModel, Summarizer
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.bundled.occ.estimate import removable_tokens
from tau.extension import estimate_tokens, load_extensions
from tau.session.manager import SessionManager


def big(tag: str, n: int, size: int = 9000) -> dict[str, Any]:
    return {"bash": f"{sys.executable} -c \"print('{tag}' * {size})\" # {tag} {n}"}


def session_for(
    tmp_path: Any, settings: dict[str, Any], queue: list[dict[str, Any]]
) -> tuple[AgentSession, SessionManager]:
    """A session answering from ``queue``, and every summary request with :data:`faux_model.SUMMARY`."""
    scripted = FauxModel([{"factory": Summarizer(queue)}], record=None)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = AgentSession(
        manager, Settings.in_memory(settings), scripted.registry, scripted.model, cwd=str(tmp_path)
    )
    return session, manager


def context(manager: SessionManager) -> list[dict[str, Any]]:
    return [m for m in manager.build_session_projection()["messages"] if m.get("role") != "system"]


def removed_by_the_compaction(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """The tokens the compaction took out: the context before minus what stayed (its summary aside)."""
    kept = [m for m in after if m.get("role") != "compactionSummary"]
    return sum(map(estimate_tokens, before)) - sum(map(estimate_tokens, kept))


def two_prompts(tmp_path: Any) -> tuple[AgentSession, SessionManager]:
    queue = [big("a", 1), big("a", 2), {"text": "First done."}, big("b", 1), big("b", 2)]
    queue += [{"bash": "echo small"}, {"text": "Second done."}]
    session, manager = session_for(tmp_path, {"compaction": {"enabled": False}}, queue)

    async def run() -> None:
        await session.prompt("first")
        await session.prompt("second")

    asyncio.run(run())
    return session, manager


def estimate_then_compact(session: AgentSession, manager: SessionManager, keep: int) -> tuple[int, int, Any]:
    before = context(manager)
    estimate = removable_tokens(manager.get_branch(), before, keep)
    asyncio.run(session.compact(keep_recent_tokens=keep))
    (compaction,) = [e for e in manager.get_branch() if e["type"] == "compaction"]
    return estimate, removed_by_the_compaction(before, context(manager)), compaction


def test_a_cut_at_a_user_message(tmp_path):
    session, manager = two_prompts(tmp_path / "a")
    branch = manager.get_branch()
    second = [i for i, e in enumerate(branch) if e.get("message", {}).get("role") == "user"][1]
    # keep exactly the second prompt's turn (its two 9,000-character outputs and the rest)
    keep = sum(estimate_tokens(e["message"]) for e in branch[second:] if e["type"] == "message")
    estimate, removed, compaction = estimate_then_compact(session, manager, keep)
    assert compaction["firstKeptEntryId"] == branch[second]["id"]
    assert "**Turn Context (split turn):**" not in compaction["summary"]
    assert removed > 4000 and abs(estimate - removed) <= 0.05 * removed


def test_a_cut_inside_a_turn_removes_the_turn_prefix_too(tmp_path):
    session, manager = two_prompts(tmp_path / "b")
    # keep only the end of the second turn: its prefix (the prompt and the first output) goes too
    estimate, removed, compaction = estimate_then_compact(session, manager, 2500)
    kept = next(e for e in manager.get_branch() if e["id"] == compaction["firstKeptEntryId"])
    assert kept["message"]["role"] == "assistant"
    assert "**Turn Context (split turn):**" in compaction["summary"]
    assert removed > 6000 and abs(estimate - removed) <= 0.05 * removed


def test_a_boundary_compaction_removes_what_occ_estimated(tmp_path):
    plan = [
        {"id": "a", "goal": "build a", "status": "in_progress"},
        {"id": "b", "goal": "build b", "status": "pending"},
    ]
    done = [{**plan[0], "status": "completed"}, {**plan[1], "status": "in_progress"}]
    # one turn: the work of step a and its completion, then step b, as a real model works
    queue = [{"tool": "update_plan", "args": {"steps": plan}}, *(big("a", n) for n in range(4))]
    queue += [{"tool": "update_plan", "args": {"steps": done}}, {"bash": "echo b"}]
    queue += [{"tool": "update_plan", "args": {"steps": [{**s, "status": "completed"} for s in done]}}]
    queue += [{"text": "Both built."}]
    # a small retained tail: OCC's floor (keepRecentTokens + the summary) is under this context
    settings = {"sol": {"onlineContextCompact": True}, "compaction": {"keepRecentTokens": 2000}}
    session, manager = session_for(tmp_path, settings, queue)

    async def run() -> None:
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=["todo", "todo-loop"])
        await session.start()
        await session.prompt("build a and b")

    asyncio.run(run())
    entries = manager.get_entries()
    decisions = [e["data"] for e in entries if e.get("customType") == "sol-pi-online-context-decision-v1"]
    assert [d["compact"] for d in decisions][:1] == [True]
    index = next(i for i, e in enumerate(entries) if e["type"] == "compaction")
    before = [m for m in _projection(entries[:index]) if m.get("role") != "system"]
    after = [m for m in _projection(entries[: index + 1]) if m.get("role") != "system"]
    removed = removed_by_the_compaction(before, after)
    assert removed > 8000 and abs(decisions[0]["archiveTokens"] - removed) <= 0.05 * removed


def _projection(branch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from tau.session.projection import build_session_projection

    return build_session_projection(branch)["messages"]
