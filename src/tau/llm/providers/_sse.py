"""The SDKs' Server-Sent-Events decoding, with the last event of a stream never lost.

An event ends at a blank line. Some servers (and proxies) close the stream right after the last
event's ``data:`` line, without that blank line; the Python SDKs then drop the event (their
decoders dispatch only on a blank line), while pi's decoders flush it (pi-ai's own Anthropic parser,
the JavaScript ``openai`` SDK). A lost last event is a lost ``message_stop``, ``finish_reason`` or
``response.completed``: a whole reply reported as a broken stream.

:func:`flush_last_event` wraps the decoder an SDK client makes: once the body ends, the line breaks
that terminate its last event are added, and only those, so a stream that did end properly is
decoded exactly as before (an extra blank line could dispatch an empty event after an ``id:``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

__all__ = ["flush_last_event", "terminator"]

_EVENT_ENDS = (b"\r\r", b"\n\n", b"\r\n\r\n")


def terminator(tail: bytes) -> bytes:
    """What completes a body ending in ``tail`` (its last bytes) into whole events: ``b""`` when the
    last event already ended (or nothing came), else one or two line breaks."""
    if not tail or tail.endswith(_EVENT_ENDS):
        return b""
    return b"\n" if tail.endswith((b"\n", b"\r")) else b"\n\n"


class _Terminated:
    """An SDK SSE decoder fed the body plus :func:`terminator` of its end."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Any]:
        return self._inner.iter_bytes(_terminated(iterator))

    def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        return self._inner.aiter_bytes(_aterminated(iterator))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _terminated(iterator: Iterator[bytes]) -> Iterator[bytes]:
    tail = b""
    for chunk in iterator:
        if chunk:
            tail = (tail + chunk)[-4:]
        yield chunk
    if end := terminator(tail):
        yield end


async def _aterminated(iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    tail = b""
    async for chunk in iterator:
        if chunk:
            tail = (tail + chunk)[-4:]
        yield chunk
    if end := terminator(tail):
        yield end


def flush_last_event(client: Any) -> Any:
    """Make ``client`` (an ``anthropic`` or ``openai`` SDK client) deliver a stream's unterminated
    last event, as pi does. Returns the client."""
    make_decoder = getattr(client, "_make_sse_decoder", None)  # the SDKs' hook: one decoder per stream
    if make_decoder is not None:  # an SDK without it decodes as it always did (tests/llm/test_sse.py says so)
        # The hook's arguments differ between SDK releases (anthropic 2.x passes the request options).
        client._make_sse_decoder = lambda *args, **kwargs: _Terminated(make_decoder(*args, **kwargs))
    return client
