"""The agent-level retry waits for what the server asks (``retry-after`` / ``retry-after-ms``), capped at
``retry.maxAgentDelayMs``: a deliberate difference from pi 1.6, whose agent retry always backs off
(issue 16). The waits are recorded through a fake sleep, never measured."""

from __future__ import annotations

import asyncio
import json

import pytest
from loopback import LoopbackServer, json_reply, sse, sse_reply

from tau.agent.session import AgentSession
from tau.agent.session import retry as session_retry
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry
from tau.llm.retry import RetryPolicy, retry_delay_ms
from tau.session import SessionManager

RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit"}}


def _answer(text: str):
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return sse_reply(
        [
            sse({**body, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
            sse({**body, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            b"data: [DONE]\n\n",
        ]
    )


@pytest.fixture
def waits(monkeypatch) -> list[int]:
    """The retry sleeps the session asked for, in ms; none of them really waits."""
    asked: list[int] = []

    async def fake_sleep(ms: int, signal) -> bool:
        asked.append(ms)
        return False

    monkeypatch.setattr(session_retry, "_sleep_aborted", fake_sleep)
    return asked


def _run(agent_dir, tmp_path, replies, retry: dict) -> tuple[list[dict], dict, int]:
    with LoopbackServer(replies) as server:
        (agent_dir / "models.json").parent.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "local": {
                            "baseUrl": server.url + "/v1",
                            "api": "openai-completions",
                            "apiKey": "sk-local",
                            "models": [{"id": "m"}],
                        }
                    }
                }
            )
        )
        registry = ModelRegistry(agent_dir, env={})
        settings = Settings.in_memory(
            {"retry": {"baseDelayMs": 10, **retry}, "compaction": {"enabled": False}}
        )
        manager = SessionManager.in_memory(tmp_path)
        session = AgentSession(manager, settings, registry, registry.resolve("local/m").model, cwd=tmp_path)
        events: list[dict] = []
        session.subscribe(events.append)
        asyncio.run(asyncio.wait_for(session.prompt("hi"), 120))
        requests = len(server.captured)
    return events, session.messages[-1], requests


def _retry_starts(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "auto_retry_start"]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after": "2"}, 2000), ({"retry-after-ms": "1500"}, 1500), ({"retry-after": "0"}, 0)],
    ids=["retry-after", "retry-after-ms", "zero"],
)
def test_a_429_with_a_requested_delay_is_waited_for_then_retried(
    isolated_agent_dir, tmp_path, waits, headers, expected
):
    replies = [json_reply(429, RATE_LIMITED, headers), _answer("after the wait")]
    events, last, requests = _run(isolated_agent_dir, tmp_path, replies, {})
    assert waits == [expected]
    assert [e["delayMs"] for e in _retry_starts(events)] == [expected]
    assert last["content"] == [{"type": "text", "text": "after the wait"}] and requests == 2


def test_the_requested_delay_is_capped_at_max_agent_delay(isolated_agent_dir, tmp_path, waits):
    replies = [json_reply(429, RATE_LIMITED, {"retry-after": "600"}), _answer("ok")]
    events, _last, _ = _run(isolated_agent_dir, tmp_path, replies, {"maxAgentDelayMs": 5000})
    assert waits == [5000] and _retry_starts(events)[0]["delayMs"] == 5000


def test_without_a_requested_delay_or_with_honor_retry_after_off_the_backoff_applies(
    isolated_agent_dir, tmp_path, waits
):
    replies = [json_reply(429, RATE_LIMITED), json_reply(503, RATE_LIMITED), _answer("ok")]
    _run(isolated_agent_dir, tmp_path, replies, {})
    replies = [json_reply(429, RATE_LIMITED, {"retry-after": "2"}), _answer("ok")]
    _run(isolated_agent_dir, tmp_path, replies, {"honorRetryAfter": False})
    assert waits == [10, 20, 10]  # baseDelayMs * 2^(attempt-1), as pi


def test_retry_delay_choice():
    policy = RetryPolicy(base_delay_ms=2000, max_agent_delay_ms=60_000)
    assert [retry_delay_ms(policy, attempt) for attempt in (1, 2, 3)] == [2000, 4000, 8000]
    assert retry_delay_ms(policy, 3, requested_ms=1234.2) == 1235
    assert retry_delay_ms(policy, 1, requested_ms=-5) == 0  # an HTTP date in the past
    assert retry_delay_ms(policy, 1, requested_ms=10**9) == 60_000
    assert retry_delay_ms(RetryPolicy(honor_retry_after=False), 1, requested_ms=10) == 2000
