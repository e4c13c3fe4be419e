"""Which provider errors are worth retrying, the agent's backoff, and provider-level request retries.

Mirrors pi-ai ``utils/retry.ts`` (the transient-error and quota/billing pattern lists) and
``utils/provider-retry.ts`` (the SDK retry policy with an interruptible sleep). A context overflow
is never retryable: it needs compaction, not a second identical request.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from tau.common.dataclass import dataclass
from tau.llm.overflow import is_context_overflow, js_regex
from tau.llm.stream import AbortSignal

__all__ = [
    "DEFAULT_MAX_AGENT_RETRY_DELAY_MS",
    "RequestAborted",
    "RetryPolicy",
    "is_retryable",
    "is_retryable_error",
    "remember_requested_delay",
    "requested_delay_ms",
    "retry_delay_ms",
    "retry_provider_request",
]

DEFAULT_MAX_AGENT_RETRY_DELAY_MS = 60_000
_DEFAULT_MAX_RETRY_DELAY_MS = 60_000
_MAX_SAFE_INTEGER = 2**53 - 1


@functools.cache
def _alternation(patterns: tuple[str, ...]):
    """One compiled alternation, on first use (only an error message is matched)."""
    return js_regex("|".join(patterns))


# Subscription, quota and billing limits: they reset after hours, so retrying soon cannot help.
_NON_RETRYABLE = (
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
    "subscription_sharing_workplace_individual_usage_limit_exceeded",
    r'"code"\s*:\s*"?1308(?![0-9])',  # Zhipu/Z.ai plan limit sent as HTTP 429
)

_RETRYABLE = (
    # Load, HTTP status and server-side failures.
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    # A status code on its own, not inside a request id or a byte count.
    "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
    "service.?(?:is.?)?(?:temporarily.?)?unavailable",
    "server.?error",
    "internal.?error",
    # Gateways relaying an upstream failure.
    "provider.?returned.?(?:an.?)?error",
    "exceeded request buffer limit while retrying upstream",
    "unable to forward upstream",
    "upstream.?request.?failed",
    "upstream_stream_read_error",
    "stream was interrupted",
    "http/?2 stream failed",
    # Network, proxy and transport failures.
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "connection.?closed",
    "other side closed",
    "fetch failed",
    r"request to \S+ failed, reason:",
    "getaddrinfo",
    "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
    "connection reset by peer",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "websocket.?connection.?limit.?reached",
    # Streams that ended early.
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "stream disconnected before completion",
    "cut short after the reply had begun",
    "pending stream has been canceled",
    # A server-requested delay above the cap: the outer policy decides.
    "retry delay",
    # Explicit retry guidance in the error text.
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_usage_unavailable",
    "subscription_sharing_user_unavailable",
)


def is_retryable_error(message: Mapping[str, Any] | str) -> bool:
    """pi's ``isRetryableAssistantError``: an ``error`` whose text is transient and not a quota limit.

    A string is read as the ``errorMessage`` of an error message.
    """
    if isinstance(message, str):
        text = message
    else:
        if message.get("stopReason") != "error":
            return False
        text = message.get("errorMessage") or ""
    if not text or _alternation(_NON_RETRYABLE).search(text):
        return False
    return _alternation(_RETRYABLE).search(text) is not None


def is_retryable(message: Mapping[str, Any] | str, context_window: int | None = None) -> bool:
    """Whether the agent should retry this failed response: transient, not quota, not an overflow."""
    if is_context_overflow(message, context_window):
        return False
    return is_retryable_error(message)


@dataclass(frozen=True)
class RetryPolicy:
    """The agent's retry settings (``retry.*`` in settings.json)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_agent_delay_ms: int = DEFAULT_MAX_AGENT_RETRY_DELAY_MS
    honor_retry_after: bool = True


def retry_delay_ms(policy: RetryPolicy, attempt: int, requested_ms: float | None = None) -> int:
    """How long the agent waits before retry ``attempt`` (counting from 1), capped at ``max_agent_delay_ms``.

    The delay the server asked for (``requested_ms``, from ``retry-after`` / ``retry-after-ms``) when
    ``honor_retry_after`` and there is one; else ``base_delay_ms * 2^(attempt-1)``, pi's backoff.
    """
    if requested_ms is not None and policy.honor_retry_after:
        delay = max(0, math.ceil(requested_ms))
    else:
        delay = policy.base_delay_ms * 2 ** max(0, attempt - 1)
    return min(min(delay, _MAX_SAFE_INTEGER), policy.max_agent_delay_ms)


# The delay a server asked for, by the failed message it caused, for the agent-level retry. It is kept
# beside the message, not in it: messages are persisted exactly as pi writes them. Only the latest few
# are kept (a retry reads its message's delay at once).
_REQUESTED: OrderedDict[int, tuple[Mapping[str, Any], float]] = OrderedDict()
_REQUESTED_KEPT = 32


