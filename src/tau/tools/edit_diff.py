"""The ``details`` of an ``edit`` result: a numbered display diff, a unified patch, the first changed line.

As pi 1.6 (``generateEditDiff``), only windows of whole lines around the replacements (32 unchanged
lines of margin on each side) are diffed, so the cost follows the size of the change, not the file.
"""

from __future__ import annotations

from typing import Any

from tau.common.dataclass import dataclass
from tau.tools.diff import Change, Hunk, diff_lines, format_patch, structured_patch
from tau.tools.edit_apply import Replacement

__all__ = ["generate_edit_diff"]

DIFF_WINDOW_MARGIN_LINES = 32


def _count_line_feeds(text: str, start: int = 0, end: int | None = None) -> int:
    return text.count("\n", start, len(text) if end is None else end)


def _pad(value: int | str, width: int) -> str:
    return str(value).rjust(width, " ")


def format_display_diff(
    parts: list[Change], old_start: int, new_start: int, width: int, context: int = 4
) -> tuple[list[str], int | None]:
    """Display lines (``+12 text``, ``-12 text``, `` 12 text``, `` ... ``) and the first changed new line."""
    out: list[str] = []
    old_line, new_line = old_start, new_start
    last_was_change = False
    first_changed: int | None = None
    skip = f" {_pad('', width)} ..."
    for index, part in enumerate(parts):
        raw = part.value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if part.added or part.removed:
            if first_changed is None:
                first_changed = new_line
            for line in raw:
                if part.added:
                    out.append(f"+{_pad(new_line, width)} {line}")
                    new_line += 1
                else:
                    out.append(f"-{_pad(old_line, width)} {line}")
                    old_line += 1
            last_was_change = True
            continue
        next_is_change = index < len(parts) - 1 and (parts[index + 1].added or parts[index + 1].removed)
        if last_was_change and next_is_change and len(raw) > context * 2:
            shown_head, shown_tail = raw[:context], raw[len(raw) - context :]
            skipped = len(raw) - len(shown_head) - len(shown_tail)
        elif last_was_change and next_is_change:
            shown_head, shown_tail, skipped = raw, [], 0
        elif last_was_change:
            shown_head, shown_tail = raw[:context], []
            skipped = len(raw) - len(shown_head)
        elif next_is_change:
            skipped = max(0, len(raw) - context)
            shown_head, shown_tail = [], raw[skipped:]
        else:
            old_line += len(raw)
            new_line += len(raw)
            last_was_change = False
            continue
        for line in shown_head:
            out.append(f" {_pad(old_line, width)} {line}")
            old_line += 1
            new_line += 1
        if skipped > 0:
            out.append(skip)
            old_line += skipped
            new_line += skipped
        for line in shown_tail:
            out.append(f" {_pad(old_line, width)} {line}")
            old_line += 1
            new_line += 1
        last_was_change = False
    return out, first_changed


@dataclass
class _Window:
    old_start: int
    old_end: int
    old_line: int
    new_start: int
    new_end: int
    new_line: int


def _line_start_before(text: str, offset: int) -> int:
    return 0 if offset == 0 else text.rfind("\n", 0, offset) + 1


def _diff_windows(base: str, replacements: list[Replacement]) -> list[_Window]:
    """Whole-line windows with margin around the sorted, disjoint replacements; overlapping ones merge."""
    windows: list[_Window] = []
    offset_delta = line_delta = cursor_offset = cursor_line = 0
    for replacement in replacements:
        match_end = replacement.match_index + replacement.match_length
        start = _line_start_before(base, replacement.match_index)
        for _ in range(DIFF_WINDOW_MARGIN_LINES):
            if start <= 0:
                break
            start = _line_start_before(base, start - 1)
        end = match_end
        for i in range(DIFF_WINDOW_MARGIN_LINES + 1):
            if end >= len(base):
                break
            search_from = max(match_end - 1, replacement.match_index) if i == 0 else end
            line_feed = base.find("\n", search_from)
            end = len(base) if line_feed == -1 else line_feed + 1
        replacement_offset_delta = len(replacement.new_text) - replacement.match_length
        replacement_line_delta = _count_line_feeds(replacement.new_text) - _count_line_feeds(
            base, replacement.match_index, match_end
        )
        if windows and start <= windows[-1].old_end:
            previous = windows[-1]
            previous.old_end = max(previous.old_end, end)
            previous.new_end = previous.old_end + offset_delta + replacement_offset_delta
        else:
            cursor_line += _count_line_feeds(base, cursor_offset, start)
            cursor_offset = start
            windows.append(
                _Window(
                    start,
                    end,
                    cursor_line,
                    start + offset_delta,
                    end + offset_delta + replacement_offset_delta,
                    cursor_line + line_delta,
                )
            )
        offset_delta += replacement_offset_delta
        line_delta += replacement_line_delta
    return windows


def generate_edit_diff(path: str, base: str, new: str, replacements: list[Replacement]) -> dict[str, Any]:
    """``{"diff", "patch", "firstChangedLine"}`` as pi's edit tool returns them in ``details``."""
    width = len(str(max(_count_line_feeds(base) + 1, _count_line_feeds(new) + 1)))
    skip = f" {_pad('', width)} ..."
    output: list[str] = []
    hunks: list[Hunk] = []
    first_changed: int | None = None
    for window in _diff_windows(base, replacements):
        old_text = base[window.old_start : window.old_end]
        new_text = new[window.new_start : window.new_end]
        shown, first = format_display_diff(
            diff_lines(old_text, new_text), window.old_line + 1, window.new_line + 1, width
        )
        if first_changed is None:
            first_changed = first
        if output and output[-1] == skip and shown and shown[0] == skip:
            shown = shown[1:]
        output.extend(shown)
        for hunk in structured_patch(old_text, new_text):
            hunk.old_start += window.old_line
            hunk.new_start += window.new_line
            hunks.append(hunk)
    details: dict[str, Any] = {"diff": "\n".join(output), "patch": format_patch(path, path, hunks)}
    if first_changed is not None:
        details["firstChangedLine"] = first_changed
    return details
