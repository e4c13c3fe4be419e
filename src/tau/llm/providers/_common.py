"""What the three SDK adapters share: running a request as a task, abort, error text, token limits.

The adapters follow pi-ai's ``streamSimple`` entry points: they take a thinking level
(``StreamOptions.reasoning``) and derive the output cap and thinking budget themselves.

Error text follows what pi's JavaScript SDKs produce, because the retry and context-overflow
classifiers match on it: ``"<status> <body>"`` for Anthropic (the whole JSON body, compact),
``"<status>: <error object>"`` or ``"<prefix> (<status>): ..."`` for OpenAI.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from tau.common import jsjson
from tau.common.jsstr import js_len
from tau.llm.builder import MessageBuilder, aborted_before_request
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.transcript import system_message_text
from tau.llm.types import Model

__all__ = [
    "ProviderError",
    "adjust_max_tokens_for_thinking",
    "apply_payload_hook",
    "call_with_body",
    "clamp_max_tokens_to_context",
    "clamp_thinking_level",
    "error_text",
    "event_dict",
    "has_header",
    "http_error_message",
    "idle_bounded",
    "import_sdk",
    "report_response",
    "run_request",
    "timeout_error",
    "within_idle",
]

T = TypeVar("T")

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_ANSWER_TOKENS = 1024
_CONTEXT_SAFETY_TOKENS = 4096
_CONTEXT_SAFETY_RATIO = 0.15
_MIN_OUTPUT_WITH_RATIO_MARGIN = 32768
_CHARS_PER_TOKEN = 3.5
_IMAGE_CHARS = 4800
_MAX_ERROR_BODY_CHARS = 4000


class ProviderError(Exception):
    """A failure the adapter detected itself (stream ended early, bad stop reason, ...)."""


def _idle_seconds(options: StreamOptions | None) -> float | None:
    idle = options.idle_timeout_ms if options is not None else None
    return idle / 1000 if idle else None


def _seconds_text(seconds: float) -> str:
    return f"{seconds:g} s"


async def within_idle(awaitable: Awaitable[T], options: StreamOptions | None) -> T:
    """Await the response (its headers) within ``options.idle_timeout_ms``.

    Raises:
        ProviderError: ``Request timed out: no response from the provider in N s (httpIdleTimeoutMs)``
            (retryable: the agent's retry policy applies).
    """
    seconds = _idle_seconds(options)
    if seconds is None:
        return await awaitable
    try:
        async with asyncio.timeout(seconds):
            return await awaitable
    except TimeoutError:
        raise ProviderError(
            f"Request timed out: no response from the provider in {_seconds_text(seconds)} (httpIdleTimeoutMs)"
        ) from None


async def idle_bounded(stream: AsyncIterable[T], options: StreamOptions | None) -> AsyncIterator[T]:
    """The events of ``stream``, each within ``options.idle_timeout_ms`` of the one before.

    A provider that stops sending mid-stream (the connection open, nothing on it) would otherwise
    be waited on for good.

    Raises:
        ProviderError: ``Stream timed out: the provider sent nothing for N s (httpIdleTimeoutMs)``
            (retryable).
    """
    seconds = _idle_seconds(options)
    iterator = stream.__aiter__()
    while True:
        try:
            if seconds is None:
                item = await iterator.__anext__()
            else:
                async with asyncio.timeout(seconds):
                    item = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise ProviderError(
                f"Stream timed out: the provider sent nothing for {_seconds_text(seconds or 0)} (httpIdleTimeoutMs)"
            ) from None
        yield item


Request = Callable[[MessageBuilder], Awaitable[None]]


def run_request(model: Model, options: StreamOptions | None, request: Request) -> AssistantMessageEventStream:
    """Start ``request`` in a task and return the builder's stream at once.

    The task never raises into the caller: an exception ends the stream with an ``error`` event,
    and an abort through ``options.signal`` cancels the task (closing the HTTP stream) and ends it
    with ``stopReason: "aborted"`` and ``Request was aborted``. A request whose signal is already
    aborted is not started at all (see :func:`~tau.llm.builder.aborted_before_request`).
    """
    signal = options.signal if options else None
    aborted = aborted_before_request(model, signal)
    if aborted is not None:
        return aborted
    builder = MessageBuilder(model)
    task = asyncio.get_running_loop().create_task(_guarded(builder, signal, request))
    if signal is not None:
        remove = signal.add_callback(task.cancel)
        task.add_done_callback(lambda _task: remove())
    return builder.stream


async def _guarded(builder: MessageBuilder, signal: Any, request: Request) -> None:
    def aborted() -> bool:
        return bool(signal is not None and signal.aborted)

    try:
        if aborted():
            raise asyncio.CancelledError
        await request(builder)
        if aborted() and not builder.finished:
            builder.abort()
    except asyncio.CancelledError:
        builder.abort()
        if not aborted():
            raise  # cancelled from outside: still end the stream, then let the cancellation through
    except Exception as exc:  # boundary: a provider never raises once started
        if aborted():
            builder.abort()
        else:
            from tau.llm.retry import remember_requested_delay

            remember_requested_delay(builder.fail(error_text(exc)), exc)


async def import_sdk(name: str) -> Any:
    """Import a provider SDK without blocking the event loop (the SDKs take seconds to import)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        return module
    # In a thread; a concurrent import of the same module waits on importlib's module lock.
    return await asyncio.to_thread(importlib.import_module, name)


async def apply_payload_hook(
    options: StreamOptions | None, params: dict[str, Any], model: Model
) -> dict[str, Any]:
    """``options.on_payload`` may inspect or replace the request body (pi ``onPayload``)."""
    if options is None or options.on_payload is None:
        return params
    result = options.on_payload(params, model)
    if inspect.isawaitable(result):
        result = await result
    return params if result is None else result


async def report_response(options: StreamOptions | None, response: Any) -> None:
    """Tell ``options.on_response`` the HTTP status and headers (pi ``onResponse``)."""
    if options is None or options.on_response is None or response is None:
        return
    result = options.on_response(response.status_code, dict(response.headers.items()))
    if inspect.isawaitable(result):
        await result


def call_with_body(method: Callable[..., Any], params: Mapping[str, Any], **extra: Any) -> Any:
    """Call an SDK ``create`` with ``params`` as the request body.

    Fields the SDK's signature knows go as keyword arguments; the others (newer API fields) go
    through ``extra_body``, so the JSON that goes out is ``params`` whatever the SDK version.
    """
    known = inspect.signature(method).parameters
    kwargs = {key: value for key, value in params.items() if key in known and key != "extra_body"}
    rest = {key: value for key, value in params.items() if key not in kwargs}
    if rest:
        kwargs["extra_body"] = rest
    return method(**kwargs, **extra)


def event_dict(event: Any) -> dict[str, Any]:
    """A streamed SDK event as the JSON the server sent.

    Without serializer warnings: an item shape newer (or older) than the SDK's models, such as a
    Responses ``web_search_call`` action the SDK does not know, is kept as sent, and pydantic's
    "serialized value may not be as expected" blocks would only land on the user's terminal.
    """
    to_dict = getattr(event, "to_dict", None)
    if to_dict is None:
        return dict(event)
    try:
        return to_dict(warnings=False)
    except TypeError:  # an SDK whose to_dict has no ``warnings`` parameter
        return to_dict()


def has_header(headers: Mapping[str, str] | None, name: str) -> bool:
    wanted = name.lower()
    return any(key.lower() == wanted and value and value.strip() for key, value in (headers or {}).items())


# -- error text ------------------------------------------------------------------------------


def http_error_message(status: int | None, body: Any) -> str:
    """The JavaScript SDKs' ``APIError`` message: ``"<status> <message or JSON body>"``."""
    if isinstance(body, Mapping) and isinstance(body.get("message"), str) and body["message"]:
        text: str | None = body["message"]
    elif isinstance(body, Mapping | list) and body:
        text = jsjson.dumps_str(body)
    elif isinstance(body, str) and body.strip():
        text = body.strip()
    else:
        text = None
    if status and text:
        return f"{status} {text}"
    if status:
        return f"{status} status code (no body)"
    return text or "(no status code or body)"


def error_text(exc: BaseException) -> str:
    """An exception as error text: a :class:`ProviderError` as is, others with their deepest cause."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ProviderError):
        return text
    detail = _deepest_cause(exc)
    if detail and detail not in text:
        text = f"{text}: {detail}"
    return text


_TRANSPORT_MODULES = ("httpx", "httpcore", "h11")  # "httpx" covers httpx2, which anthropic 2.x uses


def is_transport_error(exc: BaseException) -> bool:
    """Whether ``exc`` comes from the HTTP transport under the SDKs (a dropped or broken connection)."""
    return type(exc).__module__.startswith(_TRANSPORT_MODULES)


TIMED_OUT = "Request timed out."


def timeout_error(exc: BaseException, sdk: Any) -> ProviderError | None:
    """pi's text for a request that ran past ``StreamOptions.timeout_ms``, or ``None``.

    The SDK's timeout error carries the transport's cancellation ("Cancelled via cancel scope
    7faf…; reason: deadline exceeded") as its cause, which says nothing to a user; the Anthropic
    SDK also names the host. pi's JavaScript SDKs say ``Request timed out.``, whichever the phase.
    """
    timeout_class = getattr(sdk, "APITimeoutError", None)
    if timeout_class is not None and isinstance(exc, timeout_class):
        return ProviderError(TIMED_OUT)
    if is_transport_error(exc) and "Timeout" in type(exc).__name__:  # an SDK that lets it through
        return ProviderError(TIMED_OUT)
    return None


def lost_stream_text(exc: BaseException) -> str:
    """The error text of a connection error raised while a response was being read.

    SDK releases differ: some let the transport error through, newer ones wrap it in their
    ``APIConnectionError`` ("Connection to <host> failed: ..."). Either way the reply had begun and
    the connection went: ``Connection lost: <transport error>``, which the agent retries.
    """
    current: BaseException | None = exc
    for _ in range(6):
        if current is None:
            break
        if is_transport_error(current):
            return f"Connection lost: {current}"
        current = current.__cause__ or current.__context__
    return error_text(exc)


def _deepest_cause(exc: BaseException) -> str | None:
    deepest: BaseException | None = None
    current = exc.__cause__ or exc.__context__
    for _ in range(5):
        if current is None:
            break
        deepest = current
        current = current.__cause__ or current.__context__
    if deepest is None:
        return None
    return (str(deepest) or type(deepest).__name__).strip()


def truncate_error_text(text: str) -> str:
    if len(text) <= _MAX_ERROR_BODY_CHARS:
        return text
    return f"{text[:_MAX_ERROR_BODY_CHARS]}... [truncated {len(text) - _MAX_ERROR_BODY_CHARS} chars]"


# -- output cap and thinking budget (pi-ai simple-options.ts) --------------------------------


def _estimate_message_tokens(message: Mapping[str, Any]) -> int:
    role = message.get("role")
    if role == "system":
        tokens = math.ceil(js_len(system_message_text(message)) / _CHARS_PER_TOKEN)
        for key in ("toolsAdded", "toolsRemoved"):
            if message.get(key):
                tokens += math.ceil(js_len(jsjson.dumps_str(message[key])) / _CHARS_PER_TOKEN)
        return tokens
    content = message.get("content") or []
    if isinstance(content, str):
        return math.ceil(js_len(content) / _CHARS_PER_TOKEN)
    chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            chars += js_len(block["text"])
        elif kind == "thinking":
            chars += js_len(block.get("thinking", ""))
        elif kind == "toolCall":
            chars += js_len(block["name"]) + js_len(jsjson.dumps_str(block.get("arguments", {})))
        elif kind == "image":
            chars += _IMAGE_CHARS
    return math.ceil(chars / _CHARS_PER_TOKEN)


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """pi's ``estimateContextTokens``: the last usable usage plus an estimate of what follows it."""
    last_index, last_usage, newest = None, 0, -math.inf
    for index, message in enumerate(messages):
        if message.get("role") == "assistant" and message.get("timestamp", 0) >= newest:
            usage = message.get("usage") or {}
            tokens = usage.get("totalTokens") or sum(
                usage.get(key) or 0 for key in ("input", "output", "cacheRead", "cacheWrite")
            )
            if message.get("stopReason") not in ("aborted", "error") and tokens > 0:
                last_index, last_usage = index, tokens
        newest = max(newest, message.get("timestamp", 0) or 0)
    start = 0 if last_index is None else last_index + 1
    return last_usage + sum(_estimate_message_tokens(message) for message in messages[start:])


def clamp_max_tokens_to_context(model: Model, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> int:
    """Fit the output cap into the context window, with pi's safety margin."""
    if model.context_window <= 0:
        return max(1, max_tokens)
    used = estimate_context_tokens(messages)
    margin = max(_CONTEXT_SAFETY_TOKENS, math.ceil(used * _CONTEXT_SAFETY_RATIO))
    room = model.context_window - used - margin
    if room < _MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(_MIN_OUTPUT_WITH_RATIO_MARGIN, model.context_window - used - _CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))


def adjust_max_tokens_for_thinking(
    base_max_tokens: int, model_max_tokens: int, level: str
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` for budget-based thinking (pi ``adjustMaxTokensForThinking``)."""
    budget = DEFAULT_THINKING_BUDGETS["high" if level in ("xhigh", "max") else level]
    max_tokens = min(base_max_tokens + budget, model_max_tokens)
    if max_tokens <= budget:
        budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    return max_tokens, budget


def clamp_thinking_level(model: Model, level: str | None) -> str | None:
    """The level to request (``None`` for off), clamped to what the model supports as pi does.

    ``compat["thinkingLevelMap"]`` drops a level mapped to ``None``; ``xhigh`` and ``max`` are only
    offered when mapped. An unsupported level moves to the nearest higher one, else the nearest lower.
    """
    if not level or not model.reasoning:
        return None
    level_map = model.compat.get("thinkingLevelMap") or {}

    def supported(candidate: str) -> bool:
        if candidate in level_map and level_map[candidate] is None:
            return False
        return candidate not in ("xhigh", "max") or candidate in level_map

    if level not in THINKING_LEVELS:
        return None
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if supported(candidate):
            return None if candidate == "off" else candidate
    return None
