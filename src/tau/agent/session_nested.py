"""Tool calls made by a running tool (pi ``ctx.executeTool``): ids ``<parent>/<n>``, no transcript entries.

The call goes through the same preparation, validation and ``tool_call`` / ``tool_result`` hooks as
a model's call, with ``parentToolCallId`` on its ``tool_execution_*`` events and hook payloads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tau.agent import events
from tau.agent.hooks import AgentContext, LoopConfig
from tau.agent.tool_execution import run_tool_call
from tau.llm.stream import AbortSignal

__all__ = ["run_nested_call"]

_counters: dict[str, itertools.count[int]] = {}


async def run_nested_call(
    session: Any,
    caller_id: str,
    name: str,
    args: Any,
    *,
    signal: AbortSignal | None = None,
    on_update: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    counter = _counters.setdefault(caller_id, itertools.count(1))
    call = {"type": "toolCall", "id": f"{caller_id}/{next(counter)}", "name": name, "arguments": args}
    tools = session.agent.state.tools
    assistant = session._find_last_assistant()
    await _emit(session, events.tool_execution_start(call["id"], name, args, caller_id))
    if assistant is None:
        text = "No assistant message issued this call"
        result = {"content": [{"type": "text", "text": text}], "details": {}}
        await _emit(session, events.tool_execution_end(call["id"], name, result, True, None, caller_id))
        return {"toolCall": call, "result": result, "isError": True}

    async def before(context: Any, sig: Any) -> Any:
        return await session._tool_call_hook(context.tool_call, context.args, caller_id)

    async def after(context: Any, sig: Any) -> Any:
        return await session._tool_result_hook(context, caller_id)

    config = LoopConfig(
        model=session.agent.state.model,
        stream_fn=session._stream_fn,
        convert_to_llm=session._convert_to_llm,
        before_tool_call=before,
        after_tool_call=after,
        tool_context=session._tool_context,
    )

    def updated(partial: Any) -> None:
        payload = partial.to_json() if hasattr(partial, "to_json") else partial
        session._emit(events.tool_execution_update(call["id"], name, args, payload, caller_id))
        if on_update is not None:
            on_update(partial)

    outcome = await run_tool_call(
        call,
        tools=list(tools),
        assistant_message=assistant,
        context=AgentContext(list(session.agent.state.messages), list(tools)),
        config=config,
        signal=signal or session.agent.signal,
        on_update=updated,
    )
    result = outcome.result.to_json()
    await _emit(
        session,
        events.tool_execution_end(call["id"], name, result, outcome.is_error, outcome.duration_ms, caller_id),
    )
    answer: dict[str, Any] = {"toolCall": call, "result": result, "isError": outcome.is_error}
    if outcome.duration_ms is not None:
        answer["durationMs"] = outcome.duration_ms
    return answer


async def _emit(session: Any, event: dict[str, Any]) -> None:
    if session._hooks.has_handlers(event["type"]):
        await session._hooks.emit(dict(event))
    session._emit(event)
