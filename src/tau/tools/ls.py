"""The ``ls`` tool: a directory's entries (pi 1.6 ``core/tools/ls.ts``).

Entries are sorted case-insensitively the way Node's ``localeCompare`` sorts them, directories get
a ``/`` suffix, dotfiles are included, entries that cannot be stat'ed (a broken link) are left
out, and the listing stops at ``limit`` entries (500) or 50 KB with pi's notices.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from tau.common.collation import locale_sorted
from tau.common.jsjson import js_number
from tau.llm.stream import AbortSignal
from tau.tools._async import in_thread_until_aborted
from tau.tools.base import ToolContext, ToolDefinition, ToolError, ToolResult, UpdateCallback
from tau.tools.fserrors import fs_error
from tau.tools.paths import resolve_to_cwd
from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    MAX_SAFE_INTEGER,
    finish_output,
    positive_floor,
    truncate_head,
)

__all__ = ["ls_tool"]

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
    },
}


def ls_tool() -> ToolDefinition:
    """The ``ls`` tool definition (not active by default)."""
    return ToolDefinition(
        name="ls",
        label="ls",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_ls,
        prompt_snippet="List directory contents",
    )


async def execute_ls(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """List ``params["path"]`` (pi 1.6 ``ls``)."""
    directory = resolve_to_cwd(params.get("path") or ".", ctx.cwd)
    limit = positive_floor(params.get("limit"), DEFAULT_LIMIT)
    return await in_thread_until_aborted(lambda: _list(directory, limit), signal)


def _list(directory: str, limit: int) -> ToolResult:
    if not os.path.lexists(directory) or not os.path.exists(directory):
        raise ToolError(f"Path not found: {directory}")
    try:
        is_directory = stat.S_ISDIR(os.stat(directory).st_mode)
    except OSError as exc:
        raise fs_error(exc, "stat", directory) from exc
    if not is_directory:
        raise ToolError(f"Not a directory: {directory}")
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {fs_error(exc, 'scandir', directory)}") from exc
    results: list[str] = []
    limit_reached = False
    for name in locale_sorted(names):
        if len(results) >= limit:
            limit_reached = True
            break
        try:
            mode = os.stat(os.path.join(directory, name)).st_mode
        except OSError:
            continue  # a broken link, or gone since the listing
        results.append(name + ("/" if stat.S_ISDIR(mode) else ""))
    if not results:
        return ToolResult.text("(empty directory)")
    return finish_output(
        truncate_head("\n".join(results), max_lines=MAX_SAFE_INTEGER),
        (
            f"{js_number(limit)} entries limit reached. Use limit={js_number(limit * 2)} for more",
            "entryLimitReached",
            limit,
        )
        if limit_reached
        else None,
    )
