"""Issue 26, item 7: streamed text is assembled in time linear in its size.

Each text delta copied the whole text so far (``block["text"] += delta`` while a snapshot held the
old text), and the OpenAI adapters kept tool-call arguments the same way: a 1 / 2 / 4 MB scripted
answer took 1.3 / 3.7 / 13.2 s, 20 MB did not finish. Only "it finishes" is asserted here, with a
bound far above what a loaded machine needs and far below what the quadratic assembly takes;
``bench/text_assembly.py`` measures the speed.
"""

from __future__ import annotations

import asyncio
import time

from tau.llm.builder import MessageBuilder
from tau.llm.providers.faux import FauxProvider
from tau.llm.providers.openai_completions import _ChunkState
from tau.llm.providers.openai_responses import _EventState
from tau.llm.stream import StreamOptions
from tau.llm.types import Model

MODEL = Model(id="m-1", provider="prov", api="openai-completions")
FAUX = Model(id="faux-1", provider="faux", api="faux")
BOUND_SECONDS = 60.0
MB = 1024 * 1024


class _Deadline:
    def __init__(self) -> None:
        self.end = time.monotonic() + BOUND_SECONDS

    def check(self) -> None:
        assert time.monotonic() < self.end, f"assembly did not finish in {BOUND_SECONDS} s"


async def _consume(stream, deadline: _Deadline) -> int:
    """Iterate like the agent loop (every event, its partial read) and count the events."""
    count = 0
    async for event in stream:
        event.get("partial")
        count += 1
        if count % 4096 == 0:
            deadline.check()
    return count


def test_a_4_mb_text_streamed_in_16_character_deltas_finishes():
    text = "0123456789abcde\n" * (4 * MB // 16)
    deadline = _Deadline()

    async def scenario():
        builder = MessageBuilder(MODEL)
        consumer = asyncio.ensure_future(_consume(builder.stream, deadline))
        builder.start()
        index = builder.text_start()
        for start in range(0, len(text), 16):
            builder.text_delta(index, text[start : start + 16])
            if start % (16 * 16) == 0:  # the consumer keeps up, as the agent loop does
                await asyncio.sleep(0)
                deadline.check()
        builder.finish("stop")
        await consumer
        return await builder.stream.result()

    message = asyncio.run(scenario())
    assert message["content"][0]["text"] == text


def test_a_4_mb_faux_answer_finishes():
    text = "word " * (3 * MB // 5)
    deadline = _Deadline()

    async def scenario():
        stream = FauxProvider([{"text": text, "thinking": text[:MB]}]).stream(
            FAUX, {"messages": []}, StreamOptions()
        )
        await _consume(stream, deadline)
        return await stream.result()

    message = asyncio.run(scenario())
    assert [block.get("thinking", block.get("text")) for block in message["content"]] == [text[:MB], text]


def _arguments_pieces(size: int) -> tuple[str, list[str]]:
    body = '{"path": "big.txt", "content": "' + "x" * size + '"}'
    return body, [body[i : i + 32] for i in range(0, len(body), 32)]


def test_openai_completions_tool_call_arguments_of_1_mb_finish():
    _body, pieces = _arguments_pieces(MB)
    deadline = _Deadline()

    async def scenario():
        builder = MessageBuilder(MODEL)
        state = _ChunkState(builder, MODEL)
        builder.start()
        first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write", "arguments": ""}}
        state.handle({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
        for number, piece in enumerate(pieces):
            call = {"index": 0, "function": {"arguments": piece}}
            state.handle({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
            if number % 4096 == 0:
                deadline.check()
        state.handle({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        state.finish(True)
        return builder.message

    message = asyncio.run(scenario())
    assert message["content"][0]["arguments"]["content"] == "x" * MB


def test_openai_responses_tool_call_arguments_of_1_mb_finish():
    body, pieces = _arguments_pieces(MB)
    deadline = _Deadline()

    async def scenario():
        builder = MessageBuilder(Model(id="m-1", provider="openai", api="openai-responses"))
        state = _EventState(builder)
        builder.start()
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write", "arguments": ""}
        state.handle({"type": "response.output_item.added", "output_index": 0, "item": item})
        for number, piece in enumerate(pieces):
            state.handle(
                {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": piece}
            )
            if number % 4096 == 0:
                deadline.check()
        state.handle({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": body})
        state.handle(
            {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": body}}
        )
        return builder.message

    message = asyncio.run(scenario())
    assert message["content"][0]["arguments"]["content"] == "x" * MB
