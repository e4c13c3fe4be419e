"""MCP tools as tau tool definitions (pi ``extensions/mcp/tools.ts``).

Each server tool becomes ``mcp__<server>__<tool>`` with the server's description, its input schema
as an object schema, an output schema describing the ``CallToolResult`` codemode scripts receive,
its boolean annotation hints and the server as its namespace. ``codemode`` exposure is the tool
exposure ``deferred``: both stay out of the codemode description and are callable from scripts;
they differ only in which tool the MCP extension activates to reach them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tau.bundled.mcp.results import convert_tool_result
from tau.common import jsjson
from tau.common.jsstr import js_trim
from tau.extension import ToolDefinition, ToolResult, message_text

__all__ = [
    "create_result_schema",
    "create_tool_definition",
    "normalize_input_schema",
    "render_mcp_call",
    "render_mcp_result",
    "to_tool_exposure",
]

_ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# MCP content blocks as one compact type with the fields scripts read most (pi CONTENT_BLOCK_SCHEMA).
_CONTENT_BLOCK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["text", "image", "audio", "resource_link", "resource"]},
        "text": {"type": "string"},
        "data": {"type": "string"},
        "mimeType": {"type": "string"},
    },
    "required": ["type"],
    "additionalProperties": True,
}
# Keywords whose values are data (a `$ref` in them is not a reference), and those mapping names to schemas.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)


def to_tool_exposure(exposure: str) -> str:
    """The tool exposure of an MCP exposure: ``codemode`` tools are ``deferred`` tools."""
    return "deferred" if exposure == "codemode" else exposure


def normalize_input_schema(schema: Any) -> dict[str, Any]:
    """The input schema as an object schema with ``properties`` (other keywords kept, in order)."""
    schema = dict(schema) if isinstance(schema, dict) else {}
    schema["type"] = schema.get("type") if schema.get("type") is not None else "object"
    if "properties" not in schema:
        schema["properties"] = {}
    return schema


def _relocate(schema: Any, pointer: str) -> Any:
    """``schema`` as a subschema at ``pointer``: its local ``$ref``s rewritten to resolve below it."""
    if isinstance(schema, list):
        return [_relocate(item, pointer) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str) and (value == "#" or value.startswith("#/")):
            out[key] = pointer + value[1:]
        elif key in _DATA_KEYWORDS:
            out[key] = value
        elif key in _MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: _relocate(sub, pointer) for name, sub in value.items()}
        else:
            out[key] = _relocate(value, pointer)
    return out


def create_result_schema(structured: Any) -> dict[str, Any]:
    """The output schema of every MCP tool: the ``CallToolResult`` scripts receive, with the tool's
    own output schema as ``structuredContent``."""
    return {
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": _CONTENT_BLOCK_SCHEMA},
            "structuredContent": _relocate(structured, "#/properties/structuredContent")
            if isinstance(structured, dict)
            else {},
            "isError": {"type": "boolean"},
        },
        "required": ["content"],
        "additionalProperties": True,
    }


def _annotations(tool: dict[str, Any]) -> dict[str, bool] | None:
    given = found_annotations if isinstance(found_annotations := tool.get("annotations"), dict) else {}
    hints = {hint: given[hint] for hint in _ANNOTATION_HINTS if isinstance(given.get(hint), bool)}
    return hints or None


def _js_number(value: Any) -> str:
    return (
        jsjson.dumps_str(value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else str(value)
    )


def render_mcp_call(label: str) -> Callable[..., str]:
    """The interactive row title of a call: ``server/tool {arguments}``."""

    def render(args: Any, *_: Any) -> str:
        shown = jsjson.dumps_str(args) if args else ""
        return f"{label} {shown}".rstrip()

    return render


def render_mcp_result(result: Any, *_: Any) -> list[str]:
    """The row body: the text of the result, then where the full output went when it was cut."""
    data = result if isinstance(result, dict) else {}
    text = message_text(data)
    lines = text.strip().split("\n") if text.strip() else []
    details = found_details if isinstance(found_details := data.get("details"), dict) else {}
    if details.get("fullOutputPath"):
        lines.append(f"Full output: {details['fullOutputPath']}")
    return lines


def create_tool_definition(
    *,
    server: str,
    tool: dict[str, Any],
    name: str,
    exposure: str,
    namespace: dict[str, Any],
    get_connection: Callable[[], Awaitable[Any]],
    readable: Callable[[], bool],
) -> ToolDefinition:
    """The definition of one server tool; ``get_connection`` resolves the server at call time (a call
    prepared before a reconnect runs on the new connection)."""
    tool_name = tool["name"]
    annotations = found_annotations if isinstance(found_annotations := tool.get("annotations"), dict) else {}
    title = tool.get("title") if tool.get("title") is not None else annotations.get("title")
    description = (
        js_trim(tool.get("description") or "") or title or f"MCP tool {tool_name} from server {server}"
    )
    label = f"{server}/{tool_name}"

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> ToolResult:
        connection = await get_connection()

        def progress(value: float, total: float | None, message: str | None) -> None:
            if on_update is None:
                return
            text = (
                message
                if message is not None
                else f"Progress {_js_number(value)}" + ("" if total is None else f"/{_js_number(total)}")
            )
            on_update(
                ToolResult(
                    content=[{"type": "text", "text": text}], details={"server": server, "tool": tool_name}
                )
            )

        result = await connection.call_tool(tool_name, params or {}, signal, progress)
        return await convert_tool_result(server, tool_name, result, readable())

    return ToolDefinition(
        name=name,
        label=label,
        description=description,
        parameters=normalize_input_schema(tool.get("inputSchema")),
        execute=execute,
        exposure=to_tool_exposure(exposure),
        namespace=namespace,
        annotations=_annotations(tool),
        output_schema=create_result_schema(tool.get("outputSchema")),
        render_call=render_mcp_call(label),
        render_result=render_mcp_result,
    )
