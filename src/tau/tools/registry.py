"""The built-in tools as a set: pi 1.6's tools, in pi's order (``powershell`` aside: tau runs bash).

``read``, ``bash``, ``edit`` and ``write`` are active by default; ``grep``, ``find`` and ``ls`` are
registered but inactive until ``--tools``, ``defaultTools`` or an extension turns them on.
"""

from __future__ import annotations

from collections.abc import Callable

from tau.tools.base import ToolDefinition
from tau.tools.bash import bash_tool
from tau.tools.edit import edit_tool
from tau.tools.find import find_tool
from tau.tools.grep import grep_tool
from tau.tools.ls import ls_tool
from tau.tools.read import read_tool
from tau.tools.write import write_tool

__all__ = ["BUILTIN_TOOL_NAMES", "DEFAULT_ACTIVE_TOOLS", "all_builtin_tools", "builtin_tool", "builtin_tools"]

# The order pi declares them in (toolsAdded of the first system message).
DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")

_FACTORIES: dict[str, Callable[[], ToolDefinition]] = {
    "read": read_tool,
    "bash": bash_tool,
    "edit": edit_tool,
    "write": write_tool,
    "grep": grep_tool,
    "find": find_tool,
    "ls": ls_tool,
}
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def builtin_tool(name: str) -> ToolDefinition:
    """A fresh definition of the built-in tool ``name``."""
    try:
        return _FACTORIES[name]()
    except KeyError:
        known = ", ".join(BUILTIN_TOOL_NAMES)
        raise ValueError(f"Unknown tool name: {name!r} (built-in tools: {known})") from None


def builtin_tools() -> list[ToolDefinition]:
    """Fresh definitions of the four default built-in tools, in the default active order."""
    return [builtin_tool(name) for name in DEFAULT_ACTIVE_TOOLS]


def all_builtin_tools() -> list[ToolDefinition]:
    """Fresh definitions of every built-in tool (what a session registers), in pi's order."""
    return [builtin_tool(name) for name in BUILTIN_TOOL_NAMES]
