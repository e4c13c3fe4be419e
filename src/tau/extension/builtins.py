"""The built-in tools for extensions that wrap or replace them (pi's ``create*ToolDefinition``).

These are the definitions of :mod:`tau.tools`, with an ``execute`` that also accepts the
:class:`~tau.extension.ExtensionToolContext` an extension tool is given: a wrapper can pass its own
ctx straight through (``await base.execute(call_id, params, signal, on_update, ctx)``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tau.tools import bash as bash_module
from tau.tools import edit as edit_module
from tau.tools import read as read_module
from tau.tools import registry
from tau.tools import write as write_module
from tau.tools.base import ToolDefinition

__all__ = ["bash_tool", "builtin_tool", "edit_tool", "read_tool", "write_tool"]


def _accepting_extension_context(definition: ToolDefinition) -> ToolDefinition:
    inner = definition.execute

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        tool_context = getattr(ctx, "tool_context", None)
        return await inner(tool_call_id, params, signal, on_update, tool_context or ctx)

    return dataclasses.replace(definition, execute=execute)


def bash_tool(operations: Any = None, *, expose_session_environment: bool = True) -> ToolDefinition:
    """The ``bash`` definition; ``operations`` (a :class:`~tau.extension.BashOperations`) replaces local execution.

    The shell (``shellPath``) and command prefix (``shellCommandPrefix``) come from the settings
    through the call's tool context, as for the built-in.
    """
    return _accepting_extension_context(
        bash_module.bash_tool(operations, expose_session_environment=expose_session_environment)
    )


def edit_tool() -> ToolDefinition:
    """The ``edit`` definition."""
    return _accepting_extension_context(edit_module.edit_tool())


def write_tool() -> ToolDefinition:
    """The ``write`` definition."""
    return _accepting_extension_context(write_module.write_tool())


def read_tool() -> ToolDefinition:
    """The ``read`` definition."""
    return _accepting_extension_context(read_module.read_tool())


def builtin_tool(name: str) -> ToolDefinition:
    """The built-in ``name`` (``read``, ``bash``, ``edit``, ``write``)."""
    return _accepting_extension_context(registry.builtin_tool(name))
