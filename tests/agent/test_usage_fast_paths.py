"""The context-usage checks that walk back from the leaf give what the full passes gave.

``_usage_is_current`` (is the last provider-reported usage still about this context?) and
``context_usage`` (pi's ``getContextUsage``) used to walk the whole branch and rebuild the
projection on every call; they now walk back from the leaf and read the session's cached
projection. The straightforward versions are kept here as the reference, and both are run on
random sessions with compactions, context edits, aborted and error replies and branch moves.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tau.agent.compaction import estimate
from tau.agent.compaction.estimate import calculate_context_tokens, estimate_projected_context_tokens
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry
from tau.session.manager import SessionManager


def _reference_usage_entry_id(projection: dict[str, Any], message_index: int) -> str | None:
    first = 0
    for projected in projection["entries"]:
        after = first + len(projected["messages"])
        if message_index < after:
            return projected["sourceEntry"].get("id")
        first = after
    return None


def _reference_usage_is_current(projection: dict[str, Any], branch: list[dict[str, Any]], index: int) -> bool:
    entry_id = _reference_usage_entry_id(projection, index)
    ids = [entry.get("id") for entry in branch]
    usage_index = ids.index(entry_id) if entry_id is not None and entry_id in ids else -1
    latest = -1
    for position in range(len(branch) - 1, -1, -1):
        if branch[position].get("type") in ("context_edit", "compaction"):
            latest = position
            break
    return usage_index > latest


def _reference_context_usage(session: AgentSession) -> dict[str, Any] | None:
    model = session.agent.state.model
    window = model.context_window
    manager = session.session_manager
    projection = manager.build_session_projection()
    branch = manager.get_branch()
    latest = next((entry for entry in reversed(branch) if entry.get("type") == "compaction"), None)
    if latest is not None:
        usable = {
            item["sourceEntry"].get("id")
            for item in projection["entries"]
            if any(
                m.get("role") == "assistant"
                and m.get("stopReason") not in ("aborted", "error")
                and calculate_context_tokens(m.get("usage") or {}) > 0
                for m in item["messages"]
            )
        }
        position = next(i for i, e in enumerate(branch) if e is latest or e.get("id") == latest.get("id"))
        if not any(entry.get("id") in usable for entry in branch[position + 1 :]):
            return {"tokens": None, "contextWindow": window, "percent": None}
    tokens = estimate_projected_context_tokens(projection, branch)["tokens"]
    return {"tokens": tokens, "contextWindow": window, "percent": tokens / window * 100}


def _assistant(rnd: random.Random, n: int) -> dict[str, Any]:
    stop = rnd.choice(["stop", "stop", "toolUse", "aborted", "error"])
    total = rnd.choice([0, 0, 50 + n, 1000 + n])
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": f"answer {n} " * rnd.randrange(1, 5)}],
        "provider": "faux",
        "model": "faux-1",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "stopReason": stop,
        "timestamp": n,
    }


def _step(manager: SessionManager, rnd: random.Random, n: int) -> None:
    action = rnd.random()
    messages = [e for e in manager.get_branch() if e["type"] == "message"]
    if action < 0.08 and messages:
        kept = rnd.choice(messages)["id"]
        manager.append_compaction(f"summary {n}", kept, 100)
    elif action < 0.14 and messages:
        target = rnd.choice(messages)
        if target["message"]["role"] in ("user", "assistant", "toolResult"):
            manager.append_context_edit(target["id"], rnd.choice([None, {"content": f"edited {n}"}]))
    elif action < 0.18 and messages:
        manager.branch(rnd.choice(messages)["id"])
    elif action < 0.22:
        manager.append_custom_message_entry("note", f"note {n}", True)
    else:
        manager.append_message({"role": "user", "content": f"question {n}", "timestamp": n})
        manager.append_message(_assistant(rnd, n))


def _faux_session() -> tuple[SessionManager, AgentSession]:
    registry = ModelRegistry()
    manager = SessionManager.in_memory("/tmp/proj")
    return manager, AgentSession(manager, Settings.in_memory(), registry, registry.find("faux", "faux-1"))


@pytest.mark.parametrize("seed", range(8))
def test_usage_checks_equal_the_full_passes(seed):
    rnd = random.Random(seed)
    manager, session = _faux_session()
    for n in range(60):
        _step(manager, rnd, n)
        projection = manager.build_session_projection()
        branch = manager.get_branch()
        for index in {0, len(projection["messages"]) - 1, rnd.randrange(len(projection["messages"]) + 2)}:
            want = _reference_usage_is_current(projection, branch, index)
            assert estimate._usage_is_current(projection, branch, index) == want
        assert session.get_context_usage() == _reference_context_usage(session)


class _EagerIds:
    """The entry ids as every refresh used to remember them at once (the reference)."""

    def __init__(self) -> None:
        self.ids: dict[int, tuple[Any, str]] = {}

    def refresh(self, projection: dict[str, Any]) -> None:
        for item in projection["entries"]:
            for message in item["messages"]:
                self.ids[id(message)] = (message, item["sourceEntry"]["id"])

    def lookup(self, message: Any, branch: list[dict[str, Any]]) -> str | None:
        found = self.ids.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        return next((e["id"] for e in reversed(branch) if e.get("type") == "message" and e.get("message") is message), None)  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_entry_ids_remembered_when_first_asked_equal_the_ones_remembered_at_each_refresh(seed):
    """Issue 17: a refresh no longer remembers every projected message's entry id at once."""
    rnd = random.Random(seed)
    manager, session = _faux_session()
    eager = _EagerIds()
    seen: list[dict[str, Any]] = []
    for n in range(80):
        action = rnd.random()
        if action < 0.3:
            eager.refresh(session._store.refresh())
        elif action < 0.5:
            message = {"role": "user", "content": f"saved {n}", "timestamp": n}
            session._store.save_message(message)  # what message_end does: append, remember
            eager.ids[id(message)] = (message, manager.get_leaf_id())
        else:
            _step(manager, rnd, n)
        projection = manager.build_session_projection()
        seen += projection["messages"]
        branch = manager.get_branch()
        for message in rnd.sample(seen, min(6, len(seen))):
            assert session._store.entry_id_of(message) == eager.lookup(message, branch)
