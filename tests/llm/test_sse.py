"""The SDKs' HTTP client: a stream's unterminated last event is delivered, nothing else changes.

Through public mechanisms only (issue 34): the SDK's ``http_client`` argument and the HTTP
library's response ``event_hooks``. The adapter tests check the whole path per SDK
(``test_a_last_*_without_its_blank_line_is_delivered``); these check the client itself, and fail
with a message naming what moved if the SDK or its HTTP library changes shape.
"""

from __future__ import annotations

import asyncio
import gzip

import pytest

from tau.llm.providers._sse import _http_library, http_client, terminator


@pytest.mark.parametrize(
    ("tail", "end"),
    [
        (b"", b""),
        (b'data: {"a":1}\n\n', b""),
        (b'data: {"a":1}\r\n\r\n', b""),
        (b'data: {"a":1}\r\r', b""),
        (b'data: {"a":1}\n', b"\n"),
        (b'data: {"a":1}\r\n', b"\n"),
        (b'data: {"a":1}', b"\n\n"),
    ],
)
def test_terminator_completes_only_an_unfinished_event(tail, end):
    assert terminator(tail[-4:]) == end


def _sdk_client(sdk_name: str):
    sdk = pytest.importorskip(sdk_name)
    made = http_client(sdk)
    assert "http_client" in made, (
        f"{sdk_name} {sdk.__version__} has no public DefaultAsyncHttpxClient any more: "
        "tau's flush of an unterminated last SSE event (tau.llm.providers._sse) needs another public hook"
    )
    return sdk, made["http_client"]


def _fetch(client, library, body: bytes, headers: dict[str, str]) -> bytes:
    """``body`` sent in 5-byte pieces (splitting lines and events anywhere) through ``client``'s hooks."""

    async def handler(request):
        async def pieces():
            for index in range(0, len(body), 5):
                yield body[index : index + 5]

        return library.Response(200, headers=headers, content=pieces())

    async def main():
        # The SDK's client with its hooks, on a transport that answers in memory.
        mocked = library.AsyncClient(transport=library.MockTransport(handler), event_hooks=client.event_hooks)
        async with mocked, mocked.stream("POST", "http://sdk.test/v1/stream") as response:
            return b"".join([chunk async for chunk in response.aiter_bytes()])

    return asyncio.run(main())


@pytest.mark.parametrize("sdk_name", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("body", "delivered"),
    [
        (b'id: 7\nevent: a\ndata: {"n":1}\n\n', b'id: 7\nevent: a\ndata: {"n":1}\n\n'),  # ended: unchanged
        (
            b'event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}',
            b'event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}\n\n',
        ),
        (b'event: b\ndata: {"n":2}\n', b'event: b\ndata: {"n":2}\n\n'),
    ],
)
def test_event_stream_bodies_end_with_a_terminated_event(sdk_name, body, delivered):
    _, client = _sdk_client(sdk_name)
    library = _http_library(type(client))
    events = {"content-type": "text/event-stream"}
    assert _fetch(client, library, body, events) == delivered, (
        f"{library.__name__} no longer reads the body a response event hook puts in response.stream: "
        "tau's flush of an unterminated last SSE event (tau.llm.providers._sse) needs another public hook"
    )
    # Not an event stream, or compressed: left exactly as sent.
    assert _fetch(client, library, b'{"a":1}', {"content-type": "application/json"}) == b'{"a":1}'
    zipped = {**events, "content-encoding": "gzip"}
    assert _fetch(client, library, gzip.compress(b"data: 1"), zipped) == b"data: 1"
    asyncio.run(client.aclose())


@pytest.mark.parametrize("sdk_name", ["anthropic", "openai"])
def test_the_sdk_takes_the_client_with_its_defaults(sdk_name):
    """The SDK accepts it as its ``http_client`` and keeps its own defaults (timeouts, redirects)."""
    sdk, client = _sdk_client(sdk_name)
    plain = sdk.DefaultAsyncHttpxClient()
    maker = sdk.AsyncAnthropic if sdk_name == "anthropic" else sdk.AsyncOpenAI
    made = maker(api_key="k", base_url="http://127.0.0.1:9", http_client=client)
    assert made.timeout == maker(api_key="k", base_url="http://127.0.0.1:9").timeout
    assert (client.timeout, client.follow_redirects) == (plain.timeout, plain.follow_redirects)
    assert len(client.event_hooks["response"]) == 1
    asyncio.run(made.close())
    asyncio.run(plain.aclose())
