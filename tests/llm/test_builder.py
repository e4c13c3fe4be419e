"""MessageBuilder: pi's event protocol, partial snapshots, tool-call JSON, timing, errors."""

from __future__ import annotations

import asyncio

import pytest

from tau.llm.builder import (
    MessageBuilder,
    ToolArgumentsStream,
    parse_streaming_json,
    parse_tool_call_arguments,
)
from tau.llm.types import Model, ModelCost

MODEL = Model(id="m-1", provider="prov", api="anthropic-messages", cost=ModelCost(3, 15, 0.3, 3.75))


def run(coro):
    return asyncio.run(coro)


async def collect(builder: MessageBuilder):
    events = [event async for event in builder.stream]
    return events, await builder.stream.result()


def test_text_and_tool_call_stream_in_pis_event_order():
    async def scenario():
        b = MessageBuilder(MODEL)
        b.start()
        i = b.text_start()
        b.text_delta(i, "Hello ")
        b.text_delta(i, "world")
        b.text_end(i)
        j = b.toolcall_start("call_1", "read")
        b.toolcall_delta(j, '{"path": "a')
        b.toolcall_delta(j, '.txt"}')
        b.toolcall_end(j)
        b.set_usage(input=100, output=20, cache_read=1000, cache_write=10)
        b.finish()
        return await collect(b)

    events, message = run(scenario())
    assert [e["type"] for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    assert events[4]["content"] == "Hello world"
    assert events[6]["partial"]["content"][1]["arguments"] == {"path": "a"}
    assert events[8]["toolCall"] == {
        "type": "toolCall",
        "id": "call_1",
        "name": "read",
        "arguments": {"path": "a.txt"},
    }
    assert events[-1]["reason"] == "toolUse"
    assert message["stopReason"] == "toolUse"
    assert (message["api"], message["provider"], message["model"]) == ("anthropic-messages", "prov", "m-1")
    assert message["usage"]["totalTokens"] == 1130
    assert message["usage"]["cost"]["total"] == pytest.approx((300 + 300 + 300 + 37.5) / 1e6)
    assert isinstance(message["durationMs"], int)
    assert all("contentIndex" in e for e in events[1:-1])


def test_partials_share_streaming_text_blocks_as_pis_do():
    """pi's partial is ``{ ...partial }``: its own top-level dict and content list, shared blocks. A
    text read at its event is the text so far; the block then keeps growing (in place: linear)."""
    seen: list[str] = []

    async def scenario():
        b = MessageBuilder(MODEL)
        b.start()
        b.append_text("ab")
        b.append_text("cd")
        b.finish("stop")
        events = []
        async for event in b.stream:
            if event["type"] == "text_delta":
                seen.append(event["partial"]["content"][0]["text"])
            events.append(event)
        return events, await b.stream.result()

    events, message = run(scenario())
    assert seen == ["abcd", "abcd"]  # read after both deltas were sent: the text so far at reading
    deltas = [e for e in events if e["type"] == "text_delta"]
    assert deltas[0]["partial"] is not deltas[1]["partial"]
    assert deltas[0]["partial"]["content"] is not message["content"]
    assert events[0]["partial"]["stopReason"] == "pending"
    assert message["content"] == [{"type": "text", "text": "abcd"}]


def test_a_text_read_at_its_event_is_the_text_so_far():
    async def scenario():
        b = MessageBuilder(MODEL)
        texts = []

        async def consume():
            async for event in b.stream:
                if event["type"] == "text_delta":
                    texts.append(event["partial"]["content"][0]["text"])

        consumer = asyncio.ensure_future(consume())
        b.start()
        for piece in ("ab", "cd", "ef"):
            b.append_text(piece)
            await asyncio.sleep(0)
        b.finish("stop")
        await consumer
        return texts

    assert run(scenario()) == ["ab", "abcd", "abcdef"]


def test_a_streamed_tool_call_keeps_its_arguments_per_event():
    async def scenario():
        b = MessageBuilder(MODEL)
        b.start()
        index = b.toolcall_start("call_1", "read")
        b.toolcall_delta(index, '{"path": "a')
        b.toolcall_delta(index, '.txt"}')
        b.finish()
        return await collect(b)

    events, _ = run(scenario())
    arguments = [e["partial"]["content"][0]["arguments"] for e in events if e["type"] == "toolcall_delta"]
    assert arguments == [{"path": "a"}, {"path": "a.txt"}]


def test_current_block_switching_closes_the_previous_block():
    async def scenario():
        b = MessageBuilder(MODEL)
        b.start()
        b.append_thinking("hmm")
        b.append_text("answer")
        b.finish()
        return await collect(b)

    events, message = run(scenario())
    assert [e["type"] for e in events] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message["stopReason"] == "stop"


def test_invalid_tool_arguments_give_empty_arguments_and_an_error():
    async def scenario():
        b = MessageBuilder(MODEL)
        b.start()
        j = b.toolcall_start("c", "bash")
        b.toolcall_delta(j, '{"command": ls}')
        b.finish()
        return await collect(b)

    _events, message = run(scenario())
    call = message["content"][0]
    assert call["arguments"] == {}
    assert call["argumentsError"].endswith('Received arguments:\n{"command": ls}')


def test_error_and_abort_end_with_an_error_event():
    async def scenario(aborted):
        b = MessageBuilder(MODEL)
        b.start()
        b.append_text("partial")
        b.fail(RuntimeError("529 overloaded"), aborted=aborted)
        b.finish()  # ignored after the end
        return await collect(b)

    events, message = run(scenario(False))
    assert events[-1] == {"type": "error", "reason": "error", "error": message}
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "529 overloaded"
    assert message["content"] == [{"type": "text", "text": "partial"}]
    events, message = run(scenario(True))
    assert events[-1]["reason"] == "aborted"
    assert message["errorMessage"] == "Request was aborted"


def test_message_started_elsewhere_stays_untimed():
    async def scenario():
        b = MessageBuilder(MODEL, timestamp=1)
        b.finish("stop")
        return await b.stream.result()

    assert "durationMs" not in run(scenario())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ('{"a": 1, "b": "x', {"a": 1, "b": "x"}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "\\u00', {"a": ""}),
        ('{"a": tr', {"a": True}),
        ('{"a": 1.5e', {"a": 1.5}),
        ('{"a": [1, {"b": nu', {"a": [1, {"b": None}]}),
        ('{"a"', {}),
        ('{"a": ', {}),
        ('{"path": "C:\\dir"}', {"path": "C:\\dir"}),
        ('{"t": "line\nbreak"}', {"t": "line\nbreak"}),
    ],
)
def test_streaming_json_reads_prefixes(text, expected):
    assert parse_streaming_json(text) == expected


@pytest.mark.parametrize(
    ("text", "expected", "has_error"),
    [
        ("", {}, False),
        ("  ", {}, False),
        ('{"a":1}', {"a": 1}, False),
        ('{"p":"a\\qb"}', {"p": "a\\qb"}, False),
        ("[1]", {}, True),
        ('{"a":', {}, True),
    ],
)
def test_final_tool_arguments(text, expected, has_error):
    arguments, error = parse_tool_call_arguments(text)
    assert arguments == expected
    assert (error is not None) == has_error


def test_large_arguments_parse_in_linear_time():
    payload = '{"content": "' + "x" * 400_000 + '"}'
    stream = ToolArgumentsStream()
    for start in range(0, len(payload), 16):
        stream.append(payload[start : start + 16])
    assert stream.finish() == ({"content": "x" * 400_000}, None)
