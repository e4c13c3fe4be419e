"""Action Fusion wired to the extension API: ``edit`` and ``write`` with an optional ``then_run``.

The built-in definitions (``edit_tool()``, ``write_tool()``) supply the schema, prompt text,
argument shim and mutation; this module adds ``then_run``, the per-file slot held through the
mutation and the command, the hash check between them, and the marker blocks. The command runs
through the built-in ``bash`` definition (``bash_tool()``), which takes the shell settings from the
call's context, never through a ``bash`` another extension registered.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from typing import Any

from tau.bundled.fusion.markers import (
    SUCCEEDED,
    failed_block,
    mutation_failed_text,
    run_error_text,
    skipped_text,
    succeeded_block,
    then_run_schema,
)
from tau.bundled.fusion.paths import resolve_tool_path
from tau.bundled.fusion.queue import FusedFileQueue
from tau.bundled.sol_common import banner_lines, show_savings
from tau.extension import (
    ToolAborted,
    ToolDefinition,
    ToolError,
    ToolResult,
    bash_tool,
    content_text,
    edit_tool,
    write_tool,
)

__all__ = ["MECHANISM", "SAVING", "ActionFusion", "host_tool_properties"]

MECHANISM = "Action Fusion"
SAVING = "1 model round-trip avoided"


def host_tool_properties(parameters: Any) -> dict[str, Any]:
    """``{"properties", "required"}`` of a host schema (a dict, or an object with ``to_json_schema``).

    A throwing or malformed schema gives ``{}``: then the tools are not replaced.
    """
    try:
        schema = parameters
        for name in ("to_json_schema", "toJsonSchema"):
            if not isinstance(schema, dict) and callable(getattr(schema, name, None)):
                schema = getattr(schema, name)()
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            return {}
        required = schema.get("required", [])
        if not isinstance(required, list):
            return {}
        return {"properties": dict(properties), "required": list(required)}
    except Exception:
        return {}


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


async def check_unchanged(path: str) -> None:
    """Hash the target, yield one event-loop tick, hash again; skip the command on any difference."""
    try:
        before = await asyncio.to_thread(_sha256, path)
        await asyncio.sleep(0)
        after = await asyncio.to_thread(_sha256, path)
    except OSError as exc:
        raise ToolError(skipped_text(f"cannot read the target ({exc.strerror or exc})")) from exc
    if before != after:
        raise ToolError(skipped_text("target content changed after the fused mutation"))


class ActionFusion:
    """The fused tools of one extension instance, sharing one queue."""

    def __init__(self, tau: Any, *, bash: ToolDefinition | None = None) -> None:
        self.tau = tau
        self.queue = FusedFileQueue()
        self.bash = bash or bash_tool()

    def install(self) -> list[str]:
        """Register the fused ``edit`` and ``write``; returns the names registered."""
        registered = []
        for base, verb in ((edit_tool(), "edit"), (write_tool(), "write")):
            fused = self.fused(base, verb)
            if fused is not None:
                self.tau.register_tool(fused)
                registered.append(fused.name)
        return registered

    def fused(self, base: ToolDefinition, verb: str) -> ToolDefinition | None:
        schema = host_tool_properties(base.parameters)
        if not schema:
            return None
        parameters = {
            **{k: v for k, v in base.parameters.items() if k not in ("properties", "required")},
            "type": "object",
            "required": schema["required"],
            "properties": {**schema["properties"], "then_run": then_run_schema(verb)},
        }

        async def execute(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
        ) -> ToolResult:
            return await self.execute(base, tool_call_id, params, signal, on_update, ctx)

        return dataclasses.replace(
            base,
            parameters=parameters,
            execute=execute,
            render_call=render_fused_call,
            render_result=render_fused_result,
        )

    async def execute(
        self,
        base: ToolDefinition,
        tool_call_id: str,
        params: dict[str, Any],
        signal: Any,
        on_update: Any,
        ctx: Any,
    ) -> ToolResult:
        then_run = params.get("then_run")
        mutation_params = {key: value for key, value in params.items() if key != "then_run"}
        absolute = resolve_tool_path(str(params.get("path", "")), ctx.cwd)
        async with self.queue.slot(absolute):
            if then_run is None:
                return await base.execute(tool_call_id, mutation_params, signal, on_update, ctx)
            try:
                mutation = await base.execute(tool_call_id, mutation_params, signal, on_update, ctx)
            except Exception as exc:  # the model reads why, and that the command never ran
                kind = ToolAborted if isinstance(exc, ToolAborted) else ToolError
                raise kind(mutation_failed_text(str(exc))) from exc
            if mutation.is_error:
                raise ToolError(mutation_failed_text(content_text(mutation.content)))
            await check_unchanged(absolute)
            result = await self.run_command(tool_call_id, then_run, mutation, signal, ctx)
        if not result.is_error:
            show_savings(ctx, MECHANISM, SAVING)
        return result

    async def run_command(
        self, tool_call_id: str, then_run: dict[str, Any], mutation: ToolResult, signal: Any, ctx: Any
    ) -> ToolResult:
        command = {"command": then_run["command"]}
        if then_run.get("timeout") is not None:
            command["timeout"] = then_run["timeout"]
        try:
            outcome = await self.bash.execute(f"{tool_call_id}:then_run", command, signal, None, ctx)
        except Exception as exc:  # timeout, abort, no exit code: fail, keeping the mutation's text
            raise ToolError(run_error_text(content_text(mutation.content), str(exc))) from exc
        output = content_text(outcome.content)
        if outcome.is_error:
            # Never rolled back: the file keeps the mutation; the result says the command failed.
            return ToolResult(
                content=[*mutation.content, failed_block(output)], details=mutation.details, is_error=True
            )
        return dataclasses.replace(mutation, content=[*mutation.content, succeeded_block(output)])


class UseDefaultRow(Exception):
    """Raised by a renderer to leave the row to the interactive mode's built-in rendering."""


