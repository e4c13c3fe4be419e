"""The ``bash`` tool: run a command, show the tail of its output, keep the rest in a spill file."""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Any

from tau.llm.stream import AbortSignal
from tau.tools.base import (
    CONSTRAINED_SAMPLING,
    ToolContext,
    ToolDefinition,
    ToolError,
    ToolResult,
    UpdateCallback,
)
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

if TYPE_CHECKING:  # pragma: no cover
    from tau.tools.bash_exec import BashOperations, CommandTimedOut
    from tau.tools.output import OutputSnapshot

__all__ = ["BASH_SPILL_PREFIX", "bash_tool"]

BASH_SPILL_PREFIX = "tau-bash"
UPDATE_THROTTLE_SECONDS = 0.1
# structuredContent.output: what programmatic callers get, beyond the model-facing tail.
STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to "
    f"last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). If truncated, full "
    "output is saved to a temp file. Optionally provide a timeout in seconds."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
    "properties": {
        "output": {"type": "string", "description": "Combined stdout and stderr, possibly truncated"},
        "truncated": {"type": "boolean"},
        "full_output_path": {"type": "string", "description": "Full output, when truncated"},
        "exit_code": {"type": "number"},
        "wall_time_seconds": {"type": "number"},
    },
}


def bash_tool(
    operations: BashOperations | None = None, *, expose_session_environment: bool = True
) -> ToolDefinition:
    """The ``bash`` tool definition; ``operations`` replaces local execution (a remote shell, a sandbox)."""

    async def execute(
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: UpdateCallback | None,
        ctx: ToolContext,
    ) -> ToolResult:
        from tau.tools.bash_exec import LocalBashOperations

        ops = operations or LocalBashOperations(ctx.shell_path)
        return await _BashCall(params, signal, on_update, ctx, ops, expose_session_environment).run()

    guidelines = ["You can inspect TAU_* environment variables for current model and session details."]
    return ToolDefinition(
        name="bash",
        label="bash",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute,
        prompt_snippet="Execute bash commands (ls, grep, find, etc.)",
        prompt_guidelines=guidelines if expose_session_environment else [],
        constrained_sampling=dict(CONSTRAINED_SAMPLING),
        output_schema=OUTPUT_SCHEMA,
    )


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def _js_round_tenths(seconds: float) -> float:
    tenths = math.floor(seconds * 10 + 0.5)
    return tenths // 10 if tenths % 10 == 0 else tenths / 10


