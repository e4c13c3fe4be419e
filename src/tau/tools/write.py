"""The ``write`` tool: create or overwrite a file, creating its parent directories."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tau.common.lazy_regex import lazy_pattern
from tau.llm.stream import AbortSignal
from tau.tools._async import raise_if_aborted
from tau.tools.base import CONSTRAINED_SAMPLING, ToolContext, ToolDefinition, ToolResult, UpdateCallback
from tau.tools.fserrors import fs_error
from tau.tools.mutation_queue import with_file_mutation_queue
from tau.tools.paths import resolve_to_cwd

__all__ = ["write_file_text", "write_tool"]

DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)

_LONE_SURROGATE = lazy_pattern("[\ud800-\udfff]")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "content"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
}


def write_tool() -> ToolDefinition:
    """The ``write`` tool definition."""
    return ToolDefinition(
        name="write",
        label="write",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_write,
        prompt_snippet="Create or overwrite files",
        prompt_guidelines=["Use write only for new files or complete rewrites."],
        constrained_sampling=dict(CONSTRAINED_SAMPLING),
    )


async def execute_write(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """Write ``params["content"]`` to ``params["path"]`` (pi 1.6 ``write``)."""
    path: str = params["path"]
    content: str = params["content"]
    absolute = resolve_to_cwd(path, ctx.cwd)

    async def mutate() -> ToolResult:
        # Aborts are checked between steps, never mid-write, so the queue stays held until the
        # file system call has settled.
        raise_if_aborted(signal)
        await asyncio.to_thread(make_parent_dirs, absolute)
        raise_if_aborted(signal)
        await asyncio.to_thread(write_file_text, absolute, content)
        raise_if_aborted(signal)
        return ToolResult.text(f"Successfully wrote to {path}")

    return await with_file_mutation_queue(absolute, mutate)


def make_parent_dirs(absolute: str) -> None:
    """``mkdir -p`` of the file's directory, failing as Node's ``mkdir`` does."""
    directory = os.path.dirname(absolute)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise fs_error(exc, "mkdir", directory) from exc


def write_file_text(absolute: str, content: str) -> None:
    """Write ``content`` as UTF-8 (lone surrogates become U+FFFD, as Node writes them)."""
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        data = _LONE_SURROGATE.sub("\ufffd", content).encode("utf-8")
    try:
        with open(absolute, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise fs_error(exc, "open", absolute) from exc
