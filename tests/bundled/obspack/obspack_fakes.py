"""A stand-in for the extension API and ctx, enough to drive ObservationPack handler by handler."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any


class FakeUI:
    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.statuses: list[tuple[str, str | None]] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notices.append((message, type))

    def set_status(self, key: str, text: str | None = None) -> None:
        self.statuses.append((key, text))


class FakeSessionManager:
    def __init__(
        self, session_dir: str, session_id: str = "session-a", entries: list[dict] | None = None
    ) -> None:
        self.session_dir = session_dir
        self.session_id = session_id
        self.entries = entries or []
        self.leaf: str | None = self.entries[-1]["id"] if self.entries else None
        self.branch_calls = 0

    def get_session_dir(self) -> str:
        return self.session_dir

    def get_session_id(self) -> str:
        return self.session_id

    def get_leaf_id(self) -> str | None:
        return self.leaf

    def get_branch(self, from_id: str | None = None) -> list[dict]:
        self.branch_calls += 1
        by_id = {entry["id"]: entry for entry in self.entries}
        branch, current = [], self.leaf
        while current is not None:
            entry = by_id[current]
            branch.append(entry)
            current = entry.get("parentId")
        return branch[::-1]

    def append(self, message: dict, entry_id: str) -> str:
        self.entries.append({"type": "message", "id": entry_id, "parentId": self.leaf, "message": message})
        self.leaf = entry_id
        return entry_id


class FakeCtx:
    def __init__(self, manager: FakeSessionManager, mode: str = "json", cwd: str = "/") -> None:
        self.session_manager = manager
        self.mode = mode
        self.ui = FakeUI()
        self.cwd = cwd

    def is_project_trusted(self) -> bool:
        return False


class FakeTau:
    def __init__(self, settings: dict | None = None) -> None:
        self.handlers: dict[str, list[Any]] = {}
        self.tools: dict[str, Any] = {}
        self.entries: list[tuple[str, Any]] = []
        self.settings = settings or {}

    def on(self, event: str, handler: Any) -> Any:
        self.handlers.setdefault(event, []).append(handler)
        return lambda: None

    def register_tool(self, definition: Any) -> None:
        self.tools[definition.name] = definition

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        self.entries.append((custom_type, data))
        return f"e{len(self.entries)}"

    def get_settings(self) -> dict:
        return self.settings

    def get_all_tools(self) -> list[dict]:
        return [{"name": name, "parameters": tool.parameters} for name, tool in self.tools.items()]

    def get_active_tools(self) -> list[str]:
        return list(self.tools)

    async def emit(self, event: str, ctx: Any, **fields: Any) -> list[Any]:
        answers = []
        for handler in list(self.handlers.get(event, [])):
            answer = handler(SimpleNamespace(type=event, **fields), ctx)
            answers.append(await answer if inspect.isawaitable(answer) else answer)
        return answers

    async def context(self, messages: list[dict], ctx: Any) -> list[dict]:
        """Emit ``context`` on copies, as the host does; returns the (edited) copies."""
        import copy

        copies = [copy.deepcopy(message) for message in messages]
        answers = await self.emit("context", ctx, messages=copies)
        assert all(answer is None for answer in answers), "ObservationPack must edit in place"
        return copies

    async def call(self, tool: str, params: dict, ctx: Any, signal: Any = None) -> Any:
        return await self.tools[tool].execute(f"call-{tool}", params, signal, None, ctx)


def tool_result(text: str, call_id: str = "call-1", tool: str = "bash", **extra: Any) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
        **extra,
    }


def text_of(message: dict) -> str:
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text")
