"""Tree navigation, fork and new sessions (pi-host §2.8)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from session_support import Harness, ScriptedHooks

from tau.session.manager import SessionManager
from waiting import Gate


def run(coro):
    return asyncio.run(coro)


def _id(h: Harness, role: str, text: str) -> str:
    for entry in h.manager.get_entries():
        message = entry.get("message") or {}
        if message.get("role") == role and message["content"][0].get("text") == text:
            return entry["id"]
    raise KeyError(text)


def test_navigate_to_a_user_message_returns_its_text_and_branches_from_its_parent(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "other"}])
    run(h.session.prompt("first"))
    run(h.session.prompt("second"))
    result = run(h.session.navigate_tree(_id(h, "user", "second")))
    assert result == {"cancelled": False, "editorText": "second"}
    assert h.manager.get_leaf_id() == _id(h, "assistant", "one")
    assert [m["role"] for m in h.session.messages][-2:] == ["user", "assistant"]
    run(h.session.prompt("instead"))
    assert h.manager.get_entry(_id(h, "user", "instead"))["parentId"] == _id(h, "assistant", "one")


def test_navigate_with_label_and_hooks(tmp_path):
    seen = []
    hooks = ScriptedHooks(
        session_before_tree=lambda event: (
            seen.append(event["preparation"]["targetId"]) or {"label": "picked"}
        ),
        session_tree=lambda event: seen.append(("tree", event["newLeafId"])),
    )
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}], hooks=hooks)
    run(h.session.prompt("first"))
    run(h.session.prompt("second"))
    target = _id(h, "assistant", "one")
    run(h.session.navigate_tree(target))
    assert seen == [target, ("tree", h.manager.get_leaf_id())]
    assert h.manager.get_label(target) == "picked"


def test_navigate_cancelled_by_an_extension(tmp_path):
    hooks = ScriptedHooks(session_before_tree=lambda event: {"cancel": True})
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}], hooks=hooks)
    run(h.session.prompt("first"))
    run(h.session.prompt("second"))
    leaf = h.manager.get_leaf_id()
    assert run(h.session.navigate_tree(_id(h, "assistant", "one"))) == {"cancelled": True}
    assert h.manager.get_leaf_id() == leaf


def test_navigate_refused_while_streaming(tmp_path):
    gate = Gate(tmp_path)
    h = Harness(tmp_path, [{"bash": gate.command()}, {"text": "done"}])

    async def scenario():
        task = asyncio.create_task(h.session.prompt("go"))
        await asyncio.sleep(0.05)
        with pytest.raises(RuntimeError, match="Wait for the current response"):
            await h.session.navigate_tree("whatever")
        gate.open()
        await task

    run(scenario())


def test_fork_before_a_user_message_writes_a_new_file(tmp_path):
    events = []
    hooks = ScriptedHooks(
        session_shutdown=lambda event: events.append(event),
        session_start=lambda event: events.append(event),
    )
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "forked answer"}], hooks=hooks)
    run(h.session.prompt("first"))
    run(h.session.prompt("second"))
    old_file = h.manager.get_session_file()
    result = run(h.session.fork(_id(h, "user", "second")))
    assert result == {"cancelled": False, "selectedText": "second"}
    assert [e["type"] for e in events] == ["session_shutdown", "session_start"]
    assert events[1] == {"type": "session_start", "reason": "fork", "previousSessionFile": old_file}
    new_file = h.manager.get_session_file()
    assert new_file != old_file
    assert json.loads(Path(new_file).read_text().splitlines()[0])["parentSession"] == old_file
    run(h.session.prompt("again"))
    texts = [m["content"][0]["text"] for m in h.session.messages if m["role"] in ("user", "assistant")]
    assert texts == ["first", "one", "again", "forked answer"]
    assert h.session.session_id == h.manager.get_session_id()


def test_fork_at_keeps_the_entry(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}])
    run(h.session.prompt("first"))
    result = run(h.session.fork(_id(h, "assistant", "one"), position="at"))
    assert result == {"cancelled": False}
    assert [m["role"] for m in h.session.messages][-2:] == ["user", "assistant"]


def test_fork_refuses_a_non_user_entry_before(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}])
    run(h.session.prompt("first"))
    with pytest.raises(RuntimeError, match="Invalid entry ID for forking"):
        run(h.session.fork(_id(h, "assistant", "one")))


def test_new_session_starts_empty_and_records_the_selection(tmp_path):
    h = Harness(tmp_path, [{"text": "one"}, {"text": "fresh"}])
    run(h.session.prompt("first"))
    old = h.manager.get_session_file()
    assert run(h.session.new_session()) == {"cancelled": False}
    assert h.session.messages == []
    assert [e["type"] for e in h.manager.get_entries()] == ["model_change", "thinking_level_change"]
    run(h.session.prompt("hello again"))
    assert h.manager.get_session_file() != old
    reopened = SessionManager.open(old, read_only=True)
    assert len(reopened.get_entries()) == 5
