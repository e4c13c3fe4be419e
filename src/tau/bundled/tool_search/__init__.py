"""tool-search: ``tool_search`` finds tools that are not declared and declares the matches (pi 1.6's
built-in ``builtin:tool-search``).

It searches the registered tools with ``codemode`` or ``deferred`` exposure that are not active (MCP
tools of ``deferred`` servers, say), ranks them with BM25 (:mod:`tau.bundled.tool_search.ranker`)
and activates the best ones, so the next request declares them: the change is recorded in the
transcript like any tool change and survives ``/tree``, resume and fork on that branch. The tool is
registered inactive; the ``mcp`` extension activates it for ``deferred`` servers, or name it in
``--tools``/``defaultTools``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_LIMIT", "TOOL_NAME", "TOOL_SEARCH_DESCRIPTION", "extension", "search_and_load"]

TOOL_NAME = "tool_search"
DEFAULT_LIMIT = 8
# It names no tool, so it stays the same while tools register (MCP servers connecting).
TOOL_SEARCH_DESCRIPTION = (
    "# Tool discovery\n\n"
    "Searches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n"
    "Some of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you "
    f"should use this tool (`{TOOL_NAME}`) to search for the required tools. For MCP tool discovery, always "
    f"use `{TOOL_NAME}`."
)
_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "description": "Search query for deferred tools."},
        "limit": {
            "type": "number",
            "description": f"Maximum number of tools to return. Defaults to {DEFAULT_LIMIT}.",
        },
    },
}


def search_and_load(tau: Any, query: str, limit: int) -> list[dict[str, str]]:
    """Rank the searchable tools that are not active and activate the matches; ``[{name, description}]``."""
    from tau.bundled.tool_search.ranker import Bm25Ranker, search_document

    active = list(tau.get_active_tools())
    candidates = [
        tool
        for tool in tau.get_all_tools()
        if tool.get("exposure") in ("codemode", "deferred") and tool["name"] not in active
    ]
    matches = Bm25Ranker().rank(query, [search_document(tool) for tool in candidates], limit)
    if matches:
        tau.set_active_tools([*active, *(name for name, _ in matches)])
    by_name = {tool["name"]: tool for tool in candidates}
    return [{"name": name, "description": by_name[name].get("description") or ""} for name, _ in matches]


def _first_line(text: str) -> str:
    from tau.common.jsstr import js_trim

    return js_trim(text).replace("\r\n", "\n").split("\n", 1)[0]


def extension(tau: Any) -> None:
    from tau.common.jsstr import js_trim
    from tau.extension import ToolDefinition, ToolResult

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        query = params.get("query") if isinstance(params, dict) else None
        if not isinstance(query, str) or js_trim(query) == "":
            raise ValueError("query must not be empty")
        limit = params.get("limit", DEFAULT_LIMIT)
        if limit is None:
            limit = DEFAULT_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit != int(limit) or limit <= 0:
            raise ValueError("limit must be a positive integer")
        tools = search_and_load(tau, query, int(limit))
        if not tools:
            text = "No matching tools found."
        else:
            listed = "\n".join(f"- {tool['name']}: {_first_line(tool['description'])}" for tool in tools)
            text = f"Loaded {len(tools)} tool{'' if len(tools) == 1 else 's'}. They are available from your next call:\n{listed}"
        return ToolResult(
            content=[{"type": "text", "text": text}], details={"loaded": [tool["name"] for tool in tools]}
        )

    tau.register_tool(
        ToolDefinition(
            name=TOOL_NAME,
            label=TOOL_NAME,
            description=TOOL_SEARCH_DESCRIPTION,
            parameters=_PARAMETERS,
            execute=execute,
            prompt_snippet="Search for tools that are not loaded yet and load the matches",
            # Searching changes what the model sees; scripts have no use for it.
            exposure="model-only",
            default_active=False,
            # A query can match any tool that is not declared yet.
            reaches_tools=lambda args: "all",
        )
    )
