"""mcp: Model Context Protocol servers as tools (pi 1.6's built-in ``builtin:mcp``).

Servers come from ``<agentDir>/mcp.json``, a trusted project's ``.tau/mcp.json`` and
``tau.register_mcp_server``; they connect in the background through the official ``mcp`` SDK, which
is imported only when a server is to connect (sessions without servers never load it). Their tools
become ``mcp__<server>__<tool>`` with the server's exposure (``codemode``, ``deferred``, ``direct`` or
``hidden``); ``--no-mcp``, ``--disable-extension mcp`` or ``--no-extensions`` turn it off.
See docs/mcp.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["extension"]


def extension(tau: Any) -> None:
    from tau.bundled.mcp.manager import McpExtension

    McpExtension(tau).register()
