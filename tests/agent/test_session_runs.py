"""Session-level runs: boundaries, settlement, retry and compaction (pi-host §4.4–§4.7)."""

from __future__ import annotations

import asyncio
import json

import pytest
from session_support import Harness, ScriptedHooks

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
NUDGE = {"type": "custom_message", "customType": "nudge", "content": "Say more.", "display": False}


def run(coro):
    return asyncio.run(coro)


def _requests_roles(h: Harness) -> list[list[str]]:
    return [[m["role"] for m in request["messages"]] for request in h.provider.requests]


# -- boundaries --------------------------------------------------------------------------------


def test_turn_end_continuation_with_a_hidden_custom_message(tmp_path):
    calls = []

    def turn_end(event, context):
        calls.append(event["outcome"])
        if len(calls) == 1:
            assert context["canContinue"] is False  # a final answer: nothing for the model to answer
            return {"entries": [NUDGE], "continue": True}
        return None

    hooks = ScriptedHooks(turn_end=turn_end)
    h = Harness(tmp_path, [{"text": "Done."}, {"text": "More text after nudge."}], hooks=hooks)
    run(h.session.prompt("hello"))
    assert h.entry_types()[-3:] == ["message:assistant", "custom_message", "message:assistant"]
    assert _requests_roles(h)[1][-2:] == ["assistant", "user"]
    appended = [e for e in h.events if e["type"] == "entry_appended"]
    assert [e["entry"]["type"] for e in appended] == ["custom_message"]
    # entry_appended, not message events, announce the draft (pi)
    assert h.types().count("message_start") == 4  # system, user, assistant, assistant
    assert hooks.errors == []


def test_turn_end_continuation_without_runnable_context_is_refused(tmp_path):
    hooks = ScriptedHooks(turn_end=lambda event, context: {"continue": True})
    h = Harness(tmp_path, [{"text": "final"}, {"text": "never"}], hooks=hooks)
    run(h.session.prompt("hello"))
    assert hooks.errors == [
        ("<boundary>", "turn_end", "turn_end requested continuation without runnable model context")
    ]
    assert len(h.provider.requests) == 1


def test_invalid_draft_is_discarded(tmp_path):
    bad = {"type": "context_edit", "targetId": "nope", "replacement": None}
    hooks = ScriptedHooks(turn_end=lambda event, context: {"entries": [bad], "continue": True})
    h = Harness(tmp_path, [{"text": "final"}], hooks=hooks)
    run(h.session.prompt("hello"))
    assert "context_edit" not in h.entry_types()
    assert len(h.provider.requests) == 1


def test_agent_before_settle_can_continue_once(tmp_path):
    rounds = []

    def before_settle(event, context):
        rounds.append(event["outcome"])
        return {"entries": [NUDGE], "continue": True} if len(rounds) == 1 else None

    hooks = ScriptedHooks(agent_before_settle=before_settle)
    h = Harness(tmp_path, [{"text": "first"}, {"text": "second"}], hooks=hooks)
    run(h.session.prompt("hello"))
    assert rounds == ["completed", "completed"]
    assert h.types().count("agent_start") == 2
    assert h.types().count("agent_settled") == 1
    assert h.session.messages[-1]["content"][0]["text"] == "second"


def test_work_requested_in_agent_settled_is_deferred(tmp_path):
    order = []
    h = None

    async def settled(event):
        order.append("settled")
        if len(order) == 1:
            await h.session.prompt("again")
            order.append("prompt returned")

    hooks = ScriptedHooks(agent_settled=settled)
    h = Harness(tmp_path, [{"text": "one"}, {"text": "two"}], hooks=hooks)
    run(h.session.prompt("hello"))
    # the deferred prompt runs after the settled handlers, as its own run
    assert order == ["settled", "prompt returned", "settled"]
    assert [m["content"][0]["text"] for m in h.session.messages if m["role"] == "assistant"] == ["one", "two"]
    assert h.types().count("agent_settled") == 2


def test_tool_call_block_and_tool_result_override(tmp_path):
    hooks = ScriptedHooks(
        tool_call=lambda event: (
            {"block": True, "reason": "not today"} if "rm" in event["input"]["command"] else None
        ),
        tool_result=lambda event: {"content": [{"type": "text", "text": "patched"}]},
    )
    h = Harness(tmp_path, [{"bash": "rm -rf x"}, {"bash": "echo ok"}, {"text": "end"}], hooks=hooks)
    run(h.session.prompt("go"))
    results = [m for m in h.session.messages if m["role"] == "toolResult"]
    assert results[0]["content"] == [{"type": "text", "text": "not today"}] and results[0]["isError"]
    assert results[1]["content"] == [{"type": "text", "text": "patched"}]


