"""The ``read`` tool: a text file's lines with continuation notices, or an image as an attachment."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from tau.common.jsjson import js_number
from tau.llm.stream import AbortSignal
from tau.tools._async import in_thread_until_aborted, raise_if_aborted
from tau.tools.base import CONSTRAINED_SAMPLING, ToolContext, ToolDefinition, ToolResult, UpdateCallback
from tau.tools.fserrors import fs_error
from tau.tools.paths import resolve_read_path
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

if TYPE_CHECKING:  # pragma: no cover
    from tau.tools.read_lines import Selection

__all__ = ["read_tool"]

DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as "
    f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset "
    "until complete."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "required": ["type", "data", "mimeType", "note"],
            "properties": {
                "type": {"const": "image"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
                "note": {"type": "string"},
            },
        },
    ]
}


def read_tool() -> ToolDefinition:
    """The ``read`` tool definition."""
    return ToolDefinition(
        name="read",
        label="read",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_read,
        prompt_snippet="Read file contents",
        prompt_guidelines=["Use read to examine files instead of cat or sed."],
        constrained_sampling=dict(CONSTRAINED_SAMPLING),
        output_schema=OUTPUT_SCHEMA,
    )


async def execute_read(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """Read ``params["path"]`` (pi 1.6 ``read``)."""
    path: str = params["path"]
    offset = params.get("offset")
    limit = params.get("limit")
    result = await in_thread_until_aborted(lambda: _read(path, offset, limit, ctx, signal), signal)
    result.structured_content = _structured(result)
    return result


def _read(
    path: str, offset: float | None, limit: float | None, ctx: ToolContext, signal: AbortSignal | None
) -> ToolResult:
    absolute = resolve_read_path(path, ctx.cwd)
    _check_readable(absolute)
    mime_type = _sniff(absolute)
    if mime_type:
        return _read_image(absolute, mime_type, ctx)
    return _read_text(absolute, path, offset, limit, signal)


def _check_readable(absolute: str) -> None:
    if not os.access(absolute, os.R_OK):
        try:
            os.stat(absolute)
        except OSError as exc:
            raise fs_error(exc, "access", absolute) from exc
        raise fs_error(PermissionError(13, "Permission denied"), "access", absolute)
    _refuse_special_file(absolute)


# Beyond pi, which reads these until EOF: a FIFO blocks until a writer comes, /dev/zero never ends.
_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse_special_file(absolute: str) -> None:
    """Only regular files (and directories, which fail as pi's do) are opened: never a pipe or device."""
    try:
        mode = os.stat(absolute).st_mode
    except OSError as exc:
        raise fs_error(exc, "stat", absolute) from exc
    for is_kind, kind in _SPECIAL_FILES:
        if is_kind(mode):
            raise ValueError(
                f"Not a regular file: {absolute} is {kind}. read only reads regular files; "
                "use bash to read from pipes, devices and sockets."
            )


def _sniff(absolute: str) -> str | None:
    from tau.tools.images import SNIFF_BYTES, detect_image_mime_type

    try:
        with open(absolute, "rb") as handle:
            return detect_image_mime_type(handle.read(SNIFF_BYTES))
    except IsADirectoryError as exc:
        # Node opens a directory fine and fails on read(2), which it reports without the path.
        raise fs_error(exc, "read") from exc
    except OSError as exc:
        raise fs_error(exc, "open", absolute) from exc


def _read_image(absolute: str, mime_type: str, ctx: ToolContext) -> ToolResult:
    from tau.tools.images import prepare_image

    with open(absolute, "rb") as handle:
        data = handle.read()
    image = prepare_image(data, mime_type, auto_resize=ctx.auto_resize_images)
    if image.omitted:
        return ToolResult.text(f"Read image file [{mime_type}]\n{image.omitted}")
    note = "\n".join([f"Read image file [{image.mime_type}]", *image.hints])
    details = None
    if ctx.model_input is not None and "image" not in ctx.model_input:
        details = {"imageUnsupportedByModel": ctx.model}
    return ToolResult(
        content=[
            {"type": "text", "text": note},
            {"type": "image", "data": image.data, "mimeType": image.mime_type},
        ],
        details=details,
    )


def _select(absolute: str, start: float, limit: float | None, signal: AbortSignal | None) -> Selection:
    from tau.tools.read_lines import is_streamable_range, read_chunks, select_from_chunks, select_from_text

    if is_streamable_range(start, limit):
        return select_from_chunks(
            read_chunks(absolute),
            int(start),
            None if limit is None else int(limit),
            lambda: raise_if_aborted(signal),
        )
    with open(absolute, "rb") as handle:
        return select_from_text(handle.read().decode("utf-8", "replace"), start, limit)


def _read_text(
    absolute: str, path: str, offset: float | None, limit: float | None, signal: AbortSignal | None
) -> ToolResult:
    from tau.tools.read_lines import shown_lines

    start = max(0, offset - 1) if offset else 0
    selection = _select(absolute, start, limit, signal)
    total = selection.total_file_lines
    if start >= total:
        raise ValueError(f"Offset {js_number(offset or 0)} is beyond end of file ({total} lines total)")
    # Notices count the lines really shown. pi 1.6 computes them from the raw numbers, so a negative
    # or fractional limit gave "[14 more lines in file. Use offset=-2 to continue.]" for a 10-line file.
    first, end = shown_lines(start, limit, total)
    start_display = first + 1
    truncation = selection.truncation
    limit_display = f"{js_number(DEFAULT_MAX_BYTES)}"
    if truncation["firstLineExceedsLimit"]:
        size = format_size(selection.first_line_bytes)
        line = js_number(start_display)
        text_out = (
            f"[Line {line} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{line}p' {path} | head -c {limit_display}]"
        )
        return ToolResult.text(text_out, details={"truncation": truncation})
    if truncation["truncated"]:
        end_display = start_display + truncation["outputLines"] - 1
        shown = f"{js_number(start_display)}-{js_number(end_display)} of {total}"
        next_offset = js_number(end_display + 1)
        if truncation["truncatedBy"] == "lines":
            notice = f"[Showing lines {shown}. Use offset={next_offset} to continue.]"
        else:
            notice = f"[Showing lines {shown} ({format_size(DEFAULT_MAX_BYTES)} limit). Use offset={next_offset} to continue.]"
        return ToolResult.text(f"{truncation['content']}\n\n{notice}", details={"truncation": truncation})
    if limit is not None and end < total:
        return ToolResult.text(
            f"{truncation['content']}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
        )
    return ToolResult.text(truncation["content"])


def _structured(result: ToolResult) -> Any:
    """pi's ``toReadOutput``: the text, or the image block with its note."""
    text = next((block["text"] for block in result.content if block["type"] == "text"), "")
    image = next((block for block in result.content if block["type"] == "image"), None)
    if image is None:
        return text
    return {"type": "image", "data": image["data"], "mimeType": image["mimeType"], "note": text}
