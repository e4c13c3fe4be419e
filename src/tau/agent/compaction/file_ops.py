"""Which files a summarized stretch of conversation read or changed (pi 1.6 compaction ``utils.ts``).

The lists come from the ``path`` argument of ``read``, ``write`` and ``edit`` tool calls (and of the
calls a script made, recorded as ``nestedCalls`` on its tool result); they are appended to every
summary as ``<read-files>`` / ``<modified-files>`` blocks and stored in the entry's ``details``.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["FileOperations", "compute_file_lists", "extract_file_ops_from_message", "format_file_operations"]


@dataclass
class FileOperations:
    """The raw path sets, by kind of operation."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_details(self, details: Any) -> None:
        """Carry over the file lists of an earlier pi-made summary's ``details``."""
        if not isinstance(details, dict):
            return
        # Modified files of an earlier summary count as edited (write and edit merge later anyway).
        self.read.update(_paths(details.get("readFiles")))
        self.edited.update(_paths(details.get("modifiedFiles")))


def _paths(value: Any) -> list[str]:
    return [path for path in value if isinstance(path, str)] if isinstance(value, list) else []


def _add_file_op(tool_name: Any, args: Any, file_ops: FileOperations) -> None:
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str) or not path:
        return
    if tool_name == "read":
        file_ops.read.add(path)
    elif tool_name == "write":
        file_ops.written.add(path)
    elif tool_name == "edit":
        file_ops.edited.add(path)


def extract_file_ops_from_message(message: dict[str, Any], file_ops: FileOperations) -> None:
    """Add the file operations of an assistant's tool calls, or of a tool result's nested calls."""
    role = message.get("role")
    if role == "toolResult":
        nested = message.get("nestedCalls")
        calls = nested.get("calls") if isinstance(nested, dict) else None
        for call in calls or []:
            if isinstance(call, dict):
                _add_file_op(call.get("name"), call.get("arguments"), file_ops)
        return
    content = message.get("content")
    if role != "assistant" or not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        if "arguments" in block and "name" in block:
            _add_file_op(block["name"], block["arguments"], file_ops)


def compute_file_lists(file_ops: FileOperations) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``: files only read, and files written or edited; both sorted.

    Sorted by UTF-16 code units, as JavaScript's default ``sort()`` orders strings.
    """
    modified = file_ops.edited | file_ops.written
    read_only = sorted((path for path in file_ops.read if path not in modified), key=_utf16_key)
    return read_only, sorted(modified, key=_utf16_key)


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The blocks appended to a summary: ``\\n\\n<read-files>…</read-files>\\n\\n<modified-files>…``."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