def test_input_transform_and_before_agent_start_message(tmp_path):
    hooks = ScriptedHooks(
        input=lambda event: {"action": "transform", "text": event["text"].upper()},
        before_agent_start=lambda event: {
            "messages": [{"customType": "ctx", "content": "extra", "display": False}]
        },
    )
    h = Harness(tmp_path, [{"text": "ok"}], hooks=hooks)
    run(h.session.prompt("hello"))
    assert h.entry_types()[-3:] == ["message:user", "custom_message", "message:assistant"]
    user = next(m for m in h.session.messages if m["role"] == "user")
    assert user["content"][0]["text"] == "HELLO"


def test_message_end_replacement_is_persisted(tmp_path):
    def message_end(event):
        message = event["message"]
        if message["role"] == "assistant":
            return {"message": {**message, "content": [{"type": "text", "text": "rewritten"}]}}
        return None

    h = Harness(tmp_path, [{"text": "original"}], hooks=ScriptedHooks(message_end=message_end))
    run(h.session.prompt("hello"))
    last = json.loads(h.file_lines()[-1])
    assert last["message"]["content"] == [{"type": "text", "text": "rewritten"}]


# -- retry -------------------------------------------------------------------------------------


def _retry_settings(max_retries: int = 3) -> dict:
    return {"retry": {"enabled": True, "maxRetries": max_retries, "baseDelayMs": 1}}


def test_transient_error_is_retried_with_the_attempt_omitted(tmp_path):
    steps = [{"bash": "echo before-retry"}, {"error": OVERLOADED}, {"text": "Recovered after retry."}]
    h = Harness(tmp_path, steps, settings=_retry_settings())
    run(h.session.prompt("Run echo before-retry"))
    types = h.types()
    assert [e["willRetry"] for e in h.events if e["type"] == "agent_end"] == [True, False]
    start = next(e for e in h.events if e["type"] == "auto_retry_start")
    assert start == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 1,
        "errorMessage": OVERLOADED,
    }
    assert types.index("auto_retry_start") < types.index("entry_appended") < types.index("auto_retry_end")
    assert next(e for e in h.events if e["type"] == "auto_retry_end") == {
        "type": "auto_retry_end",
        "success": True,
        "attempt": 1,
    }
    edit = next(e["entry"] for e in h.events if e["type"] == "entry_appended")
    assert edit["type"] == "context_edit" and edit["replacement"] is None
    # the failed attempt stays in the file but not in the context
    assert [m.get("stopReason") for m in h.session.messages if m["role"] == "assistant"] == [
        "toolUse",
        "stop",
    ]
    assert h.types()[-1] == "agent_settled"


def test_stream_cut_midway_is_retried(tmp_path):
    cut = {
        "content": [{"type": "text", "text": "half an ans"}],
        "stopReason": "error",
        "errorMessage": "terminated",
    }
    h = Harness(tmp_path, [cut, {"text": "whole answer"}], settings=_retry_settings())
    run(h.session.prompt("hi"))
    assert h.session.messages[-1]["content"] == [{"type": "text", "text": "whole answer"}]
    assert [m["role"] for m in h.provider.requests[1]["messages"]][-1] == "user"


def test_retries_run_out(tmp_path):
    h = Harness(tmp_path, [{"error": OVERLOADED}] * 3, settings=_retry_settings(max_retries=2))
    run(h.session.prompt("hi"))
    ends = [e for e in h.events if e["type"] == "auto_retry_end"]
    assert ends == [{"type": "auto_retry_end", "success": False, "attempt": 2, "finalError": OVERLOADED}]
    assert len(h.provider.requests) == 3


# -- compaction --------------------------------------------------------------------------------

SUMMARY = "## Goal\nTest summary"


def test_manual_compaction(tmp_path):
    h = Harness(
        tmp_path,
        [{"text": "a" * 400}, {"text": "b" * 400}, {"text": SUMMARY}],
        settings={"compaction": {"keepRecentTokens": 150}},
    )
    run(h.session.prompt("first " * 50))
    run(h.session.prompt("second " * 50))
    result = run(h.session.compact())
    assert result["summary"].startswith(SUMMARY)
    assert [e["type"] for e in h.events if e["type"].startswith("compaction")] == [
        "compaction_start",
        "compaction_end",
    ]
    entry = h.manager.get_entries()[-1]
    assert entry["type"] == "compaction" and entry["systemMessage"]["role"] == "system"
    assert h.roles()[:2] == ["system", "compactionSummary"]
    assert h.session.get_context_usage()["tokens"] is None