class _BashCall:
    """One execution of the bash tool: output accumulation, throttled updates, the final result."""

    def __init__(
        self,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: UpdateCallback | None,
        ctx: ToolContext,
        ops: BashOperations,
        expose_session_environment: bool,
    ) -> None:
        from tau.tools.output import OutputAccumulator
        from tau.tools.shell import shell_environment

        command: str = params["command"]
        prefix = ctx.shell_command_prefix
        self.command = f"{prefix}\n{command}" if prefix else command
        self.timeout = params.get("timeout")
        self.signal = signal
        self.on_update = on_update
        self.ctx = ctx
        self.ops = ops
        self.env = shell_environment(ctx.session_environment() if expose_session_environment else {})
        self.output = OutputAccumulator(temp_file_prefix=BASH_SPILL_PREFIX)
        self.accepting = True
        self.dirty = False
        self.last_update = 0.0
        self.timer: asyncio.TimerHandle | None = None

    async def run(self) -> ToolResult:
        from tau.tools.bash_exec import CommandAborted, CommandTimedOut

        if self.on_update is not None:
            self.on_update(ToolResult(content=[], details=None))
        started = time.monotonic()
        try:
            try:
                exit_code = await self.ops.exec(
                    self.command,
                    self.ctx.cwd,
                    on_data=self._on_data,
                    signal=self.signal,
                    timeout=self.timeout,
                    env=self.env,
                )
            except CommandAborted:
                raise ToolError(
                    _with_status(self._format(self._finish(), "")[0], "Command aborted")
                ) from None
            except CommandTimedOut as exc:
                raise ToolError(
                    _with_status(self._format(self._finish(), "")[0], _timeout_status(exc))
                ) from None
            except BaseException:
                self._finish()
                raise
            snapshot = self._finish()
            text, details = self._format(snapshot)
            if exit_code is None:
                raise ToolError(_with_status(text, "Command terminated without an exit code"))
            return self._result(snapshot, text, details, exit_code, time.monotonic() - started)
        finally:
            self._cancel_timer()

    def _result(
        self, snapshot: OutputSnapshot, text: str, details: Any, exit_code: int, elapsed: float
    ) -> ToolResult:
        full = self.output.read_full_output(STRUCTURED_OUTPUT_MAX_BYTES)
        structured: dict[str, Any] = {"output": full.content, "truncated": full.truncated}
        if full.truncated and snapshot.full_output_path:
            structured["full_output_path"] = snapshot.full_output_path
        structured["exit_code"] = exit_code
        structured["wall_time_seconds"] = _js_round_tenths(elapsed)
        if exit_code != 0:
            return ToolResult.error(
                _with_status(text, f"Command exited with code {exit_code}"),
                details=details,
                structured_content=structured,
            )
        return ToolResult.text(text, details=details, structured_content=structured)

    def _on_data(self, data: bytes) -> None:
        if not self.accepting:
            return
        self.output.append(data)
        self._schedule_update()

    def _finish(self) -> OutputSnapshot:
        self.accepting = False
        self.output.finish()
        self._cancel_timer()
        self._emit_update()
        snapshot = self.output.snapshot(persist_if_truncated=True)
        self.output.close_file()
        return snapshot

    def _format(self, snapshot: OutputSnapshot, empty_text: str = "(no output)") -> tuple[str, Any]:
        truncation = snapshot.truncation
        text = snapshot.content or empty_text
        if not truncation["truncated"]:
            return text, None
        details = {"truncation": truncation, "fullOutputPath": snapshot.full_output_path}
        start = truncation["totalLines"] - truncation["outputLines"] + 1
        end = truncation["totalLines"]
        full = f"Full output: {snapshot.full_output_path}"
        failure = self.output.spill_failure
        if failure is not None:  # what the file kept and why the rest is missing, in place of its path
            full = failure.describe(self.output.raw_bytes)
            details["fullOutputError"] = full
        if truncation["lastLinePartial"]:
            shown, line_size = (
                format_size(truncation["outputBytes"]),
                format_size(self.output.last_line_bytes),
            )
            text += f"\n\n[Showing last {shown} of line {end} (line is {line_size}). {full}]"
        elif truncation["truncatedBy"] == "lines":
            text += f"\n\n[Showing lines {start}-{end} of {truncation['totalLines']}. {full}]"
        else:
            limit = format_size(DEFAULT_MAX_BYTES)
            text += f"\n\n[Showing lines {start}-{end} of {truncation['totalLines']} ({limit} limit). {full}]"
        return text, details

    # Throttled partial results: at most one per UPDATE_THROTTLE_SECONDS, the last one always sent.

    def _schedule_update(self) -> None:
        if self.on_update is None:
            return
        self.dirty = True
        delay = UPDATE_THROTTLE_SECONDS - (time.monotonic() - self.last_update)
        if delay <= 0:
            self._cancel_timer()
            self._emit_update()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self.timer = None
        self._emit_update()

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _emit_update(self) -> None:
        if self.on_update is None or not self.dirty:
            return
        self.dirty = False
        self.last_update = time.monotonic()
        snapshot = self.output.snapshot(persist_if_truncated=True)
        details: dict[str, Any] = {}
        if snapshot.truncation["truncated"]:
            details["truncation"] = snapshot.truncation
        if snapshot.full_output_path:
            details["fullOutputPath"] = snapshot.full_output_path
        self.on_update(
            ToolResult(content=[{"type": "text", "text": snapshot.content or ""}], details=details)
        )


def _timeout_status(exc: CommandTimedOut) -> str:
    status = f"Command timed out after {str(exc).split(':', 1)[1]} seconds"
    if exc.shell_exit is not None:
        after = exc.shell_exit.after_seconds
        after_text = str(int(after)) if after == int(after) else str(after)
        status += (
            f". The shell exited with code {exc.shell_exit.exit_code} after {after_text} seconds, but background "
            "processes it started kept writing output until the timeout."
        )
    return status
