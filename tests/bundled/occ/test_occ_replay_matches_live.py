"""Issue 28 item 3: Online Context Compact's replay (``tau.bundled.occ.replay``, what ``tau savings``
runs) decides as the live extension did, boundary by boundary.

A live faux run with OCC on (``update_plan`` as the plan, ObservationPack and Action Fusion as by
default) records every boundary decision in the session (``sol-pi-online-context-decision-v1``).
Replaying that session with the mechanisms that ran gives the same decisions, figure for figure:
the context size ``W`` (the request as sent, its system prompt, the provider's reported usage), the
removable history, the settings (``compaction.keepRecentTokens``, the ``sol`` cache ratio) and the
window of the request's model.
"""

from __future__ import annotations

import asyncio
import json

import pytest

session_module = pytest.importorskip("tau.agent.session")

from test_occ_agent_session import Model, big, plan, progress  # noqa: E402

from faux_model import FauxModel  # noqa: E402
from tau.agent.settings import Settings  # noqa: E402
from tau.bundled.occ.wire import DECISION_TYPE  # noqa: E402
from tau.extension import load_extensions  # noqa: E402
from tau.llm.registry import ModelRegistry  # noqa: E402
from tau.modes.savings import replay_host  # noqa: E402
from tau.modes.savings.cost_model import PriceBook  # noqa: E402
from tau.modes.savings.replay import replay_branch  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

COMPARED = (
    "toolCallId",
    "compact",
    "reason",
    "writeTokens",
    "archiveTokens",
    "savingTokens",
    "newDebtTokens",
    "horizonRequests",
    "remainingSteps",
    "keepRecentTokens",
    "cacheWriteReadRatio",
    "priorCompactions",
    "requestsSinceCompaction",
)


def live_session(tmp_path, settings: dict) -> list[dict]:
    """Three boundaries (the first two compact), as in ``test_occ_agent_session``; the branch."""
    explore = [big("1", n) for n in range(6)] + [{"text": "Explored."}]
    build = [
        plan("in_progress", "pending", "pending"),
        {**plan("completed", "in_progress", "pending", progress("make a")), "boundary": True},
    ]
    after_first = [big("2", n) for n in range(6)] + [{"text": "b collected."}]
    finish = [
        {**plan("completed", "completed", "pending", progress("make b")), "boundary": True},
        {**plan("completed", "completed", "completed"), "boundary": True},
    ]
    model = Model([*explore, *build, *after_first, *finish, {"text": "All done."}])
    scripted = FauxModel([{"factory": model}], record=None)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = session_module.AgentSession(
        manager, Settings.in_memory(settings), scripted.registry, scripted.model, cwd=str(tmp_path)
    )

    async def scenario():
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=["todo", "todo-loop"])
        await session.start()
        for prompt in ("explore", "build", "finish b"):
            await session.prompt(prompt)

    asyncio.run(scenario())
    return manager.get_branch()


def replayed(branch: list[dict], settings: dict) -> tuple[list[dict], list[dict]]:
    """OCC's decisions and ObservationPack's ledger records in the replay of ``branch``."""
    book = PriceBook(lookup=ModelRegistry().find)
    host = replay_host(book, settings=settings)
    result = replay_branch(branch, book, ("observationPack", "onlineContextCompact"), host=host)
    return result.runs["onlineContextCompact"].decisions, result.runs["observationPack"].pack.records


@pytest.mark.parametrize(
    "settings",
    [
        {"sol": {"onlineContextCompact": True}, "compaction": {"keepRecentTokens": 100}},
        {
            "sol": {"onlineContextCompact": True, "cacheWriteReadRatio": 4},
            "compaction": {"keepRecentTokens": 300, "reserveTokens": 1000},
        },
    ],
    ids=["small-keep", "other-ratio-and-keep"],
)
def test_the_replay_of_a_live_run_makes_the_same_decisions(tmp_path, settings):
    branch = live_session(tmp_path, settings)
    live = [e["data"] for e in branch if e.get("customType") == DECISION_TYPE]
    assert len(live) >= 2 and any(d["compact"] for d in live)
    decisions, _ = replayed(branch, settings)
    assert [{k: d.get(k) for k in COMPARED} for d in decisions] == [
        {k: d.get(k) for k in COMPARED} for d in live
    ]


def test_the_replay_packs_as_the_live_run_did(tmp_path):
    """ObservationPack in the same replay: every ledger line the live run wrote (which result, at
    which request, which send), in order."""
    settings = {"sol": {"onlineContextCompact": True}, "compaction": {"keepRecentTokens": 100}}
    branch = live_session(tmp_path, settings)
    (ledger,) = tmp_path.rglob("observation-pack/ledger.jsonl")
    live = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert sum(r["event"] == "placeholder" for r in live) >= 4
    _, records = replayed(branch, settings)
    keys = ("event", "id", "request", "sendNumber", "reason", "placeholderBytes")
    assert [{k: r.get(k) for k in keys} for r in records] == [{k: r.get(k) for k in keys} for r in live]