def test_threshold_compaction_after_a_run(tmp_path):
    settings = {"compaction": {"enabled": True, "reserveTokens": 500, "keepRecentTokens": 200}}
    steps = [{"text": "x" * 4000}, {"text": SUMMARY}, {"text": "after"}]
    h = Harness(tmp_path, steps, settings=settings, model_overrides={"context_window": 2000})
    run(h.session.prompt("write a lot"))
    kinds = [e["type"] for e in h.events]
    assert kinds[kinds.index("agent_end") + 1 : kinds.index("agent_end") + 3] == [
        "compaction_start",
        "compaction_end",
    ]
    end = next(e for e in h.events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["aborted"] is False and end["willRetry"] is False
    assert h.entry_types()[-1] == "compaction"
    run(h.session.prompt("next"))
    assert h.roles()[:2] == ["system", "compactionSummary"]


def test_overflow_error_compacts_and_retries_once(tmp_path):
    settings = {"compaction": {"enabled": True, "keepRecentTokens": 50}}
    steps = [
        {"text": "y" * 800},
        {"error": "prompt is too long: 250000 tokens > 200000 maximum"},
        {"text": SUMMARY},
        {"text": "## Original Request\nanswer"},  # the cut splits the turn: a turn-prefix summary too
        {"text": "fits now"},
    ]
    h = Harness(tmp_path, steps, settings=settings)
    run(h.session.prompt("one " * 100))
    run(h.session.prompt("two " * 100))
    end = next(e for e in h.events if e["type"] == "compaction_end")
    assert (end["reason"], end["willRetry"]) == ("overflow", True)
    assert h.session.messages[-1]["content"] == [{"type": "text", "text": "fits now"}]


def test_session_before_compact_can_supply_or_cancel(tmp_path):
    def supply(event):
        prep = event["preparation"]
        return {
            "compaction": {
                "summary": "from ext",
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": 7,
            }
        }

    steps = [{"text": "a" * 400}, {"text": "b" * 400}]
    h = Harness(
        tmp_path,
        steps,
        settings={"compaction": {"keepRecentTokens": 150}},
        hooks=ScriptedHooks(session_before_compact=supply),
    )
    run(h.session.prompt("first " * 50))
    run(h.session.prompt("second " * 50))
    result = run(h.session.compact("focus"))
    assert result["summary"] == "from ext" and result["tokensBefore"] == 7
    entry = h.manager.get_entries()[-1]
    assert entry["type"] == "compaction" and entry["fromHook"] is True

    cancelled = Harness(
        tmp_path / "c",
        steps,
        settings={"compaction": {"keepRecentTokens": 150}},
        hooks=ScriptedHooks(session_before_compact=lambda event: {"cancel": True}),
    )
    run(cancelled.session.prompt("first " * 50))
    run(cancelled.session.prompt("second " * 50))
    with pytest.raises(RuntimeError, match="Compaction cancelled"):
        run(cancelled.session.compact())
    end = [e for e in cancelled.events if e["type"] == "compaction_end"][-1]
    assert end["aborted"] is True and "result" not in end  # pi leaves it out


def test_before_agent_start_edits_system_prompt_options(tmp_path):
    def edit(event):
        options = event["systemPromptOptions"]
        options["promptGuidelines"].append("Always be kind")
        options["sections"]["plan"] = "step one"
        options["selectedTools"] = ["read", "bash"]
        return None

    h = Harness(tmp_path, [{"text": "ok"}], hooks=ScriptedHooks(before_agent_start=edit))
    run(h.session.prompt("hello"))
    system = h.session.messages[0]
    assert "- Always be kind" in system["sections"]["rules"]
    assert system["sections"]["plan"] == "<plan>\nstep one\n</plan>"
    assert [tool["name"] for tool in system["toolsAdded"]] == ["read", "bash"]
    assert h.session.get_active_tool_names() == ["read", "bash"]


def test_before_agent_start_forced_prompt_is_sent_not_stored(tmp_path):
    h = Harness(
        tmp_path,
        [{"text": "ok"}],
        hooks=ScriptedHooks(before_agent_start=lambda e: {"systemPrompt": "FORCED"}),
    )
    run(h.session.prompt("hello"))
    sent = h.provider.requests[0]["messages"][0]
    assert sent["role"] == "system" and sent["content"] == "FORCED" and "sections" not in sent
    stored = h.session.messages[0]
    assert stored["content"] == "" and "preamble" in stored["sections"]
