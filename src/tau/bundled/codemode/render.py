"""The interactive row of a ``codemode`` call, drawn as pi draws it.

The call shows the script (its first 10 lines until tool output is expanded with Ctrl+O); the
result lists the nested tool calls with their status while they run and after (the last 8 of them
when collapsed, arguments cut at 80 characters; an expanded row adds each failed call's error),
the cost of the script's model calls when more than one was priced, then the script's output
without the ``Script completed`` / ``Wall time`` / ``Output:`` header (5 lines when collapsed, and
where the full output went when it was cut), and how long the script has been running (``Elapsed
4.2s``) or took (``Took 4.2s``), as the bash row shows it. Nested calls get no rows of their own: they never
reach the model as tool calls.

The renderers fold their sections themselves (``renders_collapsed``), as pi's do, so the host does
not cut the row at its usual 8 lines.
"""

from __future__ import annotations

from typing import Any

from tau.common.lazy_regex import lazy_pattern

__all__ = ["render_codemode_call", "render_codemode_result"]

CODE_PREVIEW_LINES = 10
CALL_PREVIEW_COUNT = 8
OUTPUT_PREVIEW_LINES = 5
COLLAPSED_ARGS_CHARS = 80
_SCRIPT_HEADER = lazy_pattern(r"^Script (completed|failed)\nWall time [\d.]+ seconds\nOutput:\n$")
_ICONS = {"running": "…", "ok": "✓", "error": "✗", "cancelled": "⊘"}


def _more(hidden: int, noun: str) -> str:
    return f"… {hidden} more {noun} (ctrl+o to expand)"


def _preview(lines: list[str], limit: int, expanded: bool) -> list[str]:
    if expanded or len(lines) <= limit:
        return lines
    return [*lines[:limit], _more(len(lines) - limit, "lines" if len(lines) - limit > 1 else "line")]


def render_codemode_call(args: Any, context: Any = None) -> list[str]:
    """``codemode``, then the script (its ``// @options:`` line included, as pi shows it)."""
    code = args.get("code") if isinstance(args, dict) else None
    if not isinstance(code, str):
        return ["codemode [invalid arg]"]
    expanded = bool(context.get("expanded")) if isinstance(context, dict) else False
    text = code.replace("\r", "").rstrip().replace("\t", "   ")
    return ["codemode", *_preview(text.split("\n") if text else [], CODE_PREVIEW_LINES, expanded)]


def _duration(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return ""
    return f"{round(ms)}ms" if ms < 1000 else f"{ms / 1000:.1f}s"


def _cost(cost: float) -> str:
    # Cents for larger amounts, two significant digits for the fractions of a cent.
    return f"${cost:.2f}" if cost >= 0.01 else f"${cost:#.2g}"


def _call_line(call: dict[str, Any], expanded: bool) -> str:
    args = str(call.get("args") or "")
    if not expanded and len(args) > COLLAPSED_ARGS_CHARS:
        args = args[: COLLAPSED_ARGS_CHARS - 3] + "..."
    parts = [_ICONS.get(str(call.get("status")), "?"), str(call.get("name", ""))]
    if args:
        parts.append(args)
    if duration := _duration(call.get("durationMs")):
        parts.append(duration)
    if isinstance(call.get("cost"), int | float) and call["cost"]:
        parts.append(_cost(call["cost"]))
    line = " ".join(parts)
    if expanded and call.get("error"):
        line += "\n    " + str(call["error"]).replace("\n", "\n    ")
    return line


def _output_text(content: Any) -> str:
    blocks = (
        [block for block in content or [] if isinstance(block, dict)] if isinstance(content, list) else []
    )
    first = blocks[0] if blocks else None
    if first is not None and first.get("type") == "text" and _SCRIPT_HEADER.match(str(first.get("text", ""))):
        blocks = blocks[1:]
    parts = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append(f"[image: {block.get('mimeType', '?')}]")
    return "\n".join(parts).strip()


def render_codemode_result(result: Any, options: Any = None) -> list[str]:
    """The nested calls, the model-call cost, the output without the script header, the timer."""
    data = result if isinstance(result, dict) else {}
    options = options if isinstance(options, dict) else {}
    expanded, partial = bool(options.get("expanded")), bool(options.get("isPartial"))
    found = data.get("details")
    details: dict[str, Any] = found if isinstance(found, dict) else {}
    calls = [call for call in details.get("calls") or [] if isinstance(call, dict)]
    lines: list[str] = []
    if calls:
        shown = calls if expanded else calls[-CALL_PREVIEW_COUNT:]
        lines.append("")
        if len(shown) < len(calls):
            earlier = len(calls) - len(shown)
            lines.append(f"… {earlier} earlier {'calls' if earlier > 1 else 'call'} (ctrl+o to expand)")
        lines.extend(line for call in shown for line in _call_line(call, expanded).split("\n"))
        priced = [
            call["cost"] for call in calls if isinstance(call.get("cost"), int | float) and call["cost"]
        ]
        if len(priced) > 1:
            lines.append(f"Model calls: {_cost(sum(priced))}")
    output = "" if partial else _output_text(data.get("content")).replace("\t", "   ")
    if output:
        lines.append("")
        lines.extend(_preview(output.split("\n"), OUTPUT_PREVIEW_LINES, expanded))
        if not expanded and details.get("fullOutputPath"):
            lines.append(f"Full output: {details['fullOutputPath']}")
    if timer := options.get("timer"):  # the host's Elapsed/Took line, last as in pi's row
        lines.extend(["", str(timer)])
    return lines
