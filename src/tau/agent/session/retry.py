"""Retry of transient provider errors (pi-host §4.4, §4.5).

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
from collections.abc import Callable, Sequence
from typing import Any

from tau.agent.session.run_state import RunState
from tau.agent.settings import Settings
from tau.llm.overflow import is_context_overflow
from tau.llm.retry import RetryPolicy, is_retryable_error, requested_delay_ms, retry_delay_ms
from tau.llm.stream import AbortSignal
from tau.llm.types import Model

__all__ = ["Retrier", "retry_policy"]


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


def is_retryable(message: dict[str, Any], model: Model | None) -> bool:
    """Whether a failed response is worth another attempt (an overflow is compacted instead)."""
    window = model.context_window if model is not None else 0
    if is_context_overflow(message, window):
        return False
    return is_retryable_error(message)


class Retrier:
    """The attempt count and the wait of the session's automatic retry.

    Args:
        settings: where ``retry.*`` is read (at each decision: ``/settings`` may change it).
        run: the run state (an abort requested means no retry).
        emit: where ``auto_retry_*`` events go.
    """

    def __init__(self, settings: Settings, run: RunState, emit: Callable[[dict[str, Any]], None]) -> None:
        self.attempt = 0
        self._settings = settings
        self._run = run
        self._emit = emit
        self._signal: AbortSignal | None = None

    @property
    def is_retrying(self) -> bool:
        return self._signal is not None

    def abort(self) -> None:
        """Cancel a retry wait in progress.

        ``auto_retry_end`` is emitted at once, before the caller answers (pi's sleep rejects
        synchronously, so its RPC response follows the event); the waiting run then settles.
        """
        if self._signal is not None:
            self._signal.abort()
            self.finish_cancelled()

    def will_retry_after(self, messages: Sequence[Any], model: Model | None) -> bool:
        """Whether the run whose ``agent_end`` carries ``messages`` will be retried (its ``willRetry``)."""
        if self._run.abort_requested:
            return False
        policy = retry_policy(self._settings)
        if not policy.enabled or self.attempt >= policy.max_retries:
            return False
        for message in reversed(messages):
            if message.get("role") == "assistant":
                return is_retryable(message, model)
        return False

    def finish_cancelled(self) -> None:
        if self.attempt == 0:
            return
        attempt, self.attempt = self.attempt, 0
        self._emit(
            {"type": "auto_retry_end", "success": False, "attempt": attempt, "finalError": "Retry cancelled"}
        )

    def succeeded(self) -> None:
        """A response that is not an error arrived: a retry in progress worked."""
        if self.attempt > 0:
            self._emit({"type": "auto_retry_end", "success": True, "attempt": self.attempt})
            self.attempt = 0

    def give_up(self, message: dict[str, Any]) -> None:
        """The response after the last attempt is still an error."""
        if message.get("stopReason") == "error" and self.attempt > 0:
            self._emit(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self.attempt,
                    "finalError": message.get("errorMessage"),
                }
            )
            self.attempt = 0

    async def prepare(self, message: dict[str, Any], omit: Callable[[dict[str, Any]], None]) -> bool:
        """Announce the next attempt, ``omit`` the failed one, and wait; False when out of attempts
        or the wait was aborted."""
        policy = retry_policy(self._settings)
        if not policy.enabled:
            return False
        self.attempt += 1
        if self.attempt > policy.max_retries:
            self.attempt -= 1
            return False
        delay = retry_delay_ms(policy, self.attempt, requested_delay_ms(message))
        self._emit(
            {
                "type": "auto_retry_start",
                "attempt": self.attempt,
                "maxAttempts": policy.max_retries,
                "delayMs": delay,
                "errorMessage": message.get("errorMessage") or "Unknown error",
            }
        )
        omit(message)
        self._signal = signal = AbortSignal()
        try:
            if await _sleep_aborted(delay, signal):
                self.finish_cancelled()
                return False
        finally:
            self._signal = None
        return True


async def _sleep_aborted(ms: int, signal: AbortSignal) -> bool:
    """Sleep ``ms``; True when ``signal`` aborted first."""
    try:
        await asyncio.wait_for(signal.wait(), timeout=ms / 1000)
    except TimeoutError:
        return False
    return True
