"""``tau mcp …``: pi 1.6's MCP server commands (``add``, ``remove``, ``list``, ``login``, ``logout``).

MCP is not in tau yet (issue 29); until it is, the word is kept from the model and answered here.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str]) -> int:
    print("tau mcp: MCP servers are not yet available in tau", file=sys.stderr)
    return 1
