"""Test doubles for the loop tests: a scripted stream function (the faux provider) and small tools.

The scripted model is faux (:class:`faux_model.FauxModel`): it streams as pi's faux provider does
(16-character deltas) and checks the abort signal between chunks, so aborts during streaming behave
as with a real provider.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from faux_model import FauxModel
from tau.agent.events import to_json_event
from tau.llm.stream import StreamOptions
from tau.llm.types import Model
from tau.tools.base import ToolDefinition, ToolResult

MODEL = Model(id="faux-1", provider="faux", api="faux", name="faux-1")


def text(value: str, stop: str = "stop") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "stopReason": stop}


def calls(
    *pairs: tuple[str, dict[str, Any]], say: str | None = None, stop: str = "toolUse"
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
    content += [{"type": "toolCall", "name": name, "arguments": args} for name, args in pairs]
    return {"content": content, "stopReason": stop}


class ScriptedModel(FauxModel):
    """The faux provider as the loop's stream function, answering each request with the next step.

    ``requests`` records each request's messages (copies), ``options`` its stream options. Tool calls
    without an id are ``call_1``, ``call_2``, ... counted per model (as in the goldens), as faux counts them.
    """

    def __init__(self, *steps: dict[str, Any]) -> None:
        super().__init__(steps)
        self.options: list[StreamOptions | None] = []

    def __call__(self, model: Model, context: dict[str, Any], options: StreamOptions | None = None):
        self.options.append(options)
        return self.stream(model, context, options)


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
