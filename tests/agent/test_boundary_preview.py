"""The boundary's context preview built from the cached projection equals the one built from scratch.

``turn_end`` / ``agent_before_settle`` handlers see the session's projection with the drafts so far
applied, rebuilt after every handler. tau extends the session's cached projection for drafts that
only append (custom entries and custom messages) instead of copying the branch into an in-memory
session each time; other drafts take the full path. Both must give what the full path gives: the
same entries and messages, only the drafts' fresh ids and timestamps differ.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry
from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm

_VARYING = ("id", "parentId", "timestamp")


def _session() -> AgentSession:
    registry = ModelRegistry()
    manager = SessionManager.in_memory("/tmp/proj")
    return AgentSession(manager, Settings.in_memory(), registry, registry.find("faux", "faux-1"))


def _append_turn(manager: SessionManager, rnd: random.Random, n: int) -> None:
    manager.append_message({"role": "user", "content": [{"type": "text", "text": f"q{n}"}], "timestamp": n})
    kind = rnd.random()
    if kind < 0.2:
        manager.append_custom_message_entry("note", f"note {n}", rnd.random() < 0.5)
    elif kind < 0.3:
        manager.append_custom_entry("state", {"n": n})
    elif kind < 0.4:
        manager.append_model_change("faux", "faux-1")
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": f"a{n}"}],
            "provider": "faux",
            "model": "faux-1",
            "stopReason": "stop",
            "timestamp": n,
        }
    )


def _draft(rnd: random.Random, n: int, manager: SessionManager) -> dict[str, Any]:
    kind = rnd.random()
    if kind < 0.4:
        return {"type": "custom", "customType": "loop", "data": {"n": n}}
    if kind < 0.8:
        return {
            "type": "custom_message",
            "customType": "loop:continue",
            "content": f"go on {n}",
            "display": rnd.random() < 0.5,
            "details": {"n": n} if rnd.random() < 0.5 else None,
        }
    target = rnd.choice([e for e in manager.get_branch() if e["type"] == "message"])
    return {"type": "context_edit", "targetId": target["id"], "replacement": None}


def _normalized_entry(entry: dict[str, Any], fresh: set[str]) -> dict[str, Any]:
    if entry.get("id") in fresh:
        return {key: value for key, value in entry.items() if key not in _VARYING}
    return entry


def _normalized(context: dict[str, Any], fresh: set[str]) -> dict[str, Any]:
    def message(m: dict[str, Any]) -> dict[str, Any]:
        # The test's own messages carry small timestamps; entries made now (drafts), the clock's.
        fresh = (m.get("timestamp") or 0) > 10**12
        return {k: v for k, v in m.items() if k != "timestamp"} if fresh else m

    return {
        "entries": [
            {
                "sourceEntry": _normalized_entry(item["sourceEntry"], fresh),
                "messages": list(map(message, item["messages"])),
            }
            for item in context["contextEntries"]
        ],
        "messages": list(map(message, context["contextMessages"])),
        "llm": list(map(message, context["llmMessages"])),
        "canContinue": context["canContinue"],
    }


def _from_scratch(session: AgentSession, drafts: list[dict[str, Any]]) -> dict[str, Any]:
    projection = session._boundaries.preview_manager(drafts).build_session_projection()
    llm = convert_to_llm(projection["messages"])
    return {
        "contextEntries": projection["entries"],
        "contextMessages": projection["messages"],
        "llmMessages": llm,
        "canContinue": session._boundaries.context([], "turn_end")["canContinue"] if not drafts else None,
    }


@pytest.mark.parametrize("seed", range(6))
def test_preview_equals_the_full_build_after_appends_and_drafts(seed):
    rnd = random.Random(seed)
    session = _session()
    manager = session.session_manager
    known = {entry["id"] for entry in manager.get_branch()}
    for n in range(25):
        _append_turn(manager, rnd, n)
        session._store.refresh()
        drafts = [_draft(rnd, n * 10 + k, manager) for k in range(rnd.randrange(4))]
        known |= {entry["id"] for entry in manager.get_branch()}
        fast = session._boundaries.context(drafts, "turn_end")
        slow = _from_scratch(session, drafts)
        fresh_fast = {i["sourceEntry"]["id"] for i in fast["contextEntries"]} - known
        fresh_slow = {i["sourceEntry"]["id"] for i in slow["contextEntries"]} - known
        got, want = _normalized(fast, fresh_fast), _normalized(slow, fresh_slow)
        if not drafts:
            assert got == want
        else:
            want["canContinue"] = got["canContinue"]
            assert got == want
        # The preview's lists are the caller's: changing them must not reach the next preview.
        fast["contextMessages"].append({"role": "user", "content": "stray"})
        fast["contextEntries"].clear()
        fast["llmMessages"].clear()
        if rnd.random() < 0.1:  # an edit of the real session: the cached projection is rebuilt
            target = rnd.choice([e for e in manager.get_branch() if e["type"] == "message"])
            manager.append_context_edit(target["id"], None)
    final = session._boundaries.context([], "turn_end")
    assert _normalized(final, set()) == _normalized(_from_scratch(session, []), set())


def test_invalid_appending_draft_reports_what_the_full_build_reports():
    session = _session()
    session.session_manager.append_message({"role": "user", "content": "q", "timestamp": 1})
    broken = [{"type": "custom_message", "content": "no custom type"}]
    with pytest.raises(ValueError) as fast:
        session._boundaries.context(broken, "turn_end")
    with pytest.raises(ValueError) as slow:
        session._boundaries.preview_manager(broken)
    assert str(fast.value) == str(slow.value)
