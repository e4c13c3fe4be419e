"""Issue 15: a session tau compacted with cache-friendly summaries projects, in real pi 1.6, to the
context tau projects (the golden was made by pi from the tau-written file: ``issue15_sessions.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm

DATA = Path(__file__).resolve().parent / "data" / "issue15"


def test_pi_projects_a_cache_friendly_session_as_tau_does():
    session = DATA / "cache-friendly.jsonl"
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    compactions = [e for e in entries if e["type"] == "compaction"]
    # two threshold compactions, a split turn and an update, each summary read from the cache
    assert len(compactions) == 2 and all(
        "**Turn Context (split turn):**" in c["summary"] for c in compactions
    )
    for usage in (c["usage"] for c in compactions):
        assert usage["cacheRead"] >= 0.9 * (usage["input"] + usage["cacheRead"] + usage["cacheWrite"])
    manager = SessionManager.open(str(session), str(DATA), read_only=True)
    ours = convert_to_llm(manager.build_session_context()["messages"])
    assert ours == json.loads((DATA / "cache-friendly.pi-context.json").read_text())
