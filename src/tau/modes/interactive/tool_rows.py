"""Rows of the built-in tools (keyed by tool name) and of extension tools.

A row is a title (what was called) and a body (what came back). Long bodies are collapsed to a
few lines until the user expands tool output (Ctrl+O). Extension tools may bring their own
``render_call(args[, context])`` and ``render_result(result, options)`` (each returning a string or a
list of lines; ``options`` is ``{"expanded", "isPartial"}``); a renderer that fails falls back to the
default row. As pi's ``renderCall``, the call renderer draws above the result and may know the call's
state: one that takes a second argument gets ``context`` = ``{"expanded", "isPartial", "isError",
"executionStarted"}``; its first line is the title, its further lines lead the body (they show while
the call runs, before any result). A renderer that folds long rows itself says so with
``renders_collapsed``; its lines are then shown as they are.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.interactive.model import ToolBlock
from tau.modes.interactive.sanitize import sanitize_text
from tau.modes.interactive.todo_rows import checklist, todo_title
from tau.modes.wording import counted

__all__ = ["COLLAPSED_LINES", "ToolRow", "folded_rows", "tool_row"]

COLLAPSED_LINES = 8


@dataclass
class ToolRow:
    """What a tool row shows: ``title``, then ``body`` lines (``hidden`` lines left out, and where;
    ``highlighted``: indices of body lines to pick out), then ``footer`` lines (dim)."""

    title: str
    body: list[str]
    hidden: int = 0
    hidden_at_start: bool = False
    highlighted: set[int] = field(default_factory=set)
    expandable: bool = False  # a renderer folded it (``renders_collapsed``): Ctrl+O shows more
    footer: list[str] = field(default_factory=list)  # below the body, never cut: the timing line


def _arg(args: Any, *names: str) -> str:
    if not isinstance(args, dict):
        return ""
    for name in names:
        value = args.get(name)
        if value is not None:
            return str(value)
    return ""


def _one_line(text: str, limit: int = 200) -> str:
    text = sanitize_text(text).replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bash_title(args: Any) -> str:
    timeout = _arg(args, "timeout")
    return f"$ {_one_line(_arg(args, 'command'))}" + (f"  (timeout {timeout}s)" if timeout else "")


def _read_title(args: Any) -> str:
    path = _one_line(_arg(args, "path", "file_path"))
    offset, limit = _arg(args, "offset"), _arg(args, "limit")
    if offset or limit:
        start = int(offset or 1) if (offset or "1").lstrip("-").isdigit() else offset
        end = f"{int(start) + int(limit) - 1}" if limit.isdigit() and isinstance(start, int) else ""
        path += f":{start}" + (f"-{end}" if end else "")
    return f"read {path}"


def _write_title(args: Any) -> str:
    content = _arg(args, "content")
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return f"write {_one_line(_arg(args, 'path', 'file_path'))} ({counted(lines, 'line')})"


def _edit_title(args: Any) -> str:
    edits = args.get("edits") if isinstance(args, dict) else None
    count = f" ({len(edits)} edits)" if isinstance(edits, list) and len(edits) > 1 else ""
    return f"edit {_one_line(_arg(args, 'path', 'file_path'))}{count}"


def _default_title(name: str, args: Any) -> str:
    try:
        shown = json.dumps(args, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        shown = repr(args)
    return f"{name} {_one_line(shown)}"


_TITLES: dict[str, Callable[[Any], str]] = {
    "bash": _bash_title,
    "read": _read_title,
    "write": _write_title,
    "edit": _edit_title,
}


def _body_text(block: ToolBlock) -> str:
    details = block.details if isinstance(block.details, dict) else {}
    if block.name == "edit" and block.status == "done" and isinstance(details.get("diff"), str):
        return sanitize_text(details["diff"])
    return block.output


def _collapse(lines: list[str], *, keep_end: bool) -> tuple[list[str], int]:
    if len(lines) <= COLLAPSED_LINES:
        return lines, 0
    hidden = len(lines) - COLLAPSED_LINES
    return (lines[hidden:], hidden) if keep_end else (lines[:COLLAPSED_LINES], hidden)


def _as_lines(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [sanitize_text(str(line)).replace("\n", " ") for line in value]
    return sanitize_text(str(value)).split("\n")


def _takes_context(render: Callable[..., Any]) -> bool:
    """Whether a call renderer takes a second positional argument (pi's render context)."""
    try:
        parameters = list(inspect.signature(render).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: called as documented first
        return False
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters) >= 2


def _call_lines(render: Callable[..., Any] | None, block: ToolBlock) -> list[str] | None:
    """The call renderer's lines, given the call's state when it takes it."""
    if render is None:
        return None
    if not _takes_context(render):
        return _custom(render, block.args)
    context = {
        "expanded": block.expanded,
        "isPartial": block.status == "running",
        "isError": block.status == "error",
        "executionStarted": True,  # a row exists from the call's tool_execution_start on
    }
    return _custom(render, block.args, context)


def _custom(render: Callable[..., Any] | None, *args: Any) -> list[str] | None:
    if render is None:
        return None
    try:
        return _as_lines(render(*args))
    except Exception:  # boundary: a broken extension renderer must not break the screen
        return None


def _todo_row(block: ToolBlock) -> ToolRow | None:
    """The checklist row of a ``todo`` call, or ``None`` when its arguments or result are not todo's."""
    current = block.details if block.status == "done" else None
    title = todo_title(block.args, block.previous_details, current)
    if title is None:
        return None
    if block.status != "done":  # running, or an error: its text
        return ToolRow(title, block.output.rstrip("\n").split("\n") if block.output else [])
    listed = checklist(block.args, block.previous_details, block.details, expanded=block.expanded)
    return ToolRow(title, listed.lines, highlighted=listed.changed) if listed is not None else None


def tool_row(block: ToolBlock, definition: Any = None, *, timer: str | None = None) -> ToolRow:
    """The row of ``block``; ``definition`` (its ``ToolDefinition``) may carry extension renderers.

    ``timer`` is the row's timing line (``Elapsed 4.2s``, ``Took 4.2s``): the bash row ends with it, as
    pi's does, and result renderers get it as ``options["timer"]`` (codemode's shows it).
    """
    has_own = any(getattr(definition, name, None) for name in ("render_call", "render_result"))
    if block.name == "todo" and not has_own:
        row = _todo_row(block)
        if row is not None:
            return row
    call_lines = _call_lines(getattr(definition, "render_call", None), block)
    title_of = _TITLES.get(block.name)
    title = (
        call_lines[0]
        if call_lines
        else (title_of(block.args) if title_of else _default_title(block.name, block.args))
    )
    options = {"expanded": block.expanded, "isPartial": block.status == "running", "timer": timer}
    body = None
    if block.result is not None:
        body = _custom(getattr(definition, "render_result", None), block.result, options)
    # As pi's bash row, below the output; like any result, only once there is one (bash sends an
    # empty one as it starts).
    footer = (
        ["", timer] if body is None and block.name == "bash" and timer and block.result is not None else []
    )
    if body is None:
        text = _body_text(block).rstrip("\n")
        body = text.split("\n") if text else []
    if call_lines and len(call_lines) > 1:
        body = [*call_lines[1:], *body]
    if block.expanded:
        return ToolRow(title, body, footer=footer)
    if getattr(definition, "renders_collapsed", False):
        full = tool_row(dataclasses.replace(block, expanded=True), definition, timer=timer)
        return ToolRow(title, body, expandable=(full.title, full.body) != (title, body))
    keep_end = block.name == "bash"
    shown, hidden = _collapse(body, keep_end=keep_end)
    return ToolRow(title, shown, hidden, keep_end, footer=footer)


def folded_rows(blocks: list[Any], definition: Callable[[str], Any], skip: set[int]) -> list[ToolBlock]:
    """The tool rows among ``blocks`` that, collapsed, hide lines (what Ctrl+O prints again in full),
    leaving out those whose ``id`` is in ``skip`` (already printed again)."""
    folded = []
    for block in blocks:
        if not isinstance(block, ToolBlock) or id(block) in skip:
            continue
        row = tool_row(dataclasses.replace(block, expanded=False), definition(block.name))
        if row.hidden or row.expandable:
            folded.append(block)
    return folded
