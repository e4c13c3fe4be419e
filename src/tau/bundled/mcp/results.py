"""MCP results as the model sees them (pi ``extensions/mcp/tools.ts`` and pi-mcp ``content``/``output-limit``).

Text and images pass through; embedded text resources become text, embedded images images; audio,
binary resources and resource links become short text (binary resources are saved to a temp file
the model can read). Model-facing text over 20 KB keeps its start and end around a ``…N chars
truncated…`` marker, as Codex cuts it, and the whole text is saved to ``<tmp>/tau-mcp-<hex>.txt``.
``structured_content`` carries the whole ``CallToolResult`` (without ``_meta``) for codemode
scripts: it reaches events, never the session file.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from tau.common import jsjson
from tau.extension import (
    ImageContent,
    TextContent,
    ToolResult,
    content_text,
    create_output_file,
    format_size,
    image_block,
    text_block,
)

__all__ = [
    "MCP_OUTPUT_MAX_BYTES",
    "OUTPUT_PREFIX",
    "Saver",
    "convert_tool_result",
    "limit_content",
    "save_to_temp_file",
    "to_model_content",
]

MCP_OUTPUT_MAX_BYTES = 20 * 1024
OUTPUT_PREFIX = "tau-mcp"
READ_MCP_RESOURCE_TOOL = "read_mcp_resource"

Saver = Callable[[bytes, str], Awaitable[str]]
Block = TextContent | ImageContent  # what a tool result holds
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


async def save_to_temp_file(data: bytes, extension: str) -> str:
    """Write ``data`` to a new private ``<tmp>/tau-mcp-<16 hex><extension>`` and return its path."""
    path, fd = create_output_file(OUTPUT_PREFIX, extension)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        os.unlink(path)
        raise
    return path


def _llm_block(block: dict[str, Any]) -> Block:
    """pi-mcp ``blockToLlmContent``: one MCP content block as a text or image block."""
    kind = block.get("type")
    if kind == "text":
        return text_block(block.get("text", ""))
    if kind == "image":
        return image_block(block.get("data", ""), block.get("mimeType", ""))
    if kind == "audio":
        return text_block(f"[audio {block.get('mimeType')} omitted]")
    if kind == "resource_link":
        return text_block(f"{block.get('name')}: {block.get('uri')}")
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return text_block(resource["text"])
        mime = resource.get("mimeType")
        if isinstance(mime, str) and mime.startswith("image/"):
            return image_block(resource.get("blob", ""), mime)
        return text_block(f"[binary resource {resource.get('uri')} ({mime or 'unknown type'}) omitted]")
    return text_block(f"[unsupported MCP content {kind}]")


def _is_text_mime(mime: Any) -> bool:
    if not isinstance(mime, str) or not mime:
        return False
    kind = mime.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))


def _extension_of(uri: str) -> str:
    try:
        path = urlsplit(uri).path if "://" in uri or uri.startswith(("/", "file:")) else uri
    except ValueError:
        path = uri
    match = _EXTENSION.search(path)
    return match.group(0) if match else ".bin"


async def _block_content(server: str, block: dict[str, Any], readable: bool, save: Saver) -> list[Block]:
    kind = block.get("type")
    if kind == "resource_link":
        size = block.get("size")
        details = [
            part for part in (block.get("mimeType"), None if size is None else format_size(int(size))) if part
        ]
        described = f": {block['description']}" if block.get("description") else ""
        read = f'. Read it with {READ_MCP_RESOURCE_TOOL} (server "{server}")' if readable else ""
        shown = f" ({', '.join(details)})" if details else ""
        title = block.get("title") if block.get("title") is not None else block.get("name")
        return [text_block(f'[Resource {block.get("uri")} "{title}"{shown}{described}{read}]')]
    resource = block.get("resource") if kind == "resource" else None
    if isinstance(resource, dict) and "blob" in resource:
        mime = resource.get("mimeType")
        if not (isinstance(mime, str) and mime.startswith("image/")):
            import base64

            uri = str(resource.get("uri", ""))
            data = base64.b64decode(resource.get("blob") or "")
            if _is_text_mime(mime):
                return [text_block(data.decode("utf-8", "replace"))]
            described = f"{mime or 'unknown type'}, {format_size(len(data))}"
            try:
                path = await save(data, _extension_of(uri))
            except Exception as exc:  # a full disk must not lose the rest of the result
                return [text_block(f"[Binary resource {uri} ({described}) could not be saved: {exc}]")]
            return [text_block(f"[Binary resource {uri} ({described}) saved to {path}]")]
    return [_llm_block(block)]


async def to_model_content(
    server: str, blocks: list[dict[str, Any]], readable: bool = False, save: Saver = save_to_temp_file
) -> list[Block]:
    """The model-facing content of ``server``'s content blocks, before the output limit."""
    content: list[Block] = []
    for block in blocks:
        content.extend(await _block_content(server, block, readable, save))
    return content


