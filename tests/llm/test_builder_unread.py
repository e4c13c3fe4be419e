"""A stream read only for its result keeps no events and builds the same message (issue 17).

Each event carries a snapshot of the partial message; a caller that only awaits ``result()`` (a
compaction summary, a side request) used to leave every event queued, so memory grew with the
square of the response (a 30 MiB summary: 7.6 GB). Such a stream now queues nothing, and the
builder joins the deltas once instead of copying the text at each one; the final message must be
the one an iterating consumer gets.
"""

from __future__ import annotations

import asyncio
import random
import tracemalloc
from typing import Any

import pytest

from tau.llm.builder import MessageBuilder
from tau.llm.types import Model, ModelCost

MODEL = Model(id="m-1", provider="prov", api="anthropic-messages", cost=ModelCost(3, 15, 0.3, 3.75))


def _script(seed: int) -> list[tuple[str, Any]]:
    rnd = random.Random(seed)
    steps: list[tuple[str, Any]] = []
    for _ in range(rnd.randrange(1, 6)):
        kind = rnd.choice(["text", "thinking", "tool", "append"])
        steps.append(
            (kind, [rnd.choice(["a", "bc", "", "é\n", "\ud83d\ude00"]) for _ in range(rnd.randrange(6))])
        )
    steps.append(("end", rnd.choice(["finish", "finish", "fail", "abort", "usage"])))
    return steps


async def _drive(steps: list[tuple[str, Any]], builder: MessageBuilder) -> None:
    for kind, pieces in steps:
        await asyncio.sleep(0)
        if kind == "text":
            index = builder.text_start()
            for piece in pieces:
                builder.text_delta(index, piece)
            builder.text_end(index)
        elif kind == "thinking":
            index = builder.thinking_start()
            for piece in pieces:
                builder.thinking_delta(index, piece)
        elif kind == "tool":
            index = builder.toolcall_start("call_1", "bash")
            builder.toolcall_delta(index, '{"command": "' + "".join(p for p in pieces if p.isascii()) + '"}')
        elif kind == "append":
            for piece in pieces:
                builder.append_text(piece)
        elif pieces == "fail":
            builder.fail(RuntimeError("boom"))
        elif pieces == "abort":
            builder.abort()
        else:
            if pieces == "usage":
                builder.set_usage(input=3, output=4)
            builder.finish()


async def _run(steps: list[tuple[str, Any]], iterate: bool) -> tuple[dict[str, Any], int]:
    builder = MessageBuilder(MODEL, timestamp=1)
    producer = asyncio.ensure_future(_drive(steps, builder))
    events = 0
    if iterate:
        async for _ in builder.stream:
            events += 1
    message = await builder.stream.result()
    await producer
    return {k: v for k, v in message.items() if k != "durationMs"}, events


@pytest.mark.parametrize("seed", range(40))
def test_the_result_alone_is_the_message_an_iterating_consumer_gets(seed):
    steps = _script(seed)
    iterated, events = asyncio.run(_run(steps, iterate=True))
    alone, _ = asyncio.run(_run(steps, iterate=False))
    assert alone == iterated
    assert events > 0


def test_an_unread_stream_queues_nothing():
    async def scenario() -> int:
        builder = MessageBuilder(MODEL)
        result = asyncio.ensure_future(builder.stream.result())
        await asyncio.sleep(0)
        index = builder.text_start()
        for _ in range(100):
            builder.text_delta(index, "x")
        builder.finish()
        await result
        return len(builder.stream._events)

    assert asyncio.run(scenario()) <= 1  # at most the end marker


def test_a_long_response_read_for_its_result_stays_within_a_few_times_its_size():
    size, delta = 8 << 20, "y" * (64 << 10)

    async def scenario() -> int:
        builder = MessageBuilder(MODEL)
        result = asyncio.ensure_future(builder.stream.result())
        await asyncio.sleep(0)
        index = builder.text_start()
        for _ in range(size // len(delta)):
            builder.text_delta(index, delta)
            await asyncio.sleep(0)
        builder.finish()
        return len((await result)["content"][0]["text"])

    tracemalloc.start()
    try:
        assert asyncio.run(scenario()) == size
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * size  # queued snapshots took ~ size * deltas / 2 (here 64x the size)
