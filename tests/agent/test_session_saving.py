"""A session file that cannot be written (issue 16): the run stops, nothing is lost, the user is told.

The disk is faked at the session store's write path (``SessionWriter.append``): from the n-th write
of a tool turn on, every write fails with ENOSPC until the test frees the disk.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from session_support import Harness

from full_disk import FullDisk
from tau.modes.inspect import main as inspect_main
from tau.session import SessionManager, SessionWriteError

# The writes of one tool turn in a new session: the first creates the file with the user message.
TURN_WRITES = ["user", "assistant-tool-call", "tool-result", "final-assistant"]


def _file_entries(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]


def _roles(entries: list[dict]) -> list[str]:
    return [e["message"]["role"] for e in entries if e["type"] == "message"]


@pytest.mark.parametrize("failing", range(1, 5), ids=TURN_WRITES)
def test_a_full_disk_at_any_write_of_a_tool_turn_stops_the_run_and_loses_nothing(
    tmp_path, monkeypatch, failing
):
    marker = tmp_path / "tool-ran"
    h = Harness(tmp_path, [{"bash": f"touch {marker}"}, {"text": "done"}, {"text": "after"}])
    disk = FullDisk(monkeypatch, failing)

    with pytest.raises(SessionWriteError) as info:
        asyncio.run(h.session.prompt("go"))
    path = h.manager.get_session_file()
    assert f"cannot write session file {path!r}: No space left on device" in str(info.value)
    assert "The session is no longer being saved" in str(info.value)
    # The run closed as an aborted run does, and no tool ran after the failed write.
    closing = [e["type"] for e in h.events if e["type"] in ("turn_end", "agent_end", "agent_settled")]
    assert closing[-3:] == ["turn_end", "agent_end", "agent_settled"]
    assert h.events[-1] == {"type": "agent_settled", "aborted": True}
    assert marker.exists() == (failing > TURN_WRITES.index("assistant-tool-call") + 1)
    # Everything that happened is in the session, in memory.
    in_memory = h.manager.get_entries()
    assert _roles(in_memory) == [m["role"] for m in h.session.messages]
    assert (
        _roles(in_memory)[: failing + 1]
        == ["system", "user", "assistant", "toolResult", "assistant"][: failing + 1]
    )
    assert h.manager.unsaved_count > 0

    # While the disk is full, a new prompt is refused before anything runs.
    requests = len(h.provider.requests)
    with pytest.raises(
        SessionWriteError, match=r"cannot run the prompt: session file .* still cannot be written"
    ):
        asyncio.run(h.session.prompt("again"))
    users = [m["content"][0]["text"] for m in h.session.messages if m["role"] == "user"]
    assert len(h.provider.requests) == requests and users == ["go"]

    # Once the disk has room, the next prompt writes what waited, in order, then runs.
    disk.full = False
    asyncio.run(h.session.prompt("again"))
    assert h.manager.unsaved_count == 0
    assert _file_entries(path) == h.manager.get_entries()
    assert inspect_main(["check", path]) == 0
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.build_session_context()["messages"] == h.manager.build_session_context()["messages"]


def test_a_file_written_before_the_failure_keeps_its_lines(tmp_path, monkeypatch):
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}])
    asyncio.run(h.session.prompt("first"))
    path = h.manager.get_session_file()
    before = Path(path).read_bytes()
    FullDisk(monkeypatch, 1)
    with pytest.raises(SessionWriteError):
        asyncio.run(h.session.prompt("second"))
    assert Path(path).read_bytes() == before  # nothing half-written
    assert _roles(h.manager.get_entries())[-2:] == ["user", "assistant"]


def test_a_write_failure_outside_a_run_is_raised_and_the_entry_kept(tmp_path, monkeypatch):
    h = Harness(tmp_path, [{"text": "one"}])
    asyncio.run(h.session.prompt("first"))
    FullDisk(monkeypatch, 1)
    with pytest.raises(SessionWriteError, match="1 entry is kept in memory"):
        h.session.set_session_name("named")
    assert h.manager.get_session_name() == "named"


def test_a_custom_message_sent_while_idle_reports_the_failed_write(tmp_path, monkeypatch):
    h = Harness(tmp_path, [{"text": "one"}])
    asyncio.run(h.session.prompt("first"))
    FullDisk(monkeypatch, 1)
    with pytest.raises(SessionWriteError, match="no longer being saved"):
        asyncio.run(h.session.send_custom_message({"customType": "note", "content": "kept"}))
    assert h.manager.get_entries()[-1]["type"] == "custom_message" and h.manager.unsaved_count == 1