def _truncate_middle(text: str, max_bytes: int) -> tuple[str, int, int] | None:
    """``(head…N chars truncated…tail, total bytes, total lines)``; ``None`` when ``text`` fits.

    Half of ``max_bytes`` from each end, cut at character boundaries; ``N`` counts code points.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return None

    def boundary(index: int) -> bool:
        return index >= len(data) or (data[index] & 0xC0) != 0x80

    head_end = max_bytes // 2
    while head_end > 0 and not boundary(head_end):
        head_end -= 1
    tail_start = len(data) - (max_bytes - max_bytes // 2)
    while tail_start < len(data) and not boundary(tail_start):
        tail_start += 1
    head = data[:head_end].decode("utf-8", "surrogatepass")
    tail = data[tail_start:].decode("utf-8", "surrogatepass")
    removed = len(data[head_end:tail_start].decode("utf-8", "surrogatepass"))
    # A final newline ends the last line instead of starting another.
    lines = text.count("\n") + 1 - (1 if text.endswith("\n") else 0)
    return f"{head}…{removed} chars truncated…{tail}", len(data), lines


async def limit_content(
    content: list[Block], save: Saver | None = save_to_temp_file
) -> tuple[list[Block], str | None]:
    """Keep model-facing text within :data:`MCP_OUTPUT_MAX_BYTES` (pi-mcp ``limitMcpContent``).

    Longer text becomes one text block with a header and the path of the saved full text; images
    follow it. Returns ``(content, full output path or None)``.
    """
    combined = content_text(content)
    truncation = _truncate_middle(combined, MCP_OUTPUT_MAX_BYTES)
    if truncation is None:
        return content, None
    cut, total_bytes, total_lines = truncation
    full_path: str | None = None
    where = ""
    if save is not None:
        try:
            full_path = await save(combined.encode("utf-8", "surrogatepass"), ".txt")
            where = f"\n\n[Full output: {full_path} (read it with offset/limit)]"
        except Exception as exc:
            where = f"\n\n[Could not save the full output: {exc}]"
    tokens = math.ceil(total_bytes / 4)
    text = f"Warning: truncated output (original token count: {tokens})\nTotal output lines: {total_lines}\n\n{cut}{where}"
    images = [block for block in content if block.get("type") == "image"]
    return [text_block(text), *images], full_path


async def convert_tool_result(
    server: str,
    tool: str,
    result: dict[str, Any],
    readable: bool = False,
    save: Saver = save_to_temp_file,
) -> ToolResult:
    """A ``tools/call`` result (plain JSON, as the server sent it) as the tool's result.

    ``isError`` results are error results that keep the structured result (pi ``convertMcpResult``).
    """
    blocks = [block for block in result.get("content") or [] if isinstance(block, dict)]
    if blocks:
        converted = await to_model_content(server, blocks, readable, save)
    else:
        converted = []
        if "structuredContent" in result:
            converted.append(text_block(jsjson.dumps_indented(result["structuredContent"])))
    is_error = result.get("isError") is True
    if is_error and content_text(converted) == "":
        converted.append(text_block(f"MCP tool {server}/{tool} returned an error"))
    content, full_path = await limit_content(converted, save)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    script_result = {key: value for key, value in result.items() if key != "_meta"}
    return ToolResult(content=content, details=details, structured_content=script_result, is_error=is_error)
