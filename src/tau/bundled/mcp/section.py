"""The ``mcp_servers`` system-prompt section: the servers whose tools are not declared to the model.

Every enabled server with ``codemode`` or ``deferred`` tools is listed, by name, with how its tools
are reached and one line from its configured ``description`` or, once it connected, its
instructions (pi ``renderServersSection``). The section stays within 4,096 characters (UTF-16 code
units, as pi counts): summaries shrink first (at most 250 each), then the last servers are left out
and counted in a closing line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tau.bundled.mcp.naming import mcp_namespace, server_summary
from tau.common.collation import locale_key
from tau.common.jsstr import js_len

__all__ = ["MAX_SECTION_CHARS", "MCP_SERVERS_SECTION", "configured_exposures", "render_servers_section"]

MCP_SERVERS_SECTION = "mcp_servers"
MAX_SECTION_CHARS = 4096
MAX_DESCRIPTION_CHARS = 250


def configured_exposures(config: dict[str, Any]) -> set[str]:
    """The exposures a server's tools can have, known from its config before it connects."""
    return {config.get("exposure") or "codemode", *(config.get("toolExposure") or {}).values()}


def _intro(reaches: set[str]) -> str:
    intro = "MCP servers whose tools are not declared to you."
    if "codemode" in reaches:
        intro += " Call the tools of `codemode` servers from codemode scripts."
    if "tool_search" in reaches:
        intro += " Load the tools of `tool_search` servers with `tool_search`."
    return intro


def _slice_head(text: str, units: int) -> str:
    """At most ``units`` UTF-16 code units of ``text``, never half a surrogate pair."""
    out: list[str] = []
    used = 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if used + width > units:
            break
        out.append(char)
        used += width
    return "".join(out)


def _truncate(text: str, limit: int) -> str:
    if js_len(text) <= limit:
        return text
    return "" if limit <= 1 else _slice_head(text, limit - 1).rstrip() + "…"


def render_servers_section(servers: Sequence[Any]) -> str | None:
    """The section for ``servers`` (objects with ``name``, ``config``, ``enabled`` and ``instructions``);
    ``None`` when no server is listed."""
    listed = sorted(
        (
            server
            for server in servers
            if server.enabled and configured_exposures(server.config) & {"codemode", "deferred"}
        ),
        key=lambda server: locale_key(server.name),
    )
    if not listed:
        return None
    reaches = ["codemode" if "codemode" in configured_exposures(s.config) else "tool_search" for s in listed]
    intro = _intro(set(reaches))
    heads = [
        f"- {mcp_namespace(server.name)} ({reach})" for server, reach in zip(listed, reaches, strict=True)
    ]

    def omitted(count: int) -> list[str]:
        if count <= 0:
            return []
        return [f"- … {count} more server{'' if count == 1 else 's'}; find their tools with searchTools()"]

    def size(kept: int) -> int:
        return js_len("\n".join([intro, *heads[:kept], *omitted(len(listed) - kept)]))

    kept = len(listed)
    while kept > 0 and size(kept) > MAX_SECTION_CHARS:
        kept -= 1
    # Each summary also takes a ": " separator.
    per_server = 0 if kept == 0 else min(MAX_DESCRIPTION_CHARS, (MAX_SECTION_CHARS - size(kept)) // kept - 2)
    lines = []
    for server, head in zip(listed[:kept], heads[:kept], strict=True):
        summary = (
            _truncate(server_summary(server.config.get("description"), server.instructions), per_server)
            if per_server > 0
            else ""
        )
        lines.append(f"{head}: {summary}" if summary else head)
    return "\n".join([intro, *lines, *omitted(len(listed) - kept)])
