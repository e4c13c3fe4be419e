"""Plain entry dicts and a tiny session view for todo-loop's core tests (no host needed)."""

from __future__ import annotations

from typing import Any


class FakeView:
    """The read-only session calls the branch reader uses, over a dict of entries."""

    def __init__(self, session_id: str = "s1") -> None:
        self.entries: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.leaf: str | None = None
        self.session_id = session_id
        self.reads = 0

    def add(self, entry: dict[str, Any], parent: str | None = "leaf") -> str:
        entry = dict(entry)
        entry_id = entry.setdefault("id", f"{len(self.entries) + 1:08x}")
        entry["parentId"] = self.leaf if parent == "leaf" else parent
        self.entries[entry_id] = entry
        self.order.append(entry_id)
        self.leaf = entry_id
        return entry_id

    def get_session_id(self) -> str:
        return self.session_id

    def get_leaf_id(self) -> str | None:
        return self.leaf

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        self.reads += 1
        return self.entries.get(entry_id)

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        path, seen = [], set()
        current = self.entries.get(from_id or self.leaf or "")
        while current is not None and current["id"] not in seen:
            seen.add(current["id"])
            path.append(current)
            parent = current.get("parentId")
            current = self.entries.get(parent) if isinstance(parent, str) else None
        return path[::-1]


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1, **extra}}


def assistant(text: str = "ok", stop: str = "stop", tool: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "toolCall", "id": "call_1", "name": tool, "arguments": {}})
    return {
        "type": "message",
        "message": {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 1},
    }


def tasks_state(*statuses: str, titles: list[str] | None = None) -> dict[str, Any]:
    names = titles or [f"task {index + 1}" for index in range(len(statuses))]
    tasks = [
        {"id": f"t{index}", "title": name, "description": "", "status": status, "dependencies": []}
        for index, (name, status) in enumerate(zip(names, statuses, strict=True))
    ]
    return {
        "type": "custom",
        "customType": "pi-todo:state",
        "data": {"schemaVersion": 1, "revision": 1, "tasks": tasks},
    }


def marker_entry() -> dict[str, Any]:
    return {
        "type": "custom_message",
        "customType": "todo-loop:continue",
        "content": "Continue working: your todo list still has unfinished tasks.",
        "display": False,
    }
