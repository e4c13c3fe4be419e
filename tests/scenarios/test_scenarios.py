"""pi 1.6's scenario goldens replayed through tau's session: the written file projects like pi's.

Each scenario is driven through the public session API the way pi's generator drove pi; the
written session file, projected and converted for the model, equals the golden ``.context.json``
modulo what decisions.md lets differ (timestamps, usage, durations, system-prompt section texts).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from replay import Replay, comparable, golden_context

from tau.agent.compaction import CompactionSettings, prepare_compaction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from session_support import ScriptedHooks


def _check(replay: Replay, fixtures: Path, name: str) -> None:
    assert comparable(replay.projected()) == comparable(golden_context(fixtures, name)["messages"])


async def _prompts(replay: Replay) -> None:
    for text in replay.user_texts():
        await replay.session.prompt(text)


# i-edit-write edits a file it never reads; its diff shows the original content.
FILES = {"i-edit-write": {"notes.txt": "alpha\nbeta\ngamma\n"}}


@pytest.mark.parametrize("name", ["a-plain-text", "b-parallel-tools", "i-edit-write"])
def test_plain_prompt_scenarios(pi_fixtures, tmp_path, name):
    replay = Replay(pi_fixtures, name, tmp_path, files=FILES.get(name))
    asyncio.run(_prompts(replay))
    _check(replay, pi_fixtures, name)
    assert replay.model.kinds == ["turn"] * len(replay.model.kinds)


def test_c_turn_end_continue(pi_fixtures, tmp_path):
    nudge = {"type": "custom_message", "customType": "nudge", "content": "Say more.", "display": False}
    calls: list[str] = []

    def turn_end(event, context):
        calls.append(event["messageEntryId"])
        return {"entries": [nudge], "continue": True} if len(calls) == 1 else None

    replay = Replay(pi_fixtures, "c-turn-end-continue", tmp_path, hooks=ScriptedHooks(turn_end=turn_end))
    asyncio.run(_prompts(replay))
    _check(replay, pi_fixtures, "c-turn-end-continue")
    _assert_events_match(replay, pi_fixtures, "c-turn-end-continue")
    assert [e["entry"]["type"] for e in replay.events if e["type"] == "entry_appended"] == ["custom_message"]


def _compacting(pi_fixtures, tmp_path, name: str, keep: int, cache_friendly: bool = False) -> Replay:
    """pi's compaction scenarios; pi's exact summary requests unless ``cache_friendly``."""
    settings = {
        "compaction": {
            "enabled": True,
            "reserveTokens": 1000,
            "keepRecentTokens": keep,
            "cacheFriendly": cache_friendly,
        }
    }
    replay = Replay(pi_fixtures, name, tmp_path, settings=settings, context_window=4000)
    asyncio.run(_prompts(replay))
    return replay


def _cut_points_follow_pis_algorithm(replay: Replay, keep: int) -> int:
    """Every compaction tau wrote cut where pi's algorithm cuts tau's own branch at that point."""
    entries = replay.manager.get_entries()
    settings = CompactionSettings(enabled=True, reserve_tokens=1000, keep_recent_tokens=keep)
    count = 0
    for entry in entries:
        if entry["type"] != "compaction":
            continue
        count += 1
        branch = replay.manager.get_branch(entry["parentId"])
        expected = prepare_compaction(branch, settings)
        assert expected is not None
        assert entry["firstKeptEntryId"] == expected.first_kept_entry_id
        assert entry["tokensBefore"] == expected.tokens_before
        assert entry["systemMessage"]["role"] == "system"
    return count


# pi's exact summary requests (compaction.cacheFriendly false), and tau's cache-friendly ones: the
# stored entries, and so the projected context, are pi's either way.
FRIENDLY = pytest.mark.parametrize("cache_friendly", [False, True], ids=["pi-requests", "cache-friendly"])


@FRIENDLY
def test_d_threshold_compaction(pi_fixtures, tmp_path, cache_friendly):
    replay = _compacting(pi_fixtures, tmp_path, "d-threshold-compaction", 250, cache_friendly)
    assert _cut_points_follow_pis_algorithm(replay, 250) >= 1
    kinds = [e["type"] for e in replay.events]
    assert "compaction_start" in kinds and kinds.index("compaction_start") > kinds.index("agent_end")
    _check(replay, pi_fixtures, "d-threshold-compaction")
    _assert_events_match(replay, pi_fixtures, "d-threshold-compaction")
    assert replay.model.cached and set(replay.model.cached) == {cache_friendly}


@FRIENDLY
def test_d2_compaction_split_turn_update(pi_fixtures, tmp_path, cache_friendly):
    replay = _compacting(pi_fixtures, tmp_path, "d2-compaction-split-turn-update", 200, cache_friendly)
    assert _cut_points_follow_pis_algorithm(replay, 200) >= 2
    compactions = [e for e in replay.manager.get_entries() if e["type"] == "compaction"]
    assert "**Turn Context (split turn):**" in compactions[0]["summary"]
    assert compactions[-1]["summary"].startswith("## Goal\nWrite an essay about testing, then save a report.")
    _check(replay, pi_fixtures, "d2-compaction-split-turn-update")
    _assert_events_match(replay, pi_fixtures, "d2-compaction-split-turn-update")
    assert replay.model.cached and set(replay.model.cached) == {cache_friendly}


@FRIENDLY
def test_e_tree_branch_summary(pi_fixtures, tmp_path, cache_friendly):
    settings = {"compaction": {"enabled": False, "cacheFriendly": cache_friendly}}
    replay = Replay(pi_fixtures, "e-tree-branch-summary", tmp_path, settings=settings)
    first, second, alternative = replay.user_texts()

    async def drive() -> None:
        await replay.session.prompt(first)
        await replay.session.prompt(second)
        result = await replay.session.navigate_tree(
            replay.entry_id("assistant", "Answer one."), summarize=True
        )
        assert result["cancelled"] is False and result["summaryEntry"]["type"] == "branch_summary"
        await replay.session.prompt(alternative)

    asyncio.run(drive())
    _check(replay, pi_fixtures, "e-tree-branch-summary")
    _assert_events_match(replay, pi_fixtures, "e-tree-branch-summary")
    assert replay.model.kinds == ["turn", "turn", "summary", "turn"]
    assert replay.model.cached and set(replay.model.cached) == {cache_friendly}


def test_f_labels_and_session_names(pi_fixtures, tmp_path):
    replay = Replay(pi_fixtures, "f-labels-session-info", tmp_path)
    hello, following = replay.user_texts()

    async def drive() -> None:
        session = replay.session
        await session.prompt(hello)
        session.set_session_name("Label demo")
        session.set_label(replay.entry_id("user", hello), "checkpoint")
        await session.prompt(following)
        session.set_label(replay.entry_id("assistant", "Next answer."), "answer")
        session.set_label(replay.entry_id("user", hello), None)
        session.set_session_name("Renamed\ndemo")

    asyncio.run(drive())
    _check(replay, pi_fixtures, "f-labels-session-info")
    _assert_events_match(replay, pi_fixtures, "f-labels-session-info")
    types = [e["type"] for e in replay.manager.get_entries()]
    golden = [e["type"] for e in replay.entries[1:]]
    assert types == golden
    assert replay.session.get_session_name() == "Renamed demo"


def test_g_custom_entries_and_messages(pi_fixtures, tmp_path):
    replay = Replay(pi_fixtures, "g-custom-entries", tmp_path)

    async def drive() -> None:
        session = replay.session
        await session.prompt("Start")
        session.append_custom_entry("demo-state", {"count": 1, "items": ["a", "b"]})
        note = {
            "customType": "demo-note",
            "content": "A visible note from the extension.",
            "display": True,
            "details": {"source": "gen-scenarios"},
        }
        await session.send_custom_message(note)
        trigger = {
            "customType": "demo-trigger",
            "content": [{"type": "text", "text": "Please acknowledge the note."}],
            "display": True,
        }
        await session.send_custom_message(trigger, trigger_turn=True)
        session.append_custom_entry("demo-state", {"count": 2})

    asyncio.run(drive())
    _check(replay, pi_fixtures, "g-custom-entries")
    _assert_events_match(replay, pi_fixtures, "g-custom-entries")
    types = [e["type"] for e in replay.manager.get_entries()]
    assert types == [e["type"] for e in replay.entries[1:]]


# pi's agent retry never waits a server's retry-after: tau's does unless honorRetryAfter is off (issue 22).
PI_RETRY = {"enabled": True, "maxRetries": 3, "honorRetryAfter": False}


def test_h_retry(pi_fixtures, tmp_path):
    settings = {"retry": {**PI_RETRY, "baseDelayMs": 1}}
    replay = Replay(pi_fixtures, "h-retry", tmp_path, settings=settings)
    asyncio.run(_prompts(replay))
    _check(replay, pi_fixtures, "h-retry")
    assert [e["type"] for e in replay.manager.get_entries()] == [e["type"] for e in replay.entries[1:]]
    golden_order = [
        e["type"] for e in _golden_events(pi_fixtures, "h-retry") if e["type"].startswith("auto_retry")
    ]
    assert [e["type"] for e in replay.events if e["type"].startswith("auto_retry")] == golden_order


def _golden_events(fixtures: Path, name: str) -> list[dict]:
    import json

    path = fixtures / "scenarios" / f"{name}.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_j_rpiv_todo_with_a_stand_in_tool(pi_fixtures, tmp_path):
    """rpiv-todo 2.11.0 is a third-party tool tau does not ship: a stand-in registered like an
    extension tool (pi's declaration, replaying pi's recorded results) checks the session's side:
    the extension tool is declared after the built-ins and its results persist with ``details``."""
    from tau.tools.base import ToolDefinition, ToolResult

    replay = Replay(pi_fixtures, "j-rpiv-todo", tmp_path)
    system = next(e["message"] for e in replay.entries if e.get("message", {}).get("role") == "system")
    declaration = next(tool for tool in system["toolsAdded"] if tool["name"] == "todo")
    recorded = {
        e["message"]["toolCallId"]: e["message"]
        for e in replay.entries
        if e.get("message", {}).get("role") == "toolResult"
    }

    async def execute(call_id, params, signal, on_update, ctx):
        result = recorded[call_id]
        return ToolResult(
            content=result["content"], details=result.get("details"), is_error=result["isError"]
        )

    replay.session.register_tool(
        ToolDefinition(
            name="todo",
            description=declaration["description"],
            parameters=declaration["parameters"],
            execute=execute,
            constrained_sampling=declaration.get("constrainedSampling"),
        )
    )
    asyncio.run(_prompts(replay))
    _check(replay, pi_fixtures, "j-rpiv-todo")


def _assert_events_match(replay: Replay, fixtures: Path, name: str) -> None:
    """The public events equal pi's (golden_compare's notion of equal).

    Parallel tool calls end in completion order, which is timing: runs of ``tool_execution_end``
    are compared as sets.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "modes"))
    from golden_compare import normalize_stream

    golden = _unordered_ends(normalize_stream(_golden_events(fixtures, name)))
    assert _unordered_ends(normalize_stream(replay.events)) == golden, name


def test_event_streams_match_pi(pi_fixtures, tmp_path):
    settings = {"h-retry": {"retry": {**PI_RETRY, "baseDelayMs": 20}}}
    for name in ("a-plain-text", "b-parallel-tools", "h-retry", "i-edit-write"):
        cwd = tmp_path / name
        cwd.mkdir()
        replay = Replay(pi_fixtures, name, cwd, settings=settings.get(name), files=FILES.get(name))
        asyncio.run(_prompts(replay))
        _assert_events_match(replay, pi_fixtures, name)


def _unordered_ends(events: list) -> list:
    import json

    out: list = []
    run: list = []
    for event in [*events, None]:
        if isinstance(event, dict) and event.get("type") == "tool_execution_update*":
            continue  # whether updates land before or after a parallel call's end is timing
        if isinstance(event, dict) and event.get("type") == "tool_execution_end":
            run.append(event)
            continue
        out.extend(sorted(run, key=lambda item: json.dumps(item, sort_keys=True)))
        run = []
        if event is not None:
            out.append(event)
    return out
