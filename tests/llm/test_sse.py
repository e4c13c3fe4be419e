"""The SSE decoding the adapters use: a stream's unterminated last event is delivered, nothing else changes."""

from __future__ import annotations

import asyncio

import pytest

from tau.llm.providers._sse import flush_last_event, terminator


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


@pytest.mark.parametrize("sdk_name", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("body", "events"),
    [
        (b'id: 7\nevent: a\ndata: {"n":1}\n\n', [("a", '{"n":1}')]),  # ended: no empty event after an id
        (b'event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}', [("a", '{"n":1}'), ("b", '{"n":2}')]),
        (b'event: b\ndata: {"n":2}\n', [("b", '{"n":2}')]),
    ],
)
def test_the_sdk_decoders_deliver_every_event_once(sdk_name, body, events):
    sdk = pytest.importorskip(sdk_name)
    client_class = sdk.AsyncAnthropic if sdk_name == "anthropic" else sdk.AsyncOpenAI
    client = flush_last_event(client_class(api_key="k", base_url="http://127.0.0.1:9"))

    async def decode():
        async def chunks():
            for index in range(0, len(body), 5):  # pieces that split lines and events anywhere
                yield body[index : index + 5]

        return [(sse.event, sse.data) async for sse in client._make_sse_decoder().aiter_bytes(chunks())]

    assert asyncio.run(decode()) == events
    assert [(s.event, s.data) for s in client._make_sse_decoder().iter_bytes(iter([body]))] == events


def test_the_wrapped_hook_takes_whatever_the_sdk_passes():
    # anthropic 2.x calls ``_make_sse_decoder(options)``; older SDKs call it with nothing.
    received = []

    class Decoder:
        def iter_bytes(self, iterator):
            return iter([b"".join(iterator)])

    class Client:
        def _make_sse_decoder(self, options=None):
            received.append(options)
            return Decoder()

    client = flush_last_event(Client())
    assert list(client._make_sse_decoder("opts").iter_bytes(iter([b"data: 1"]))) == [b"data: 1\n\n"]
    assert list(client._make_sse_decoder().iter_bytes(iter([b"data: 1\n\n"]))) == [b"data: 1\n\n"]
    assert received == ["opts", None]
