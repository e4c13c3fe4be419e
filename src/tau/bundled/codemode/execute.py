"""One ``codemode`` call: parse the script, run it in the sandbox with the session's callable tools,
and build the result the model reads (pi ``codemode/execute.ts``).

Each ``tools.<id>(args)`` is a nested call through ``ctx.execute_tool``: it is validated, passes the
``tool_call``/``tool_result`` handlers, emits ``tool_execution_*`` with ``parentToolCallId`` and the id
``<call id>/<n>``, and is recorded on the result (``details.calls``, and ``nestedCalls`` by the host).
A tool with an output schema resolves to its ``structuredContent``; any other to its text; a failed
call rejects with the tool's error text. Only the script's output reaches the model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, cast

from tau.bundled.codemode.declarations import render_tool_sample
from tau.bundled.codemode.description import callable_for_scripts, to_declaration
from tau.bundled.codemode.discovery import discovery_globals
from tau.bundled.codemode.models import model_globals
from tau.bundled.codemode.output import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    format_error,
    format_output,
    join_adjacent_text,
    save_images,
    truncate_output,
    value_text,
)
from tau.bundled.codemode.sandbox import (
    UNDEFINED,
    WORKER_WAIT_MS,
    SandboxTool,
    ScriptCallError,
    max_workers,
    release_worker,
    reserve_worker,
    run_script,
)
from tau.bundled.codemode.source import parse_source
from tau.bundled.codemode.store import STORE_ENTRY_TYPE, read_store
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.extension import (
    AbortSignal,
    ImageContent,
    TextContent,
    ToolError,
    ToolResult,
    message_text,
    text_block,
)

__all__ = ["MEMORY_LIMIT_BYTES", "CodemodeOptions", "execute_codemode"]

# The VM's heap: a runaway script fails with "InternalError: out of memory" instead of taking tau down.
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
_ARGS_PREVIEW_CHARS = 200
_ERROR_PREVIEW_CHARS = 500


@dataclass
class CodemodeOptions:
    append_entry: Callable[[str, Any], Any]
    guidelines: Callable[[], dict[str, list[str]]]
    namespace_of: Callable[[str], dict[str, Any] | None]
    default_timeout_ms: Callable[[], int | None]


def _truncate(text: str, limit: int) -> str:
    if len(text.encode("utf-16-le", "surrogatepass")) // 2 <= limit:
        return text
    from tau.bundled.codemode.output import _slice_head

    return _slice_head(text, limit - 3) + "..."


def _preview(args: Any) -> str:
    if args is UNDEFINED:
        return ""
    try:
        return _truncate(jsjson.dumps_str(args), _ARGS_PREVIEW_CHARS)
    except (TypeError, ValueError):
        return ""


def _script_value(tool: Any, outcome: dict[str, Any]) -> Any:
    result = outcome["result"]
    if tool.output_schema is not None and "structuredContent" in result:
        return result["structuredContent"]
    text = message_text(result)
    if outcome["isError"]:
        raise ScriptCallError(text or f'Tool "{tool.name}" failed')
    return text


async def execute_codemode(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: Callable[[Any], Any] | None,
    ctx: Any,
    options: CodemodeOptions,
) -> ToolResult:
    started = time.perf_counter()
    try:
        source = parse_source(params["code"])
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    calls: list[dict[str, Any]] = []

    def snapshot() -> dict[str, Any]:
        return {"calls": [dict(call) for call in calls]}

    def publish() -> None:
        if on_update is not None:
            on_update(ToolResult(content=[], details=snapshot()))

    # The script shows as running before its first nested call.
    publish()
    tools = callable_for_scripts(list(getattr(ctx, "tools", None) or []))
    guidelines = options.guidelines()
    samples = {t.name: render_tool_sample(to_declaration(t, guidelines.get(t.name))) for t in tools}

    def executor(tool: Any) -> Callable[[Any, AbortSignal], Any]:
        async def execute(args: Any, call_signal: AbortSignal) -> Any:
            record: dict[str, Any] = {
                "id": f"{tool_call_id}/?",
                "name": tool.name,
                "args": _preview(UNDEFINED if args is None else args),
                "status": "running",
            }
            calls.append(record)
            publish()
            call_started = time.perf_counter()
            outcome = await ctx.execute_tool(tool.name, args if args is not None else {}, signal=call_signal)
            record["id"] = outcome["toolCall"]["id"]
            record["durationMs"] = (time.perf_counter() - call_started) * 1000
            if outcome["isError"]:
                record["status"] = "cancelled" if call_signal.aborted else "error"
                failure = message_text(outcome["result"]) or f'Tool "{tool.name}" failed'
                record["error"] = _truncate(failure, _ERROR_PREVIEW_CHARS)
            else:
                record["status"] = "ok"
            publish()
            return _script_value(tool, outcome)

        return execute

    sandbox_tools = [SandboxTool(tool.name, samples[tool.name], executor(tool)) for tool in tools]
    globals_ = [
        *discovery_globals(tools, samples, options.namespace_of),
        *model_globals(getattr(ctx, "model_registry", None)),
    ]
    deadline = source.timeout_ms or options.default_timeout_ms() or math.inf
    wait_started = time.perf_counter()
    admission = await reserve_worker(signal, min(deadline, WORKER_WAIT_MS))
    waited_ms = (time.perf_counter() - wait_started) * 1000
    if admission != "reserved":
        return _not_started(admission, signal, deadline, started, snapshot())
    branch = ctx.session_manager.get_branch() if getattr(ctx, "session_manager", None) else []
    result = await run_script(
        source.code,
        tools=sandbox_tools,
        globals_=globals_,
        store=read_store(branch),
        timeout_ms=math.inf if deadline == math.inf else max(1, round(deadline - waited_ms)),
        memory_limit=MEMORY_LIMIT_BYTES,
        signal=signal,
        release=release_worker,
    )
    # Calls still running were cut off by the end of the script, a timeout or an abort.
    for call in calls:
        if call["status"] == "running":
            call["status"] = "cancelled"
    output = list(result.output)
    if result.ok:
        writes = result.store_writes
        if writes["set"] or writes["delete"]:
            options.append_entry(STORE_ENTRY_TYPE, {"set": writes["set"], "delete": writes["delete"]})
        if result.value is not UNDEFINED:
            output.append({"type": "text", "text": value_text(result.value)})
    items = format_output(output)
    if not result.ok:
        assert result.error is not None
        items.append({"type": "text", "text": f"Script error:\n{format_error(result.error, calls)}"})
    budget = source.max_output_tokens if source.max_output_tokens is not None else DEFAULT_MAX_OUTPUT_TOKENS
    truncated, full_output_path = truncate_output(join_adjacent_text(items), budget)
    shown = join_adjacent_text(save_images(truncated))
    header = (
        f"{'Script completed' if result.ok else 'Script failed'}\n"
        f"Wall time {time.perf_counter() - started:.1f} seconds\nOutput:\n"
    )
    details = snapshot()
    if full_output_path:
        details["fullOutputPath"] = full_output_path
    # the output pipeline keeps items as plain dicts; by now they are text and image blocks
    content = cast("list[TextContent | ImageContent]", [text_block(header), *shown])
    return ToolResult(content=content, details=details, is_error=not result.ok)


def _not_started(
    admission: str, signal: AbortSignal | None, deadline: float, started: float, details: dict[str, Any]
) -> ToolResult:
    waited = f"{time.perf_counter() - started:.1f}"
    if admission == "aborted":
        reason = signal.reason if signal is not None and isinstance(signal.reason, str) else None
        error = f"Script aborted: {reason or 'This operation was aborted'}"
    elif deadline <= WORKER_WAIT_MS:
        error = (
            f"Script timed out: Execution timed out after {int(deadline)} ms while waiting for a free codemode "
            "worker"
        )
    else:
        error = (
            f"No codemode worker became free within {WORKER_WAIT_MS // 1000} seconds. All {max_workers()} "
            "workers, shared by every session in this process, are held by other scripts. Retry after they "
            "finish."
        )
    return ToolResult(
        content=[
            {"type": "text", "text": f"Script failed\nWall time {waited} seconds\nOutput:\n"},
            {"type": "text", "text": f"Script error:\n{error}\n\nThe script did not start."},
        ],
        details=details,
        is_error=True,
    )
