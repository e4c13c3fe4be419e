"""Retry of transient provider errors, and what happens after each low-level run (pi-host §4.4, §4.5).

After a retryable error (overloaded, rate limit, 5xx, network, ...; not quota, not an overflow):
``agent_end{willRetry: true}`` → ``auto_retry_start{attempt, maxAttempts, delayMs, errorMessage}`` →
the failed attempt (and its tool results) omitted with ``context_edit … null`` entries
(``entry_appended``) → an abortable sleep → the agent continues. The sleep is the server's
``retry-after`` / ``retry-after-ms`` when the error carried one (beyond pi, whose agent retry always
backs off; ``retry.honorRetryAfter: false`` restores that), else ``baseDelayMs * 2^(attempt-1)``;
both capped at ``maxAgentDelayMs``. The next non-error response emits ``auto_retry_end{success: true}``; running out emits
``auto_retry_end{success: false, finalError}``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tau.llm.overflow import is_context_overflow
from tau.llm.retry import RetryPolicy, is_retryable_error, requested_delay_ms, retry_delay_ms
from tau.llm.stream import AbortSignal

__all__ = ["RetryMixin", "retry_policy"]


def retry_policy(settings: Any) -> RetryPolicy:
    """``settings.retry.*`` as a :class:`~tau.llm.retry.RetryPolicy`."""
    block = settings.get("retry") or {}
    return RetryPolicy(
        enabled=bool(block.get("enabled", True)),
        max_retries=int(block.get("maxRetries", 3)),
        base_delay_ms=int(block.get("baseDelayMs", 2000)),
        max_agent_delay_ms=int(block.get("maxAgentDelayMs", 60_000)),
        honor_retry_after=bool(block.get("honorRetryAfter", True)),
    )


class RetryMixin:
    """The retry state and the post-run decision of :class:`~tau.agent.session.AgentSession`."""

    # state of the session these methods set (declared with its type in AgentSession.__init__)
    _last_assistant: dict[str, Any] | None

    def _init_retry(self: Any) -> None:
        self._retry_attempt = 0
        self._retry_signal: AbortSignal | None = None
        self._failed_response: dict[str, Any] | None = None

    @property
    def retry_attempt(self: Any) -> int:
        return self._retry_attempt

    @property
    def is_retrying(self: Any) -> bool:
        return self._retry_signal is not None

    def abort_retry(self: Any) -> None:
        """Cancel a retry wait in progress.

        ``auto_retry_end`` is emitted at once, before the caller answers (pi's sleep rejects
        synchronously, so its RPC response follows the event); the waiting run then settles.
        """
        if self._retry_signal is not None:
            self._retry_signal.abort()
            self._finish_cancelled_retry()

    def _is_retryable(self: Any, message: dict[str, Any]) -> bool:
        model = self.agent.state.model
        window = model.context_window if model is not None else 0
        if is_context_overflow(message, window):
            return False
        return is_retryable_error(message)

    def _will_retry_after(self: Any, event: dict[str, Any]) -> bool:
        if self._run.abort_requested:
            return False
        policy = retry_policy(self._settings)
        if not policy.enabled or self._retry_attempt >= policy.max_retries:
            return False
        for message in reversed(event["messages"]):
            if message.get("role") == "assistant":
                return self._is_retryable(message)
        return False

    def _finish_cancelled_retry(self: Any) -> None:
        if self._retry_attempt == 0:
            return
        attempt, self._retry_attempt = self._retry_attempt, 0
        self._bus.emit(
            {"type": "auto_retry_end", "success": False, "attempt": attempt, "finalError": "Retry cancelled"}
        )

    async def _prepare_retry(self: Any, message: dict[str, Any]) -> bool:
        policy = retry_policy(self._settings)
        if not policy.enabled:
            return False
        self._retry_attempt += 1
        if self._retry_attempt > policy.max_retries:
            self._retry_attempt -= 1
            return False
        delay = retry_delay_ms(policy, self._retry_attempt, requested_delay_ms(message))
        self._bus.emit(
            {
                "type": "auto_retry_start",
                "attempt": self._retry_attempt,
                "maxAttempts": policy.max_retries,
                "delayMs": delay,
                "errorMessage": message.get("errorMessage") or "Unknown error",
            }
        )
        self._store.omit_attempt(message)
        self._retry_signal = signal = AbortSignal()
        try:
            if await _sleep_aborted(delay, signal):
                self._finish_cancelled_retry()
                return False
        finally:
            self._retry_signal = None
        return True

    async def _handle_post_agent_run(self: Any) -> bool:
        """After a low-level run: whether to continue (retry, overflow recovery, queued messages)."""
        message, self._run.last_assistant = self._run.last_assistant, None
        if self._run.abort_requested:
            self._finish_cancelled_retry()
            return False
        if message is None:
            return self.agent.has_queued_messages()
        if self._is_retryable(message) and await self._prepare_retry(message):
            if self._run.abort_requested:
                self._finish_cancelled_retry()
            self._failed_response = message
            return not self._run.abort_requested
        if self._run.abort_requested:
            self._finish_cancelled_retry()
            return False
        if message.get("stopReason") == "error" and self._retry_attempt > 0:
            self._bus.emit(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self._retry_attempt,
                    "finalError": message.get("errorMessage"),
                }
            )
            self._retry_attempt = 0
        if await self._check_compaction(message):
            return not self._run.abort_requested
        return not self._run.abort_requested and self.agent.has_queued_messages()


async def _sleep_aborted(ms: int, signal: AbortSignal) -> bool:
    """Sleep ``ms``; True when ``signal`` aborted first."""
    try:
        await asyncio.wait_for(signal.wait(), timeout=ms / 1000)
    except TimeoutError:
        return False
    return True
