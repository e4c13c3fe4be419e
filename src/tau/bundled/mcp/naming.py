"""Names of MCP tools and namespaces as the model and codemode scripts see them (pi-mcp ``naming``).

``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_]`` made ``_`` (Codex's rule,
so the name is also a script identifier); a name over 64 characters, or one another tool of the
server already sanitizes to, ends in ``_<first 8 hex of sha256(server \\0 tool)>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from tau.common.jsstr import js_trim
from tau.common.lazy_regex import lazy_pattern
from tau.extension import mcp_namespace

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "create_tool_name",
    "mcp_namespace",
    "rows_before_connect",
    "server_summary",
]

# Provider tool names are limited to 64 characters of [A-Za-z0-9_-].
MAX_TOOL_NAME_LENGTH = 64
_UNSAFE = lazy_pattern(r"[^A-Za-z0-9_]")


def create_tool_name(server: str, tool: str, is_taken: Callable[[str], bool] = lambda name: False) -> str:
    """The model-facing name of ``tool`` of ``server``; ``is_taken`` reports names used by another tool."""
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME_LENGTH and not is_taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def server_summary(description: str | None, instructions: str | None) -> str:
    """A server's line in the system prompt: the first line of its configured ``description``, else of
    the instructions it sent in ``initialize``; empty when it has neither (pi ``mcpServerSummary``)."""
    text = js_trim(description or "") or js_trim(instructions or "")
    return js_trim(text.split("\n", 1)[0])


_MCP_TOOL = lazy_pattern(r"^mcp__(.+?)__(.+)$")


def rows_before_connect(name: str, next_renderer: Callable[[], Any]) -> Any:
    """The tool renderer resolver of the mcp extension (pi's): calls to an MCP tool that is not
    registered, such as those of a resumed session before its server connected, are drawn as a
    connected server's are (``server/tool {arguments}``, then the result's text)."""
    found = next_renderer()
    match = _MCP_TOOL.match(name)
    if found is not None or match is None:
        return found
    from tau.bundled.mcp.tools import render_mcp_call, render_mcp_result

    return {"render_call": render_mcp_call(f"{match[1]}/{match[2]}"), "render_result": render_mcp_result}
