"""The provider seam: an async stream of pi's ``AssistantMessageEvent``s, and cancellation.

Contract (pi-ai ``StreamFunction``): a provider never raises once the call has started. Every
failure, including a dropped connection or an abort, ends the stream with an ``error`` event
whose message has ``stopReason`` ``"error"`` or ``"aborted"`` and an ``errorMessage``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import field
from typing import Any, Protocol

from tau.common.dataclass import dataclass
from tau.llm.types import AssistantMessage, AssistantMessageEvent, Model, TranscriptContext

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_MS",
    "AbortSignal",
    "AssistantMessageEventStream",
    "DeferredPayload",
    "StreamFunction",
    "StreamOptions",
]


# pi's default ``httpIdleTimeoutMs``: five minutes.
DEFAULT_IDLE_TIMEOUT_MS = 300_000


class AbortSignal:
    """A one-shot cancellation flag that async code can wait on (``AbortController.signal``)."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None
        self._aborted = False
        self.reason: str | None = None
        self._callbacks: list[Callable[[], object]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self, reason: str | None = None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self.reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` once on abort (at once if already aborted; what it returns is ignored);
        returns a remover."""
        if self._aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()


@dataclass
class StreamOptions:
    """Per-request options a provider honours where its API allows."""

    signal: AbortSignal | None = None
    api_key: str | None = None
    session_id: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: str | None = None  # pi thinking level: off|minimal|low|medium|high|xhigh|max
    cache_retention: str = "short"  # none|short|long
    headers: dict[str, str] = field(default_factory=dict)
    timeout_ms: int | None = None
    # The longest silence a response may keep: waiting for its headers, then between two events
    # of its stream (pi's ``httpIdleTimeoutMs``). A stall past it ends the request with a
    # retryable "timed out" error. ``0`` or ``None``: no limit.
    idle_timeout_ms: int | None = DEFAULT_IDLE_TIMEOUT_MS
    max_retries: int = 0
    max_retry_delay_ms: int = 60_000
    # Called with the provider payload before it is sent (a DeferredPayload from a provider that
    # sends none); may return a replacement.
    on_payload: Callable[[Any, Model], Any] | None = None
    # Called with (status, headers) once the HTTP response arrives.
    on_response: Callable[[int, dict[str, str]], Any] | None = None


class DeferredPayload:
    """A request payload made when first read: what a provider that sends no request (faux) hands
    to ``on_payload``, so a ``before_provider_request`` handler that only counts requests costs no
    payload (on a resumed 50,000-entry session, a tenth of the run).

    ``resolve()`` makes it once. A provider may :meth:`rebind` the maker once its call no longer
    holds what the first one used.
    """

    __slots__ = ("_made", "_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._made, self._value = make, False, None

    def resolve(self) -> Any:
        if not self._made:
            self._value, self._made = self._make(), True
        return self._value

    def rebind(self, make: Callable[[], Any]) -> None:
        self._make = make

    @staticmethod
    def value_of(payload: Any) -> Any:
        """``payload`` itself, or what a :class:`DeferredPayload` makes."""
        return payload.resolve() if isinstance(payload, DeferredPayload) else payload

    @staticmethod
    def attribute(name: str) -> property:
        """An attribute that makes a :class:`DeferredPayload` set on it when first read (and puts what
        it made in the object's ``raw[name]`` too, where that held the same deferred payload)."""

        def read(owner: Any) -> Any:
            value = owner.__dict__.get(name)
            if isinstance(value, DeferredPayload):
                made = owner.__dict__[name] = value.resolve()
                raw = getattr(owner, "raw", None)
                if isinstance(raw, dict) and raw.get(name) is value:
                    raw[name] = made
                return made
            return value

        def write(owner: Any, value: Any) -> None:
            owner.__dict__[name] = value

        return property(read, write)


class AssistantMessageEventStream:
    """An async iterator of events that also yields the final message via :meth:`result`.

    Producers call :meth:`push` and finally :meth:`end`; a terminal ``done`` or ``error`` event
    sets the result. Consumers ``async for`` over it, or just ``await stream.result()``: a stream
    whose result is awaited before anyone iterates it keeps no events from then on (each holds a
    snapshot of the partial message, so a long response queued unread grew with its square).

    The events wait in a plain deque with one waiter (an ``asyncio.Queue`` costs several times
    more per event, and a long answer is a million of them).
    """

    def __init__(self) -> None:
        self._events: deque[AssistantMessageEvent | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._result: asyncio.Future[AssistantMessage] = asyncio.get_running_loop().create_future()
        self._ended = False
        self._iterated = False
        self._unread = False

    @property
    def wants_events(self) -> bool:
        """False once only the result is wanted: producers may skip building the events' snapshots."""
        return not self._unread

    def push(self, event: AssistantMessageEvent) -> None:
        if self._ended:
            return
        if not self._unread:
            self._put(event)
        if event["type"] == "done" and not self._result.done():
            self._result.set_result(event["message"])
        elif event["type"] == "error" and not self._result.done():
            self._result.set_result(event["error"])

    def end(self, message: AssistantMessage | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        if message is not None and not self._result.done():
            self._result.set_result(message)
        self._put(None)

    def _put(self, event: AssistantMessageEvent | None) -> None:
        self._events.append(event)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        self._iterated = True
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AssistantMessageEvent]:
        events = self._events
        while True:
            while not events:
                self._waiter = asyncio.get_running_loop().create_future()
                await self._waiter
            event = events.popleft()
            if event is None:
                return
            yield event

    async def result(self) -> AssistantMessage:
        """The final assistant message (after ``done`` or ``error``)."""
        if not self._iterated and not self._unread:
            self._unread = True
            self._events.clear()  # what was queued will never be read
            if self._ended:
                self._events.append(None)
        return await self._result


class StreamFunction(Protocol):
    """A provider's entry point: start the request and return the event stream at once."""

    def __call__(
        self, model: Model, context: TranscriptContext, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream: ...
