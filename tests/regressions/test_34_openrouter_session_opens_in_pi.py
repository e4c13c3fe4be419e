"""Issue 34: a tau session through OpenRouter keeps Claude's reasoning as pi keeps it, real pi 1.6
continues it sending that reasoning back, and tau continues it with the same request.

The goldens were made with the tau CLI and real pi (``issue34_sessions.py``); this test runs only
tau, against a loopback server standing in for OpenRouter.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import issue34_sessions as scenario
import pytest

pytest.importorskip("openai")

PI = json.loads(scenario.PI_CONTINUED.read_text())
ENTRIES = [json.loads(line) for line in scenario.SESSION.read_text().splitlines()]


def _assistants(entries):
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]


def test_tau_stores_openrouter_reasoning_as_pi_stores_it():
    replies = _assistants(ENTRIES)
    assert len(replies) == 2
    for reply, (thought, signature) in zip(
        replies, [("Run it.", "EqQBCkYIBxgCKkB"), ("It printed hi.", "EqQBCkYIBxgCKkC")], strict=True
    ):
        thinking = reply["content"][0]
        assert (thinking["type"], thinking["thinking"]) == ("thinking", thought)
        details = json.loads(thinking["thinkingSignature"])
        assert details == [
            {
                "type": "reasoning.text",
                "text": thought,
                "format": "anthropic-claude-v1",
                "index": 0,
                "signature": signature,
            }
        ]
        assert reply["usage"]["cost"]["totalFromProvider"] is True


def test_pi_continues_the_session_sending_the_reasoning_back():
    request = PI["request"]
    sent = [m["reasoning_details"] for m in request["messages"] if m["role"] == "assistant"]
    stored = [json.loads(r["content"][0]["thinkingSignature"]) for r in _assistants(ENTRIES)]
    assert sent == stored
    assert json.dumps(request).count('"cache_control"') == 3
    assert [e["message"]["role"] for e in PI["appended"]] == ["system", "user", "assistant"]
    assert PI["appended"][-1]["message"]["stopReason"] == "stop"


def test_tau_continues_the_session_with_pi_s_request():
    with tempfile.TemporaryDirectory() as scratch:
        requests, appended = scenario.continue_in(scenario.TAU, scenario.SESSION, Path(scratch))
    assert len(requests) == 1
    ours, pis = requests[0], PI["request"]
    # The system prompt is each program's own ("running inside tau" / "inside pi"); all else is pi's.
    assert (
        ours["messages"][0]["content"][0]["cache_control"]
        == pis["messages"][0]["content"][0]["cache_control"]
    )
    assert ours["messages"][1:] == pis["messages"][1:]
    assert {k: v for k, v in ours.items() if k != "messages"} == {
        k: v for k, v in pis.items() if k != "messages"
    }
    # tau's system prompt names where tau is installed, so a checkout other than the one that wrote
    # the golden records a system message first, as pi did when it continued the session.
    roles = [e["message"]["role"] for e in appended]
    assert roles in (["user", "assistant"], ["system", "user", "assistant"])
