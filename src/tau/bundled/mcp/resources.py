"""MCP resources through the tools Codex and opencode use (pi ``extensions/mcp/resources.ts``):
``list_mcp_resources``, ``list_mcp_resource_templates`` and ``read_mcp_resource``.

Listings are JSON (``{server?, resources: [{server, ...resource}], nextCursor?}``): with ``server``
one page, ``cursor`` continuing it; without, every page of every server, failures listed under
``errors``. MCP App resources (``ui://`` URIs, ``profile=mcp-app`` HTML) and icons are left out.
Read resources become text and images; binary resources are saved to temp files.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from tau.bundled.mcp.results import limit_content, to_model_content
from tau.bundled.mcp.tools import to_tool_exposure
from tau.common import jsjson
from tau.common.collation import locale_key
from tau.common.jsstr import js_trim
from tau.extension import ToolDefinition, ToolResult, text_block

__all__ = [
    "LIST_MCP_RESOURCES_TOOL",
    "LIST_MCP_RESOURCE_TEMPLATES_TOOL",
    "READ_MCP_RESOURCE_TOOL",
    "RESOURCE_TOOL_NAMES",
    "create_resource_tool_definitions",
]

LIST_MCP_RESOURCES_TOOL = "list_mcp_resources"
LIST_MCP_RESOURCE_TEMPLATES_TOOL = "list_mcp_resource_templates"
READ_MCP_RESOURCE_TOOL = "read_mcp_resource"
RESOURCE_TOOL_NAMES = frozenset(
    {LIST_MCP_RESOURCES_TOOL, LIST_MCP_RESOURCE_TEMPLATES_TOOL, READ_MCP_RESOURCE_TOOL}
)

_MCP_APP_PROFILE = re.compile(r';\s*profile\s*=\s*"?mcp-app"?', re.IGNORECASE)


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": _string("MCP server name. Omit to list every server with resources."),
        "cursor": _string(
            "Opaque cursor from a previous call with the same server; omit for the first page."
        ),
    },
    "additionalProperties": False,
}
_READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": _string(
            "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."
        ),
        "uri": _string("Resource URI to read. Must be one of the URIs returned by list_mcp_resources."),
    },
    "required": ["server", "uri"],
    "additionalProperties": False,
}
_OPTIONAL_STRING: dict[str, Any] = {"type": "string"}
_LISTING_ERRORS: dict[str, Any] = {
    "type": "array",
    "description": "Servers that could not be listed",
    "items": {
        "type": "object",
        "properties": {"server": {"type": "string"}, "error": {"type": "string"}},
        "required": ["server", "error"],
    },
}
_LIST_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": _OPTIONAL_STRING,
        "resources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "server": {"type": "string"},
                    "uri": {"type": "string"},
                    "name": {"type": "string"},
                    "title": _OPTIONAL_STRING,
                    "description": _OPTIONAL_STRING,
                    "mimeType": _OPTIONAL_STRING,
                    "size": {"type": "number"},
                },
                "required": ["server", "uri", "name"],
            },
        },
        "nextCursor": _OPTIONAL_STRING,
        "errors": _LISTING_ERRORS,
    },
    "required": ["resources"],
}
_TEMPLATES_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": _OPTIONAL_STRING,
        "resourceTemplates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "server": {"type": "string"},
                    "uriTemplate": {"type": "string", "description": "RFC 6570 URI template"},
                    "name": {"type": "string"},
                    "title": _OPTIONAL_STRING,
                    "description": _OPTIONAL_STRING,
                    "mimeType": _OPTIONAL_STRING,
                },
                "required": ["server", "uriTemplate", "name"],
            },
        },
        "nextCursor": _OPTIONAL_STRING,
        "errors": _LISTING_ERRORS,
    },
    "required": ["resourceTemplates"],
}
_READ_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {"type": "string"},
        "uri": {"type": "string"},
        "contents": {
            "type": "array",
            "items": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "uri": {"type": "string"},
                            "mimeType": _OPTIONAL_STRING,
                            "text": {"type": "string"},
                        },
                        "required": ["uri", "text"],
                    },
                    {
                        "type": "object",
                        "properties": {
                            "uri": {"type": "string"},
                            "mimeType": _OPTIONAL_STRING,
                            "blob": {"type": "string", "description": "base64"},
                        },
                        "required": ["uri", "blob"],
                    },
                ]
            },
        },
    },
    "required": ["server", "uri", "contents"],
}
_LIST_DESCRIPTION = (
    "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to "
    "language models, such as files, database schemas, or application-specific information. Prefer resources "
    "over web search when possible."
)
_TEMPLATES_DESCRIPTION = (
    "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share "
    "data that takes parameters and provides context to language models, such as files, database schemas, or "
    "application-specific information. Prefer resource templates over web search when possible."
)
_READ_DESCRIPTION = "Read a specific resource from an MCP server given the server name and resource URI."


def _is_app(item: dict[str, Any]) -> bool:
    uri = item.get("uri") or item.get("uriTemplate") or ""
    return str(uri).startswith("ui://") or bool(_MCP_APP_PROFILE.search(str(item.get("mimeType") or "")))


def _listed(server: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"server": server, **{key: value for key, value in item.items() if key not in ("_meta", "icons")}}


def _argument(params: Any, key: str) -> str | None:
    value = (params or {}).get(key) if isinstance(params, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return js_trim(value) or None


async def _json_result(tool: str, server: str | None, payload: dict[str, Any]) -> ToolResult:
    content, full_path = await limit_content([text_block(jsjson.dumps_str(payload))])
    details: dict[str, Any] = {"server": server or "", "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    return ToolResult(content=content, details=details, structured_content=payload)


def create_resource_tool_definitions(exposure: str, servers: Callable[[], list[Any]]) -> list[ToolDefinition]:
    """The three resource tools; ``servers()`` gives the connections they reach, at call time."""
    read_only = {"readOnlyHint": True}

    def find(name: str) -> Any:
        available = servers()
        server = next((candidate for candidate in available if candidate.name == name), None)
        if server is not None:
            return server
        names = ", ".join(candidate.name for candidate in available)
        raise ValueError(
            f'MCP server "{name}" has no resources' + (f". Servers with resources: {names}" if names else "")
        )

    async def listing(params: Any, signal: Any, key: str, one_page: str, every_page: str) -> dict[str, Any]:
        server_name, cursor = _argument(params, "server"), _argument(params, "cursor")
        if server_name:
            server = find(server_name)
            page = await getattr(server, one_page)(cursor, signal)
            items = [item for item in page.get(key) or [] if isinstance(item, dict) and not _is_app(item)]
            payload: dict[str, Any] = {
                "server": server.name,
                key: [_listed(server.name, item) for item in items],
            }
            if "nextCursor" in page:
                payload["nextCursor"] = page["nextCursor"]
            return payload
        if cursor:
            raise ValueError("cursor can only be used when a server is specified")
        ordered = sorted(servers(), key=lambda server: locale_key(server.name))
        results = await asyncio.gather(
            *(getattr(server, every_page)() for server in ordered), return_exceptions=True
        )
        collected: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for server, result in zip(ordered, results, strict=True):
            if isinstance(result, BaseException):
                errors.append({"server": server.name, "error": str(result) or type(result).__name__})
            else:
                collected.extend(_listed(server.name, item) for item in result if not _is_app(item))
        payload = {key: collected}
        if errors:
            payload["errors"] = errors
        return payload

    async def list_resources(
        tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        payload = await listing(params, signal, "resources", "resources_page", "all_resources")
        return await _json_result(LIST_MCP_RESOURCES_TOOL, _argument(params, "server"), payload)

    async def list_templates(
        tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        payload = await listing(
            params, signal, "resourceTemplates", "resource_templates_page", "all_resource_templates"
        )
        return await _json_result(LIST_MCP_RESOURCE_TEMPLATES_TOOL, _argument(params, "server"), payload)

    async def read_resource(
        tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        server_name, uri = _argument(params, "server"), _argument(params, "uri")
        if not server_name:
            raise ValueError("server must be provided")
        if not uri:
            raise ValueError("uri must be provided")
        server = find(server_name)
        result = await server.read_resource(uri, signal)
        contents = [item for item in result.get("contents") or [] if isinstance(item, dict)]
        blocks: list[dict[str, Any]] = []
        for item in contents:
            if len(contents) > 1:  # several contents (a directory) are labelled with their URIs
                blocks.append({"type": "text", "text": f"{item.get('uri')}:"})
            blocks.append({"type": "resource", "resource": item})
        converted = await to_model_content(server.name, blocks)
        content, full_path = await limit_content(
            converted if converted else [text_block(f"Resource {uri} is empty.")]
        )
        details: dict[str, Any] = {"server": server.name, "tool": READ_MCP_RESOURCE_TOOL}
        if full_path:
            details["fullOutputPath"] = full_path
        stripped = [{key: value for key, value in item.items() if key != "_meta"} for item in contents]
        return ToolResult(
            content=content,
            details=details,
            structured_content={"server": server.name, "uri": uri, "contents": stripped},
        )

    tool_exposure = to_tool_exposure(exposure)
    return [
        ToolDefinition(
            name=LIST_MCP_RESOURCES_TOOL,
            label=LIST_MCP_RESOURCES_TOOL,
            description=_LIST_DESCRIPTION,
            parameters=_LIST_PARAMETERS,
            execute=list_resources,
            exposure=tool_exposure,
            annotations=dict(read_only),
            output_schema=_LIST_OUTPUT,
        ),
        ToolDefinition(
            name=LIST_MCP_RESOURCE_TEMPLATES_TOOL,
            label=LIST_MCP_RESOURCE_TEMPLATES_TOOL,
            description=_TEMPLATES_DESCRIPTION,
            parameters=_LIST_PARAMETERS,
            execute=list_templates,
            exposure=tool_exposure,
            annotations=dict(read_only),
            output_schema=_TEMPLATES_OUTPUT,
        ),
        ToolDefinition(
            name=READ_MCP_RESOURCE_TOOL,
            label=READ_MCP_RESOURCE_TOOL,
            description=_READ_DESCRIPTION,
            parameters=_READ_PARAMETERS,
            execute=read_resource,
            exposure=tool_exposure,
            annotations=dict(read_only),
            output_schema=_READ_OUTPUT,
        ),
    ]
