"""Line diffs exactly as jsdiff 8 computes them (``diffLines``, ``structuredPatch``, ``formatPatch``).

pi's ``edit`` result carries a display diff and a unified patch made with jsdiff; tau must produce
the same text, so this is jsdiff's Myers variant with its tie-breaking (prefer the path furthest
along the old text, removals before additions) and its hunk assembly, in Python.
"""

from __future__ import annotations

import re
from dataclasses import field

from tau.common.dataclass import dataclass

__all__ = ["Change", "Hunk", "diff_lines", "format_patch", "structured_patch"]

_LINE_BREAK = re.compile(r"(\n|\r\n)")


@dataclass
class Change:
    """One run of equal, added or removed lines (jsdiff's change object)."""

    value: str
    count: int
    added: bool = False
    removed: bool = False


@dataclass
class Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None


@dataclass
class _Path:
    old_pos: int
    last: _Component | None


def tokenize_lines(text: str) -> list[str]:
    """Lines with their line break (``\\n`` or ``\\r\\n``) attached, as jsdiff's line tokenizer."""
    parts = _LINE_BREAK.split(text)
    if parts and not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    return [token for token in tokens if token]


def diff_lines(old: str, new: str) -> list[Change]:
    """jsdiff's ``diffLines(old, new)``."""
    return _diff_tokens(tokenize_lines(old), tokenize_lines(new))


def _diff_tokens(old: list[str], new: list[str]) -> list[Change]:
    old_len, new_len = len(old), len(new)
    start = _Path(-1, None)
    best: dict[int, _Path | None] = {0: start}
    new_pos = _extract_common(start, new, old, 0)
    if start.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(start.last, new, old)
    min_diagonal, max_diagonal = -(10**18), 10**18
    edit_length = 1
    while edit_length <= new_len + old_len:
        diagonal = max(min_diagonal, -edit_length)
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = False
            if add_path is not None:
                add_new_pos = add_path.old_pos - diagonal
                can_add = 0 <= add_new_pos < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (can_add and remove_path.old_pos < add_path.old_pos):  # type: ignore[union-attr]
                base = _add_to_path(add_path, True, False, 0)  # type: ignore[arg-type]
            else:
                base = _add_to_path(remove_path, False, True, 1)  # type: ignore[arg-type]
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("diff did not converge")  # unreachable: n + m edits always suffice


def _add_to_path(path: _Path, added: bool, removed: bool, old_inc: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _Path(path.old_pos + old_inc, _Component(last.count + 1, added, removed, last.previous))
    return _Path(path.old_pos + old_inc, _Component(1, added, removed, last))


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _build_values(last: _Component | None, new: list[str], old: list[str]) -> list[Change]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    changes: list[Change] = []
    new_pos = old_pos = 0
    for component in components:
        if component.removed:
            value = "".join(old[old_pos : old_pos + component.count])
            old_pos += component.count
        else:
            value = "".join(new[new_pos : new_pos + component.count])
            new_pos += component.count
            if not component.added:
                old_pos += component.count
        changes.append(Change(value, component.count, component.added, component.removed))
    return changes


def _split_lines(text: str) -> list[str]:
    """Lines with their trailing ``\\n`` kept (jsdiff's patch helper)."""
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] = lines[-1][:-1]
    return lines


def structured_patch(old: str, new: str, context: int = 4) -> list[Hunk]:
    """jsdiff's ``structuredPatch(...).hunks`` for two texts."""
    changes: list[tuple[Change | None, list[str]]] = [
        (c, _split_lines(c.value)) for c in diff_lines(old, new)
    ]
    changes.append((None, []))
    hunks: list[Hunk] = []
    old_range_start = new_range_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, (change, lines) in enumerate(changes):
        if change is not None and (change.added or change.removed):
            if not old_range_start:
                old_range_start, new_range_start = old_line, new_line
                if index > 0:
                    previous_lines = changes[index - 1][1]
                    current = [" " + line for line in previous_lines[-context:]] if context > 0 else []
                    old_range_start -= len(current)
                    new_range_start -= len(current)
            current.extend(("+" if change.added else "-") + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
            continue
        if old_range_start:
            if len(lines) <= context * 2 and index < len(changes) - 2:
                current.extend(" " + line for line in lines)
            else:
                shown = min(len(lines), context)
                current.extend(" " + line for line in lines[:shown])
                hunks.append(
                    Hunk(
                        old_range_start,
                        old_line - old_range_start + shown,
                        new_range_start,
                        new_line - new_range_start + shown,
                        current,
                    )
                )
                old_range_start = new_range_start = 0
                current = []
        old_line += len(lines)
        new_line += len(lines)
    for hunk in hunks:
        hunk.lines = _mark_missing_newlines(hunk.lines)
    return hunks


def _mark_missing_newlines(lines: list[str]) -> list[str]:
    marked: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            marked.append(line[:-1])
        else:
            marked.extend([line, "\\ No newline at end of file"])
    return marked


def format_patch(old_name: str, new_name: str, hunks: list[Hunk]) -> str:
    """jsdiff's ``formatPatch`` with file headers only (``--- a`` / ``+++ b``, no index line)."""
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for hunk in hunks:
        old_start = hunk.old_start - 1 if hunk.old_lines == 0 else hunk.old_start
        new_start = hunk.new_start - 1 if hunk.new_lines == 0 else hunk.new_start
        out.append(f"@@ -{old_start},{hunk.old_lines} +{new_start},{hunk.new_lines} @@")
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"
