"""The demo's trace: one or a few lines per JSON-mode event of the session, as it runs.

todo calls read as the terminal shows them (task titles, then the checklist after each call that
changed it), from the snapshots the todo results carry.
"""

from __future__ import annotations

import json
from typing import Any

from tau.bundled.fusion.wire import MARKERS, MUTATIONS
from tau.bundled.obspack.wire import RECALL_TOOL
from tau.llm.messages import message_text
from tau.modes.interactive.todo_rows import checklist, todo_title

__all__ = ["Trace"]


class Trace:
    """Turns the session's JSON-mode lines into the demo's lines; keeps the last todo snapshot."""

    def __init__(self) -> None:
        self._todo: Any = None  # the details of the last successful todo call
        self._calls: dict[str, dict[str, Any]] = {}

    def render(self, line: str) -> str | None:
        """The trace lines for one event line, or ``None`` for an event the demo skips."""
        try:
            event = json.loads(line)
        except ValueError:
            return None
        kind = event.get("type")
        if kind == "tool_execution_start":
            self._calls[str(event.get("toolCallId"))] = event.get("args") or {}
            return f"  → {self._call(event.get('toolName'), event.get('args') or {})}"
        if kind == "tool_execution_end":
            return self._result(event)
        if kind == "message_end":
            message = event.get("message") or {}
            text = message_text(message)
            if message.get("role") == "assistant" and text:
                return f"model: {text}"
        if kind == "entry_appended":
            entry = event.get("entry") or {}
            if entry.get("customType") == "todo-loop:continue":
                return "todo-loop: tasks are still open; the run continues (hidden message)"
        return None

    def _call(self, tool: Any, args: dict[str, Any]) -> str:
        if tool == "todo":
            return todo_title(args, self._todo) or f"todo {json.dumps(args)[:80]}"
        if tool in ("edit", "write"):
            fused = args.get("then_run")
            suffix = (
                f"  [Action Fusion: then_run {fused.get('command')!r}]" if isinstance(fused, dict) else ""
            )
            return f"{tool} {args.get('path')}{suffix}"
        if tool == "read":
            return f"read {args.get('path')}"
        if tool == "bash":
            return f"bash {args.get('command')}"
        if tool == RECALL_TOOL:
            what = (
                f"search {args.get('query')!r}"
                if args.get("query") is not None
                else f"offset {args.get('offset', 0)}"
            )
            return f"obs_recall {args.get('id')} {what}  [ObservationPack]"
        return f"{tool} {json.dumps(args)[:80]}"

    def _result(self, event: dict[str, Any]) -> str | None:
        result = event.get("result") or {}
        text = message_text(result)
        tool = event.get("toolName")
        if tool == "todo":
            return self._todo_result(event, result)
        at = min((i for m in MARKERS if (i := text.find(m)) >= 0), default=-1)
        if tool in MUTATIONS and at >= 0:
            marker = text[at:].strip().replace("\n", " ")
            return f"    {marker[:100]}"
        if tool == "read":
            return f"    {len(text.encode())} bytes read (ObservationPack packs it after two requests)"
        if tool == RECALL_TOOL:
            matches = (result.get("details") or {}).get("matches") or []
            lines = ", ".join(str(m.get("line")) for m in matches[:5])
            return (
                f"    {len(matches)} {'match' if len(matches) == 1 else 'matches'} in the stored log, "
                f"{'line' if len(matches) == 1 else 'lines'} {lines}"
                if matches
                else "    no match"
            )
        return None

    def _todo_result(self, event: dict[str, Any], result: dict[str, Any]) -> str | None:
        args = self._calls.pop(str(event.get("toolCallId")), {})
        if event.get("isError"):
            return f"    {message_text(result)}"
        previous, self._todo = self._todo, result.get("details")
        if args.get("action") == "add":  # a plan is added task by task: the list shows at its first change
            return None
        listed = checklist(args, previous, self._todo, expanded=False)
        return "\n".join(f"      {line}" for line in listed.lines) if listed is not None else None
