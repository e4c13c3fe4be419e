"""Built-in tools: read, write, edit, bash, and their truncation and path rules.

Public surface: the tool contract (:class:`ToolDefinition`, :class:`ToolResult`,
:class:`ToolContext`, :func:`tool_declaration`), argument validation
(:func:`validate_tool_arguments`), the per-file mutation queue, and the built-in set.
"""

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
from tau.tools.mutation_queue import FileMutationQueue, with_file_mutation_queue
from tau.tools.read import read_tool
from tau.tools.registry import BUILTIN_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, builtin_tool, builtin_tools
from tau.tools.shell import kill_tracked_groups
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head, truncate_tail
from tau.tools.write import write_tool

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
    "bash_tool",
    "builtin_tool",
    "builtin_tools",
    "edit_tool",
    "format_size",
    "kill_tracked_groups",
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
