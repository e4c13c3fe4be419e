"""The ``complete`` callable pi's summaries use: one-off request options and the retry policy.

pi's ``completeSummarization``: no prompt-cache writes (``cacheRetention: "none"``), the caller's
routing session id or a fresh UUIDv7, reasoning at the session's thinking level when the model
reasons, and transient errors retried per ``settings.retry`` (never an abort, never a quota error).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tau.llm.retry import RetryPolicy, is_retryable_error, retry_delay_ms
from tau.llm.stream import AbortSignal, StreamFunction, StreamOptions
from tau.llm.types import AssistantMessage, Model, TranscriptContext
from tau.session.ids import uuidv7

from .summary import Complete

__all__ = ["RetryScheduled", "summary_complete", "summary_options"]

RetryScheduled = Callable[[int, int, int, str], Awaitable[None] | None]
"""Told ``(attempt, max_attempts, delay_ms, error_message)`` before each retry's wait."""


def summary_options(
    model: Model,
    *,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    signal: AbortSignal | None = None,
    thinking_level: str | None = None,
    session_id: str | None = None,
) -> StreamOptions:
    """The stream options of a summary request."""
    reasoning = thinking_level if model.reasoning and thinking_level and thinking_level != "off" else None
    return StreamOptions(
        signal=signal,
        api_key=api_key,
        headers=dict(headers or {}),
        reasoning=reasoning,
        cache_retention="none",
        session_id=session_id or uuidv7(),
    )


async def _wait(ms: int, signal: AbortSignal | None) -> bool:
    """Sleep ``ms``; False when ``signal`` aborts first."""
    if signal is None:
        await asyncio.sleep(ms / 1000)
        return True
    if signal.aborted:
        return False
    try:
        await asyncio.wait_for(signal.wait(), timeout=ms / 1000)
    except TimeoutError:
        return True
    return False


def summary_complete(
    stream: StreamFunction,
    model: Model,
    options: StreamOptions,
    *,
    retry: RetryPolicy | None = None,
    on_retry_scheduled: RetryScheduled | None = None,
) -> Complete:
    """A :data:`~tau.agent.compaction.summary.Complete` over a provider ``stream`` function.

    Args:
        stream: the provider entry point (the session's stream function).
        model: the model that summarizes (pi: the session's current model).
        options: from :func:`summary_options`.
        retry: ``settings.retry``; ``None`` or disabled returns the first response as it is.
        on_retry_scheduled: reported before each retry's back-off.
    """

    async def complete(context: TranscriptContext) -> AssistantMessage:
        max_attempts = retry.max_retries if retry is not None and retry.enabled else 0
        attempt = 0
        while True:
            response = await stream(model, context, options).result()
            if response.get("stopReason") != "error":
                return response
            if attempt >= max_attempts or not is_retryable_error(response):
                return response
            attempt += 1
            assert retry is not None
            delay = retry_delay_ms(retry, attempt)
            if on_retry_scheduled is not None:
                scheduled: Any = on_retry_scheduled(
                    attempt, max_attempts, delay, response.get("errorMessage") or "Unknown error"
                )
                if asyncio.iscoroutine(scheduled):
                    await scheduled
            if not await _wait(delay, options.signal):
                aborted = {key: value for key, value in response.items() if key != "errorMessage"}
                aborted["stopReason"] = "aborted"
                return aborted  # type: ignore[return-value]

    return complete
