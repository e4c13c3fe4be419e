"""Test doubles for the loop tests: a scripted stream function and small tools.

The scripted model streams like pi's faux provider (16-character deltas, ``call_<n>`` ids) and
checks the abort signal between chunks, so aborts during streaming behave as with a real provider.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from tau.agent.events import to_json_event
from tau.llm.builder import MessageBuilder
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.types import Model
from tau.tools.base import ToolDefinition, ToolResult

MODEL = Model(id="faux-1", provider="faux", api="faux", name="faux-1")
CHUNK = 16

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def text(value: str, stop: str = "stop") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "stopReason": stop}


def calls(
    *pairs: tuple[str, dict[str, Any]], say: str | None = None, stop: str = "toolUse"
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
    content += [{"type": "toolCall", "name": name, "arguments": args} for name, args in pairs]
    return {"content": content, "stopReason": stop}


class ScriptedModel:
    """A stream function answering each request with the next scripted step.

    ``requests`` records each request's messages; ``slow`` adds a pause before every chunk so a
    test can abort mid-stream.
    """

    def __init__(self, *steps: Step, slow: float = 0.0) -> None:
        self.steps = list(steps)
        self.requests: list[list[dict[str, Any]]] = []
        self.options: list[StreamOptions | None] = []
        self.slow = slow
        self.n_calls = 0

    def __call__(self, model: Model, context: dict[str, Any], options: StreamOptions | None = None):
        self.requests.append(json.loads(json.dumps(context["messages"])))
        self.options.append(options)
        builder = MessageBuilder(model)
        asyncio.get_running_loop().create_task(self._play(builder, context, options))
        return builder.stream

    async def _play(
        self, builder: MessageBuilder, context: dict[str, Any], options: StreamOptions | None
    ) -> None:
        signal = options.signal if options else None
        if not self.steps:
            builder.fail("No more faux responses queued")
            return
        step = self.steps.pop(0)
        if callable(step):
            step = step(context)
        builder.start()
        for block in step["content"]:
            if not await self._stream_block(builder, block, signal):
                builder.abort()
                return
        if step.get("errorMessage"):
            builder.message["errorMessage"] = step["errorMessage"]
        builder.finish(step["stopReason"])

    async def _stream_block(
        self, builder: MessageBuilder, block: dict[str, Any], signal: AbortSignal | None
    ) -> bool:
        if block["type"] == "text":
            index = builder.text_start()
            pieces, add = _chunks(block["text"]), builder.text_delta
        else:
            self.n_calls += 1
            index = builder.toolcall_start(block.get("id") or f"call_{self.n_calls}", block["name"])
            pieces, add = (
                _chunks(json.dumps(block["arguments"], separators=(",", ":"))),
                builder.toolcall_delta,
            )
        for piece in pieces:
            await asyncio.sleep(self.slow)
            if signal is not None and signal.aborted:
                return False
            add(index, piece)
        builder.end_block(index) if block["type"] == "text" else builder.toolcall_end(
            index, block["arguments"]
        )
        return True


def _chunks(value: str) -> list[str]:
    return [value[i : i + CHUNK] for i in range(0, len(value), CHUNK)] or [""]


def tool(
    name: str,
    run: Callable[..., Any] | None = None,
    *,
    parameters: dict[str, Any] | None = None,
    execution_mode: str = "parallel",
) -> ToolDefinition:
    """A tool whose ``execute`` awaits ``run(args, signal, on_update)`` (default: echo the args)."""

    async def execute(tool_call_id, params, signal, on_update, ctx):
        if run is None:
            return ToolResult.text(f"{name} {json.dumps(params)}")
        value = run(params, signal, on_update)
        if asyncio.iscoroutine(value):
            value = await value
        return value

    return ToolDefinition(
        name=name,
        description=f"The {name} tool.",
        parameters=parameters or {"type": "object", "properties": {}},
        execute=execute,
        execution_mode=execution_mode,  # type: ignore[arg-type]
    )


class Recorder:
    """An event sink that keeps a JSON copy of every event.

    As the JSON mode writes it by default; with ``sdk=True`` as the scenario goldens record it
    (``message_update`` reduced to ``type`` and ``assistantMessageEvent`` without ``partial``).
    """

    def __init__(self, sdk: bool = False) -> None:
        self.events: list[dict[str, Any]] = []
        self.sdk = sdk

    def __call__(self, event: dict[str, Any], *_signal: Any) -> None:
        if self.sdk and event["type"] == "message_update":
            update = {k: v for k, v in event["assistantMessageEvent"].items() if k != "partial"}
            event = {"type": "message_update", "assistantMessageEvent": update}
        elif not self.sdk:
            event = to_json_event(event)
        self.events.append(json.loads(json.dumps(event)))

    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    def outline(self, *, updates: bool = False) -> list[str]:
        """Event types with the role of messages and the id of tool calls; ``message_update`` left out."""
        lines = []
        for event in self.events:
            kind = event["type"]
            if kind == "message_update" and not updates:
                continue
            if "message" in event:
                kind += f" {event['message']['role']}"
            if "toolCallId" in event:
                kind += f" {event['toolCallId']}"
            lines.append(kind)
        return lines

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]