def remember_requested_delay(message: Mapping[str, Any], error: BaseException) -> None:
    """Note the ``retry-after`` of the provider ``error`` that ended ``message``, if it sent one."""
    for cause in _causes(error):
        is_provider, _status, headers = _status_and_headers(cause)
        delay = _requested_delay_ms(headers) if is_provider else None
        if delay is not None:
            _REQUESTED[id(message)] = (message, delay)
            while len(_REQUESTED) > _REQUESTED_KEPT:
                _REQUESTED.popitem(last=False)
            return


def requested_delay_ms(message: Mapping[str, Any]) -> float | None:
    """The delay the server asked for when it failed ``message`` (``None``: it asked for none)."""
    found = _REQUESTED.get(id(message))
    return found[1] if found is not None and found[0] is message else None


def _causes(error: BaseException) -> list[BaseException]:
    """``error`` and what it was raised from or during (a provider retry that gave up wraps the SDK's)."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


# -- provider-level retries (around the SDK call, before any stream event) --------------------


class RequestAborted(Exception):
    """The request's abort signal fired while waiting to retry."""

    def __init__(self) -> None:
        super().__init__("Request aborted")


T = TypeVar("T")


def _status_and_headers(error: BaseException) -> tuple[bool, int | None, Mapping[str, str]]:
    """``(is an HTTP/transport provider error, status, headers)`` for the anthropic and openai SDK errors."""
    names = {cls.__name__ for cls in type(error).__mro__}
    if not names & {"APIError", "APIStatusError", "APIConnectionError", "APITimeoutError"}:
        return False, None, {}
    status = getattr(error, "status_code", None)
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None) or {}
    return True, status, headers


def _should_retry(status: int | None, headers: Mapping[str, str]) -> bool:
    should = headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    return status is None or status in (408, 409, 429) or status >= 500


def _requested_delay_ms(headers: Mapping[str, str]) -> float | None:
    """The delay a server asks for: ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    delay: float | None = None
    if headers.get("retry-after-ms"):
        try:
            delay = float(headers["retry-after-ms"])
        except ValueError:
            delay = None
    if delay is None and headers.get("retry-after"):
        value = headers["retry-after"]
        try:
            delay = float(value) * 1000
        except ValueError:
            try:
                from email.utils import parsedate_to_datetime  # an HTTP date: rare, and email is heavy

                delay = parsedate_to_datetime(value).timestamp() * 1000 - time.time() * 1000
            except (TypeError, ValueError):
                delay = None
    if delay is not None and not math.isfinite(delay):
        return None
    return delay


def _server_delay_ms(headers: Mapping[str, str], max_delay_ms: int, error_text: str) -> float | None:
    delay = _requested_delay_ms(headers)
    if delay is not None and max_delay_ms > 0 and delay > max_delay_ms:
        raise RuntimeError(
            f"Server requested {-(-int(delay) // 1000)}s retry delay (max: {-(-max_delay_ms // 1000)}s). {error_text}"
        )
    return delay


async def _sleep(ms: float, signal: AbortSignal | None) -> None:
    if signal is None:
        await asyncio.sleep(max(0.0, ms) / 1000)
        return
    if signal.aborted:
        raise RequestAborted()
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait_for(asyncio.shield(waiter), timeout=max(0.0, ms) / 1000)
    except TimeoutError:
        return
    finally:
        waiter.cancel()
    raise RequestAborted()


async def retry_provider_request(
    request: Callable[[], Awaitable[T]],
    *,
    max_retries: int = 0,
    max_retry_delay_ms: int = _DEFAULT_MAX_RETRY_DELAY_MS,
    signal: AbortSignal | None = None,
    no_retry_statuses: tuple[int, ...] = (),
) -> T:
    """Call ``request`` and retry SDK errors the way the SDKs do, with a sleep the signal interrupts.

    Call the SDK with ``max_retries=0`` and wrap it in this. Retried: connection errors, 408, 409,
    429, 5xx (``x-should-retry`` wins). The delay is the server's ``retry-after(-ms)``, else 0.5 s
    doubling up to 8 s with jitter; a server delay above ``max_retry_delay_ms`` fails at once.
    """
    remaining = max_retries
    while True:
        try:
            return await request()
        except Exception as error:
            if signal is not None and signal.aborted:
                raise RequestAborted() from error
            is_provider, status, headers = _status_and_headers(error)
            if remaining <= 0 or not is_provider or not _should_retry(status, headers):
                raise
            if status is not None and status in no_retry_statuses:
                raise
            retry_index = max_retries - remaining
            remaining -= 1
            delay = _server_delay_ms(headers, max_retry_delay_ms, str(error))
            if delay is None:
                import random  # jitter for a retry: random (with hashlib) costs ~3 ms at start

                delay = min(0.5 * 2**retry_index, 8) * 1000 * (1 - random.random() * 0.25)
            await _sleep(delay, signal)
