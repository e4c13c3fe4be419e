"""Built-in tools: read, write, edit, bash, grep, find, ls, and their truncation and path rules.

Public surface: the tool contract (:class:`ToolDefinition`, :class:`ToolResult`,
:class:`ToolContext`, :func:`tool_declaration`), argument validation
(:func:`validate_tool_arguments`), the per-file mutation queue, and the built-in set.

The names below are imported on first use: a turn loads a tool's helpers when the tool runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.tools.arguments import (
        ToolArgumentsError,
        prepare_arguments,
        validate_arguments,
        validate_tool_arguments,
    )
    from tau.tools.base import (
        CONSTRAINED_SAMPLING,
        ToolAborted,
        ToolContext,
        ToolDefinition,
        ToolError,
        ToolResult,
        UpdateCallback,
        tool_declaration,
    )
    from tau.tools.bash import bash_tool
    from tau.tools.bash_exec import BashOperations, LocalBashOperations
    from tau.tools.edit import edit_tool
    from tau.tools.find import find_tool
    from tau.tools.grep import grep_tool
    from tau.tools.ls import ls_tool
    from tau.tools.mutation_queue import FileMutationQueue, with_file_mutation_queue
    from tau.tools.read import read_tool
    from tau.tools.registry import (
        BUILTIN_TOOL_NAMES,
        DEFAULT_ACTIVE_TOOLS,
        all_builtin_tools,
        builtin_tool,
        builtin_tools,
    )
    from tau.tools.shell import kill_tracked_groups
    from tau.tools.truncate import (
        DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES,
        format_size,
        truncate_head,
        truncate_tail,
    )
    from tau.tools.write import write_tool

_EXPORTS: dict[str, str] = {
    "BUILTIN_TOOL_NAMES": "tau.tools.registry",
    "BashOperations": "tau.tools.bash_exec",
    "CONSTRAINED_SAMPLING": "tau.tools.base",
    "DEFAULT_ACTIVE_TOOLS": "tau.tools.registry",
    "DEFAULT_MAX_BYTES": "tau.tools.truncate",
    "DEFAULT_MAX_LINES": "tau.tools.truncate",
    "FileMutationQueue": "tau.tools.mutation_queue",
    "LocalBashOperations": "tau.tools.bash_exec",
    "ToolAborted": "tau.tools.base",
    "ToolArgumentsError": "tau.tools.arguments",
    "ToolContext": "tau.tools.base",
    "ToolDefinition": "tau.tools.base",
    "ToolError": "tau.tools.base",
    "ToolResult": "tau.tools.base",
    "UpdateCallback": "tau.tools.base",
    "all_builtin_tools": "tau.tools.registry",
    "bash_tool": "tau.tools.bash",
    "builtin_tool": "tau.tools.registry",
    "builtin_tools": "tau.tools.registry",
    "edit_tool": "tau.tools.edit",
    "find_tool": "tau.tools.find",
    "format_size": "tau.tools.truncate",
    "grep_tool": "tau.tools.grep",
    "kill_tracked_groups": "tau.tools.shell",
    "ls_tool": "tau.tools.ls",
    "prepare_arguments": "tau.tools.arguments",
    "read_tool": "tau.tools.read",
    "tool_declaration": "tau.tools.base",
    "truncate_head": "tau.tools.truncate",
    "truncate_tail": "tau.tools.truncate",
    "validate_arguments": "tau.tools.arguments",
    "validate_tool_arguments": "tau.tools.arguments",
    "with_file_mutation_queue": "tau.tools.mutation_queue",
    "write_tool": "tau.tools.write",
}

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "CONSTRAINED_SAMPLING",
    "DEFAULT_ACTIVE_TOOLS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "BashOperations",
    "FileMutationQueue",
    "LocalBashOperations",
    "ToolAborted",
    "ToolArgumentsError",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolResult",
    "UpdateCallback",
    "all_builtin_tools",
    "bash_tool",
    "builtin_tool",
    "builtin_tools",
    "edit_tool",
    "find_tool",
    "format_size",
    "grep_tool",
    "kill_tracked_groups",
    "ls_tool",
    "prepare_arguments",
    "read_tool",
    "tool_declaration",
    "truncate_head",
    "truncate_tail",
    "validate_arguments",
    "validate_tool_arguments",
    "with_file_mutation_queue",
    "write_tool",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
