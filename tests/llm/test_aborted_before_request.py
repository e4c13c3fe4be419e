"""Issue 22, item 1: a request whose signal is already aborted is never made, by any provider.

pi checks the signal before any provider work (credentials, SDK, scripted steps) and records an
aborted message with no content, zero usage and ``This operation was aborted`` (the CLI-level golden
is ``tests/regressions/data/pi22/abort-during-bash.json``).
"""

from __future__ import annotations

import asyncio

import pytest
from loopback import LoopbackServer, run_stream, user

from tau.llm import registry
from tau.llm.catalog import FAUX_MODEL
from tau.llm.providers.faux import FauxProvider
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.types import Model

pytest.importorskip("anthropic")
pytest.importorskip("openai")

PI_KEYS = ["role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"]
ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def aborted() -> StreamOptions:
    signal = AbortSignal()
    signal.abort()
    return StreamOptions(signal=signal, api_key="test-key")


def assert_pi_aborted(events: list, message: dict) -> None:
    assert [event["type"] for event in events] == ["error"]
    assert events[0]["reason"] == "aborted"
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "This operation was aborted")
    assert message["content"] == []
    assert message["usage"]["totalTokens"] == 0 and message["usage"]["cost"] == ZERO_COST
    assert list(message) == [*PI_KEYS, "durationMs"]


def test_faux_uses_no_step_and_counts_no_call():
    provider = FauxProvider([{"text": "kept for the next call"}])
    events, message = run_stream(provider.stream, FAUX_MODEL, {"messages": [user("hi")]}, aborted())
    assert_pi_aborted(events, message)
    assert provider.pending == 1 and provider.call_count == 0 and provider.requests == []


def test_exhausted_faux_script_says_aborted_not_no_more_responses():
    events, message = run_stream(FauxProvider([]).stream, FAUX_MODEL, {"messages": [user("hi")]}, aborted())
    assert_pi_aborted(events, message)


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-responses", "openai-completions"])
def test_sdk_providers_send_nothing(api):
    with LoopbackServer() as server:
        model = Model(id="m", provider="custom", api=api, base_url=server.url)
        events, message = run_stream(registry.stream, model, {"messages": [user("hi")]}, aborted())
        assert server.captured == []
    assert_pi_aborted(events, message)


def test_the_registry_checks_before_credentials(tmp_path):
    """Even a provider without a key is not asked for one: the request is simply not made."""
    model = Model(id="claude-x", provider="anthropic", api="anthropic-messages")
    events, message = run_stream(
        registry.ModelRegistry(tmp_path, env={}).stream, model, {"messages": []}, aborted()
    )
    assert_pi_aborted(events, message)


def test_an_abort_during_the_request_still_says_request_was_aborted():
    """Only a request that never started gets pi's DOMException text; one cut short keeps its own."""

    async def scenario():
        signal = AbortSignal()
        provider = FauxProvider([{"text": "x" * 200}])
        stream = provider.stream(FAUX_MODEL, {"messages": [user("hi")]}, StreamOptions(signal=signal))
        async for event in stream:
            if event["type"] == "text_delta":
                signal.abort()
        return await stream.result()

    message = asyncio.run(scenario())
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "Request was aborted")
