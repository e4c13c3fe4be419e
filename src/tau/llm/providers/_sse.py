"""The SDKs' HTTP client, with the last Server-Sent Event of a stream never lost.

An event ends at a blank line. Some servers (and proxies) close the stream right after the last
event's ``data:`` line, without that blank line; the Python SDKs then drop the event (their
decoders dispatch only on a blank line), while pi's decoders flush it (pi-ai's own Anthropic parser,
the JavaScript ``openai`` SDK). A lost last event is a lost ``message_stop``, ``finish_reason`` or
``response.completed``: a whole reply reported as a broken stream.

:func:`http_client` makes the HTTP client an adapter hands its SDK (the SDKs' public ``http_client``
argument, built from their ``DefaultAsyncHttpxClient`` so their defaults stay) with a response
event hook (the HTTP library's public ``event_hooks``): an ``text/event-stream`` body gets, once
it ends, the line breaks that terminate its last event, and only those, so a stream that did end
properly reaches the SDK's decoder byte for byte (an extra blank line could dispatch an empty event
after an ``id:``). Nothing private of the SDKs is touched; a compressed stream (``content-encoding``
other than identity, which no provider sends for events) is left as it is.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["http_client", "terminator"]

_EVENT_ENDS = (b"\r\r", b"\n\n", b"\r\n\r\n")


def terminator(tail: bytes) -> bytes:
    """What completes a body ending in ``tail`` (its last bytes) into whole events: ``b""`` when the
    last event already ended (or nothing came), else one or two line breaks."""
    if not tail or tail.endswith(_EVENT_ENDS):
        return b""
    return b"\n" if tail.endswith((b"\n", b"\r")) else b"\n\n"


async def _terminated(iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    tail = b""
    async for chunk in iterator:
        if chunk:
            tail = (tail + chunk)[-4:]
        yield chunk
    if end := terminator(tail):
        yield end


def _http_library(client_class: type) -> Any:
    """The HTTP library an SDK's client class is made of (``httpx``, or ``httpx2`` for newer SDKs)."""
    for cls in client_class.__mro__:
        if cls.__name__ == "AsyncClient":
            return importlib.import_module(cls.__module__.split(".")[0])
    raise TypeError(f"{client_class!r} is not an HTTP client class")


@functools.cache
def _event_stream_hook(byte_stream: type) -> Any:
    class TerminatedStream(byte_stream):
        """A response body with its unterminated last event completed."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __aiter__(self) -> AsyncIterator[bytes]:
            return _terminated(self._inner.__aiter__())

        async def aclose(self) -> None:
            await self._inner.aclose()

    async def hook(response: Any) -> None:
        headers = response.headers
        if not headers.get("content-type", "").startswith("text/event-stream"):
            return
        if headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
            return  # appended bytes would have to be compressed too
        response.stream = TerminatedStream(response.stream)

    return hook


def http_client(sdk: Any) -> dict[str, Any]:
    """The ``http_client`` argument for an ``anthropic``/``openai`` SDK client (as a keyword dict),
    delivering a stream's unterminated last event as pi does; ``{}`` for an SDK without the public
    ``DefaultAsyncHttpxClient`` (it then decodes as it always did)."""
    client_class = getattr(sdk, "DefaultAsyncHttpxClient", None)
    if client_class is None:
        return {}
    library = _http_library(client_class)
    hook = _event_stream_hook(library.AsyncByteStream)
    return {"http_client": client_class(event_hooks={"response": [hook]})}
