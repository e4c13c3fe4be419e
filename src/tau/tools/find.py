"""The ``find`` tool: paths matching a glob (pi 1.6 ``core/tools/find.ts``).

pi runs ``fd --glob --hidden``; no ``fd`` wheel exists, so tau walks the tree itself with fd's rules:
the ignore files of :mod:`tau.tools.ignore_rules` (``.gitignore`` and git's excludes inside a git
repository, or anywhere outside one as pi's ``--no-require-git`` asks; ``.ignore``; ``.fdignore``),
hidden files included, links listed but not followed, and fd's glob syntax and smart case
(:mod:`tau.tools.glob_match`). A pattern without ``/`` matches names at any depth; one with ``/`` is
anchored at the searched folder (a leading ``./`` is dropped). Results are relative to the searched
folder, folders end in ``/``, and they come in path order (fd sorts what it finds quickly; tau always
does). The output stops at ``limit`` results (1000) or 50 KB with pi's notices.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import Any

from tau.common.jsjson import js_number
from tau.common.jsstr import js_trim
from tau.common.lazy_regex import lazy_pattern
from tau.common.paths import git_root
from tau.llm.stream import AbortSignal
from tau.tools._async import in_thread_until_aborted, raise_if_aborted
from tau.tools.base import ToolContext, ToolDefinition, ToolError, ToolResult, UpdateCallback
from tau.tools.paths import resolve_to_cwd
from tau.tools.truncate import DEFAULT_MAX_BYTES, CappedLines, finish_output, positive_floor

__all__ = ["find_tool"]

DEFAULT_LIMIT = 1000

DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', "
            "e.g. '*.ts', it matches file names at any depth",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
    },
}

_GLOB_SPECIAL = lazy_pattern(r"[\\*?\[\]{}]")
_LEADING_DOT_SLASH = lazy_pattern(r"^(?:\./)+")


def find_tool() -> ToolDefinition:
    """The ``find`` tool definition (not active by default)."""
    return ToolDefinition(
        name="find",
        label="find",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_find,
        prompt_snippet="Find files by glob pattern (respects .gitignore)",
    )


async def execute_find(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """Find ``params["pattern"]`` under ``params["path"]`` (pi 1.6 ``find``)."""
    raise_if_aborted(signal)
    search_path = resolve_to_cwd(params.get("path") or ".", ctx.cwd)
    limit = positive_floor(params.get("limit"), DEFAULT_LIMIT)
    pattern = params["pattern"]
    return await in_thread_until_aborted(lambda: _find(search_path, pattern, limit, signal), signal)


def _matcher(search_path: str, pattern: str) -> tuple[re.Pattern[str], bool]:
    """The compiled pattern and whether it is matched against the whole path (else the name)."""
    from tau.tools.glob_match import GlobError, compile_glob, has_uppercase

    effective = _LEADING_DOT_SLASH.sub("", pattern)
    is_path_pattern = "/" in effective
    try:
        if is_path_pattern and not os.path.isabs(effective):
            # Anchored at the searched folder: fd matches the absolute path, so the root is prefixed
            # (escaped); the case rule is the user's pattern's, not the root's letters'.
            root = _GLOB_SPECIAL.sub(lambda m: "\\" + m.group(0), search_path.rstrip("/"))
            full = f"{root}/{effective}"
            ignore_case = effective == effective.lower() or not has_uppercase(full)
            return compile_glob(full, ignore_case=ignore_case), True
        return compile_glob(effective, ignore_case=not has_uppercase(effective)), is_path_pattern
    except GlobError as exc:
        raise ToolError(f"[fd error]: {exc}") from None


def _find(search_path: str, pattern: str, limit: int, signal: AbortSignal | None) -> ToolResult:
    from tau.tools.ignore_rules import IgnoreRules

    matcher, full_path = _matcher(search_path, pattern)
    if not os.path.isdir(search_path):
        raise ToolError(
            f"[fd error]: Search path '{search_path}' is not a directory.\n[fd error]: No valid search paths given."
        )
    # pi passes --no-require-git outside a repository: .gitignore files count there too.
    rules = IgnoreRules.for_root(search_path, require_git=git_root(search_path) is not None)
    results = CappedLines()
    limit_reached = False
    for absolute, is_dir in _walk(search_path, rules, signal):
        target = absolute if full_path else os.path.basename(absolute)
        if not matcher.match(target):
            continue
        if results.count == limit:
            limit_reached = True
            break
        results.add(_relative(js_trim(absolute), search_path) + ("/" if is_dir else ""))
    if results.count == 0:
        return ToolResult.text("No files found matching pattern")
    return finish_output(
        results.truncation(),
        (
            f"{js_number(limit)} results limit reached. Use limit={js_number(limit * 2)} for more, or refine pattern",
            "resultLimitReached",
            limit,
        )
        if limit_reached
        else None,
    )


def _relative(absolute: str, search_path: str) -> str:
    return os.path.relpath(absolute, search_path).replace(os.sep, "/")


def _walk(root: str, rules: Any, signal: AbortSignal | None) -> Iterator[tuple[str, bool]]:
    """Every entry under ``root`` that the rules let through, depth first in path order.

    A folder's entries come sorted by name bytes and its contents right after it: the component-wise
    path order fd sorts its results in. Links are listed, never followed.
    """
    stack: list[tuple[Iterator[os.DirEntry[str]], Any]] = [(_entries(root), rules)]
    while stack:
        entries, directory_rules = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            raise_if_aborted(signal)
            continue
        try:
            is_dir = stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode)
        except OSError:
            is_dir = False
        if directory_rules.ignored(entry.path, is_dir):
            continue
        yield entry.path, is_dir
        if is_dir:
            stack.append((_entries(entry.path), directory_rules.child(entry.path)))


def _entries(directory: str) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as listing:
            return iter(sorted(listing, key=lambda entry: os.fsencode(entry.name)))
    except OSError:
        return iter(())  # unreadable: fd says nothing about it (without --show-errors)