def _fused(args: Any) -> dict[str, Any] | None:
    then_run = args.get("then_run") if isinstance(args, dict) else None
    return then_run if isinstance(then_run, dict) else None


def render_fused_call(args: dict[str, Any], context: Any = None, *_: Any) -> list[str]:
    """The row of a fused call: its title with the Action Fusion mark, then the two banner lines,
    which show while the call runs and after it succeeds, and go once it ends as an error (seed 003).

    The interactive mode takes the first line as the title and puts the others above the body; it
    falls back to its own row when the renderer raises, which is how a plain call keeps the
    built-in look.
    """
    then_run = _fused(args)
    if then_run is None:
        raise UseDefaultRow
    verb = "write" if "content" in args else "edit"
    title = f"{verb} {args.get('path', '')}  ⚡ then_run: $ {then_run.get('command', '')}"
    if isinstance(context, dict) and context.get("isError"):
        return [title]
    return [title, *banner_lines(MECHANISM, SAVING)]


def render_fused_result(result: Any, options: Any = None, *_: Any) -> list[str]:
    """The body of a fused call that succeeded: the usual output, then the command's (the banner
    above it is the call renderer's).

    Failed or plain calls keep the built-in body.
    """
    data = result.to_json() if isinstance(result, ToolResult) else result
    if not isinstance(data, dict) or data.get("isError"):
        raise UseDefaultRow
    blocks = [
        b.get("text", "")
        for b in data.get("content") or []
        if isinstance(b, dict) and b.get("type") == "text"
    ]
    if not blocks or not blocks[-1].startswith(SUCCEEDED):
        raise UseDefaultRow
    details = found_details if isinstance(found_details := data.get("details"), dict) else {}
    body = details["diff"] if isinstance(details.get("diff"), str) else "\n".join(blocks[:-1])
    return [*body.split("\n"), *blocks[-1].rstrip("\n").split("\n")]
