"""``/tree``: the session tree as a list to navigate (pi-host §2.8).

Each entry is a line, indented by depth where the tree branches; the current leaf is marked and
preselected. Enter picks an entry (its id is the overlay's result), Esc cancels.
"""

from __future__ import annotations

from typing import Any

from tau.modes.interactive.dialogs import _DIM, _INVERSE, _RESET, Component, _clip
from tau.modes.interactive.keybindings import select_key
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.model import content_text
from tau.modes.interactive.sanitize import sanitize_text

__all__ = ["TreeSelector", "entry_label", "flatten_tree"]


def entry_label(entry: dict[str, Any]) -> str:
    """One line describing a session entry."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") or {}
        role = message.get("role", "?")
        if role == "assistant":
            parts = message.get("content") or []
            text = content_text([p for p in parts if p.get("type") == "text"])
            calls = [p.get("name", "?") for p in parts if p.get("type") == "toolCall"]
            text = text or (
                f"[tool calls: {', '.join(calls)}]" if calls else f"[{message.get('stopReason', '')}]"
            )
            return f"assistant: {text}"
        if role == "system":
            return "[system prompt]"
        if role == "toolResult":
            return f"tool result ({message.get('toolName', '?')}): {content_text(message.get('content'))}"
        return f"{role}: {content_text(message.get('content'))}"
    if kind == "compaction":
        return f"[compaction] {entry.get('summary', '')}"
    if kind == "branch_summary":
        return f"[branch summary] {entry.get('summary', '')}"
    if kind == "custom_message":
        return f"[{entry.get('customType', 'custom')}] {content_text(entry.get('content'))}"
    if kind == "model_change":
        return f"[model] {entry.get('provider')}/{entry.get('modelId')}"
    if kind == "thinking_level_change":
        return f"[thinking] {entry.get('thinkingLevel')}"
    if kind == "session_info":
        return f"[name] {entry.get('name', '')}"
    return f"[{kind}]"


def flatten_tree(nodes: list[dict[str, Any]], depth: int = 0) -> list[tuple[int, dict[str, Any], str | None]]:
    """``(depth, entry, label)`` in display order; depth grows only where the tree branches."""
    rows: list[tuple[int, dict[str, Any], str | None]] = []
    stack: list[tuple[dict[str, Any], int]] = [(node, depth) for node in reversed(nodes)]
    branching_root = len(nodes) > 1
    while stack:
        node, level = stack.pop()
        rows.append((level + (1 if branching_root and level == 0 else 0), node["entry"], node.get("label")))
        children = node.get("children") or []
        next_level = level + 1 if len(children) > 1 else level
        stack.extend((child, next_level) for child in reversed(children))
    return rows


class TreeSelector(Component):
    """Pick an entry of the session tree; the result is its id (``None``: cancelled)."""

    def __init__(self, tree: list[dict[str, Any]], leaf_id: str | None, *, visible: int = 12) -> None:
        self.rows = [row for row in flatten_tree(tree) if row[1].get("type") != "label"]
        self.leaf_id = leaf_id
        self.visible = visible
        ids = [entry.get("id") for _, entry, _ in self.rows]
        self.index = ids.index(leaf_id) if leaf_id in ids else max(0, len(ids) - 1)

    def selected_id(self) -> str | None:
        return self.rows[self.index][1].get("id") if self.rows else None

    def render(self, width: int) -> list[str]:
        lines = ["\x1b[1mSession tree\x1b[0m"]
        start = max(0, min(self.index - self.visible // 2, len(self.rows) - self.visible))
        for i in range(start, min(len(self.rows), start + self.visible)):
            depth, entry, label = self.rows[i]
            mark = "● " if entry.get("id") == self.leaf_id else "  "
            text = sanitize_text(entry_label(entry)).replace("\n", " ")
            if label:
                text = f"[{sanitize_text(label)}] {text}"
            line = _clip(f"{'  ' * depth}{mark}{text}", width - 2)
            lines.append(f"{_INVERSE}› {line}{_RESET}" if i == self.index else f"  {line}")
        if not self.rows:
            lines.append(f"{_DIM}  (empty session){_RESET}")
        lines.append(f"{_DIM}↑↓ move · enter go here · esc cancel · ● current position{_RESET}")
        return lines

    def handle_input(self, data: str) -> None:
        key = select_key(parse_key(data))
        if key == "escape":
            self.done(None)
        elif key == "enter" and self.rows:
            self.done(self.selected_id())
        elif key in ("up", "down", "pageup", "pagedown", "home", "end") and self.rows:
            step = {"up": -1, "down": 1, "pageup": -self.visible, "pagedown": self.visible}.get(key, 0)
            if key == "home":
                self.index = 0
            elif key == "end":
                self.index = len(self.rows) - 1
            else:
                self.index = max(0, min(len(self.rows) - 1, self.index + step))
            self.request_render()
