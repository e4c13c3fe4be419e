"""The ``grep`` tool: search file contents with ripgrep (pi 1.6 ``core/tools/grep.ts``).

ripgrep runs with pi's arguments (``--no-config --json --line-number --color=never --hidden``), so
ignore files, hidden files and binary files are handled by rg exactly as in pi, plus ``--sort path``:
pi leaves the order to rg's parallel walk, tau asks for a stable one (the same run twice gives the
same result, which keeps the model's context cacheable). Matches are ``path:LINE: text``, context
lines ``path-LINE- text``, lines over 500 characters are cut, and the output is capped at ``limit``
matches (100) and 50 KB with pi's notices.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import os
import stat
import subprocess
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.jsjson import js_number
from tau.common.lazy_regex import lazy_pattern
from tau.llm.stream import AbortSignal
from tau.tools._async import raise_if_aborted
from tau.tools.base import ToolAborted, ToolContext, ToolDefinition, ToolError, ToolResult, UpdateCallback
from tau.tools.binaries import RIPGREP_MISSING, find_ripgrep
from tau.tools.paths import resolve_to_cwd
from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    MAX_SAFE_INTEGER,
    CappedLines,
    finish_output,
    positive_floor,
    truncate_line,
)

__all__ = ["grep_tool"]

DEFAULT_LIMIT = 100

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', "
            "e.g. '*.ts', it matches file names at any depth",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
    },
}

_LEADING_DOT_SLASH = lazy_pattern(r"^(!?)(?:\./)+")
_LINE_END = lazy_pattern(r"\r?\n?\Z")


def grep_tool() -> ToolDefinition:
    """The ``grep`` tool definition (not active by default; ``--tools read,grep,find,ls`` turns it on)."""
    return ToolDefinition(
        name="grep",
        label="grep",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_grep,
        prompt_snippet="Search file contents for patterns (respects .gitignore)",
    )


def _context_lines(value: Any) -> int:
    if not value or value != value or value <= 0:  # None, 0, NaN, negative
        return 0
    if isinstance(value, float) and math.isinf(value):
        return MAX_SAFE_INTEGER
    return min(math.floor(value), MAX_SAFE_INTEGER)


def _rg_text(data: Any) -> str:
    """A ripgrep JSON text field; non-UTF-8 data comes base64-encoded in ``bytes``."""
    if not isinstance(data, dict):
        return ""
    if isinstance(data.get("text"), str):
        return data["text"]
    if isinstance(data.get("bytes"), str):
        return base64.b64decode(data["bytes"]).decode("utf-8", "replace")
    return ""


async def execute_grep(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """Search for ``params["pattern"]`` (pi 1.6 ``grep``)."""
    raise_if_aborted(signal)
    rg = find_ripgrep()
    if rg is None:
        raise ToolError(RIPGREP_MISSING)
    search_path = resolve_to_cwd(params.get("path") or ".", ctx.cwd)
    try:
        is_directory = stat.S_ISDIR(os.stat(search_path).st_mode)
    except (OSError, ValueError):
        raise ToolError(f"Path not found: {search_path}") from None
    search = _Search(
        search_path=search_path,
        is_directory=is_directory,
        context=_context_lines(params.get("context")),
        limit=positive_floor(params.get("limit"), DEFAULT_LIMIT),
    )
    args = ["--no-config", "--json", "--line-number", "--color=never", "--hidden", "--sort", "path"]
    if params.get("ignoreCase"):
        args.append("--ignore-case")
    if params.get("literal"):
        args.append("--fixed-strings")
    if params.get("glob"):
        args += ["--glob", _LEADING_DOT_SLASH.sub(r"\1", params["glob"])]
    if search.context > 0:
        args += ["--context", str(search.context)]
    # rg roots --glob at its own cwd: a directory is searched from inside, as ".".
    args += ["--", params["pattern"], "." if is_directory else search_path]
    await _run_rg(rg, args, search_path if is_directory else None, search, signal)
    return search.result()


@dataclass
class _Search:
    """What ripgrep's events add up to (pi's line handler, one event at a time)."""

    search_path: str
    is_directory: bool
    context: int
    limit: int
    lines: CappedLines = field(default_factory=CappedLines)
    match_count: int = 0
    limit_hit: bool = False  # the last allowed match was seen
    match_limit_reached: bool = False  # ... and another match proves results were cut
    trailing_context_end: float = 0  # a JSON number
    last_file: str | None = None
    lines_truncated: bool = False
    done: bool = False

    def format_path(self, file_path: str) -> str:
        if self.is_directory:
            relative = os.path.relpath(
                os.path.normpath(os.path.join(self.search_path, file_path)), self.search_path
            )
            if relative != "." and not relative.startswith(".."):
                return relative.replace("\\", "/")
        return os.path.basename(file_path)

    def push(self, file_path: str, line_number: float, text: str, is_match: bool) -> None:
        self.last_file = file_path
        shown, cut = truncate_line(_LINE_END.sub("", text, count=1))
        self.lines_truncated = self.lines_truncated or cut
        separator = ":" if is_match else "-"
        line = f"{self.format_path(file_path)}{separator}{js_number(line_number)}{separator} {shown}"
        self.lines.add(line)

    def event(self, record: Any) -> None:
        """One line of ``rg --json``; sets :attr:`done` when nothing more can change the result."""
        if not isinstance(record, dict):
            return
        kind = record.get("type")
        if kind not in ("match", "context"):
            return
        data = record.get("data") or {}
        file_path = _rg_text(data.get("path"))
        line_number = data.get("line_number")
        if not file_path or isinstance(line_number, bool) or not isinstance(line_number, int | float):
            return
        text = _rg_text(data.get("lines"))
        is_match = kind == "match"
        if not self.limit_hit:
            self.push(file_path, line_number, text, is_match)
            if is_match:
                self.match_count += 1
                if self.match_count >= self.limit:
                    self.limit_hit = True
                    self.trailing_context_end = line_number + self.context
            return
        in_window = file_path == self.last_file and line_number <= self.trailing_context_end
        if in_window:  # the last allowed match's trailing context; a match there shows as context
            self.push(file_path, line_number, text, False)
        if is_match:
            self.match_limit_reached = True
        if self.match_limit_reached and not (in_window and line_number < self.trailing_context_end):
            self.done = True

    def result(self) -> ToolResult:
        if self.match_count == 0:
            return ToolResult.text("No matches found")
        return finish_output(
            self.lines.truncation(),
            (
                f"{js_number(self.limit)} matches limit reached. "
                f"Use limit={js_number(self.limit * 2)} for more, or refine pattern",
                "matchLimitReached",
                self.limit,
            )
            if self.match_limit_reached
            else None,
            (
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",
                "linesTruncated",
                True,
            )
            if self.lines_truncated
            else None,
        )


async def _run_rg(
    rg: str, args: list[str], cwd: str | None, search: _Search, signal: AbortSignal | None
) -> None:
    """Run ripgrep, feed its events to ``search``, stop it once the result is settled."""
    from tau.common import jsjson

    try:
        process = await asyncio.create_subprocess_exec(
            rg,
            *args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise ToolError(f"Failed to run ripgrep: {exc.strerror or exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    stopped_for_limit = False
    aborted = False

    def stop() -> None:
        if process.returncode is None:
            process.kill()

    def on_abort() -> None:
        nonlocal aborted
        aborted = True
        stop()

    remove = signal.add_callback(on_abort) if signal is not None else (lambda: None)
    stderr_task = asyncio.ensure_future(process.stderr.read())
    try:
        pending = b""
        while not search.done:
            chunk = await process.stdout.read(1 << 16)
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                if search.done or not line.strip():
                    continue
                try:
                    search.event(jsjson.loads(line))
                except ValueError:
                    continue
        if pending.strip() and not search.done:
            with contextlib.suppress(ValueError):
                search.event(jsjson.loads(pending))
        if search.done and process.returncode is None:
            stopped_for_limit = True
            stop()
        code = await process.wait()
        stderr = (await stderr_task).decode("utf-8", "replace")
    finally:
        remove()
        stop()
        if not stderr_task.done():
            stderr_task.cancel()
    if aborted:
        raise ToolAborted()
    if not stopped_for_limit and code not in (0, 1):
        raise ToolError(stderr.strip() or f"ripgrep exited with code {code}")
