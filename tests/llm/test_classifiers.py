"""Retry and overflow classifiers, table-driven with the error texts pi-ai's sources quote."""

from __future__ import annotations

import asyncio

import pytest

from tau.llm.overflow import is_context_overflow, is_recoverable_length
from tau.llm.retry import (
    RetryPolicy,
    is_retryable,
    is_retryable_error,
    retry_delay_ms,
    retry_provider_request,
)
from tau.llm.stream import AbortSignal


def error(text, provider="anthropic"):
    return {
        "role": "assistant",
        "stopReason": "error",
        "errorMessage": text,
        "provider": provider,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }


OVERFLOWS = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    "Your input exceeds the context window of this model",
    "Requested token count exceeds the model's maximum context length of 131072 tokens",
    "litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window exceeded for given call.",
    "Input length (265330) exceeds model's maximum context length (262144).",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
    "Please reduce the length of the messages or completion",
    "This endpoint's maximum context length is 128000 tokens. However, you requested about 140000 tokens",
    "Input length 300000 exceeds the maximum allowed input length of 262144 tokens.",
    "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
    "the request exceeds the available context size, try increasing it",
    "tokens to keep from the initial prompt is greater than the context length",
    "prompt token count of 140000 exceeds the limit of 128000",
    'github-copilot API error (413): {"message":"failed to parse request","code":""}',
    "invalid params, context window exceeds limit",
    "Your request exceeded model token limit: 262144 (requested: 300000)",
    "Prompt has 140,000 tokens, but the configured context size is 131,072 tokens",
    "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
    '{"code":"1261","message":"Prompt too long"}',
    '{"code":"1261","message":"Prompt exceeds max length"}',
    "Range of input length should be [1, 129024]",
    "prompt too long; exceeded max context length by 1200 tokens",
    "model_context_window_exceeded",
    "context_length_exceeded",
    "413 Request Entity Too Large",
]

NOT_OVERFLOWS = [
    # pi excludes Bedrock throttling only in its formatted shape ("Throttling error: ..."), not the raw one.
    "Throttling error: Too many tokens, please wait before trying again.",
    "429 rate limit: too many tokens per minute",
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "Request failed: body of 413 bytes was rejected",
    "Connection error.",
]


@pytest.mark.parametrize("text", OVERFLOWS)
def test_overflow_texts(text):
    assert is_context_overflow(error(text))
    assert is_context_overflow(text)
    assert not is_retryable(error(text))


@pytest.mark.parametrize("text", NOT_OVERFLOWS)
def test_not_overflow_texts(text):
    assert not is_context_overflow(error(text))


def test_cerebras_bodyless_overflow_only_for_cerebras():
    assert is_context_overflow(error("400 status code (no body)", provider="cerebras"))
    assert not is_context_overflow(error("400 status code (no body)", provider="openai"))


def test_silent_and_length_overflow_need_the_window():
    stop = {"stopReason": "stop", "usage": {"input": 100, "cacheRead": 150_000, "output": 5}}
    assert is_context_overflow(stop, 128_000)
    assert not is_context_overflow(stop)
    full = {"stopReason": "length", "usage": {"input": 127_000, "cacheRead": 0, "output": 0}}
    assert is_context_overflow(full, 128_000)
    assert not is_context_overflow(dict(full, usage={"input": 100_000, "cacheRead": 0, "output": 0}), 128_000)
    assert is_recoverable_length({"stopReason": "length", "usage": {"output": 100}}, 16_384)
    assert not is_recoverable_length({"stopReason": "length", "usage": {"output": 16_384}}, 16_384)


RETRYABLE = [
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "429 Too Many Requests",
    "Rate limit reached for requests",
    "503 Service Unavailable",
    "The service is temporarily unavailable",
    "502 Bad Gateway",
    "Internal server error",
    "Provider returned error",
    "The upstream provider returned an error",
    "fetch failed",
    "read ECONNRESET",
    "connect ETIMEDOUT 1.2.3.4:443",
    "socket hang up",
    "Request timed out.",
    "terminated",
    "Connection error.",
    '{"type":"error","error":{"type":"api_error","message":"Connection closed."}}',
    "Anthropic stream ended before message_stop",
    "stream disconnected before completion: stream closed before response.completed",
    "Server requested 120s retry delay (max: 60s).",
    "An error occurred while processing your request. You can retry your request.",
    "ResourceExhausted: too busy",
]

NOT_RETRYABLE = [
    "429 You exceeded your current quota: insufficient_quota",
    "Monthly usage limit reached",
    "429 billing hard limit reached",
    '429 {"error":{"code":"1308","message":"Usage limit reached"}}',
    "400 invalid_request_error: messages.0.content is empty",
    "401 authentication_error: invalid x-api-key",
    "Request id req_4290abc failed",
    "prompt is too long: 213462 tokens > 200000 maximum",
]


@pytest.mark.parametrize("text", RETRYABLE)
def test_retryable_texts(text):
    assert is_retryable(error(text))
    assert is_retryable(text)


@pytest.mark.parametrize("text", NOT_RETRYABLE)
def test_not_retryable_texts(text):
    assert not is_retryable(error(text))


def test_only_error_messages_are_retryable():
    assert not is_retryable_error(dict(error("overloaded"), stopReason="aborted"))
    assert not is_retryable_error(dict(error(""), stopReason="error"))


def test_retry_delay_doubles_and_caps():
    policy = RetryPolicy(base_delay_ms=2000, max_agent_delay_ms=60_000)
    assert [retry_delay_ms(policy, n) for n in (1, 2, 3, 6, 60)] == [2000, 4000, 8000, 60_000, 60_000]


class APIStatusError(Exception):
    """Shaped like the SDKs' status error (matched by class name)."""

    def __init__(self, status, headers=None):
        super().__init__(f"{status} error")
        self.status_code = status
        self.response = type("R", (), {"headers": headers or {}})()


def test_provider_request_retries_transient_statuses_then_gives_up():
    calls = []

    async def request():
        calls.append(1)
        raise APIStatusError(503, {"retry-after-ms": "1"})

    with pytest.raises(APIStatusError):
        asyncio.run(retry_provider_request(request, max_retries=2))
    assert len(calls) == 3

    calls.clear()

    async def bad_request():
        calls.append(1)
        raise APIStatusError(400)

    with pytest.raises(APIStatusError):
        asyncio.run(retry_provider_request(bad_request, max_retries=2))
    assert len(calls) == 1


def test_provider_request_refuses_a_long_server_delay_and_honours_abort():
    async def slow():
        raise APIStatusError(429, {"retry-after": "120"})

    with pytest.raises(RuntimeError, match=r"Server requested 120s retry delay \(max: 60s\)"):
        asyncio.run(retry_provider_request(slow, max_retries=1))

    async def scenario():
        signal = AbortSignal()

        async def failing():
            asyncio.get_running_loop().call_later(0.01, signal.abort)
            raise APIStatusError(500, {"retry-after": "30"})

        await retry_provider_request(failing, max_retries=1, signal=signal, max_retry_delay_ms=0)

    from tau.llm.retry import RequestAborted

    with pytest.raises(RequestAborted):
        asyncio.run(scenario())
