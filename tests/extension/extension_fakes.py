"""A stand-in for the run-time session: the names the extension API calls, recorded."""

from __future__ import annotations

from typing import Any

from tau.agent.settings import Settings
from tau.session.manager import SessionManager
from tau.tools.registry import builtin_tools


class FakeHost:
    """Just enough of ``AgentSession`` for the runner, the API object and ctx."""

    def __init__(self, cwd: str = "/tmp") -> None:
        self.hooks: Any = None
        self.session_manager = SessionManager.in_memory(cwd)
        self.settings = Settings.in_memory({"shellPath": "/bin/sh", "sol": {"actionFusion": True}})
        self.model = None
        self.model_registry = None
        self.cwd = cwd
        self.signal = None
        self.tools = {tool.name: tool for tool in builtin_tools()}
        self.active = list(self.tools)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.events: list[dict[str, Any]] = []
        self.thinking_level = "medium"

    def set_hooks(self, hooks: Any) -> None:
        self.hooks = hooks

    def _emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def register_tool(self, definition: Any) -> None:
        self.tools[definition.name] = definition
        if definition.name not in self.active:
            self.active.append(definition.name)

    def get_all_tools(self) -> list[Any]:
        return list(self.tools.values())

    def get_active_tool_names(self) -> list[str]:
        return list(self.active)

    def set_active_tools(self, names: list[str]) -> None:
        self.active = [name for name in names if name in self.tools]

    def _record(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.calls.append((name, args, kwargs))

    async def send_custom_message(
        self, message: Any, *, trigger_turn: bool = False, deliver_as: Any = None
    ) -> None:
        self._record("send_custom_message", message, trigger_turn=trigger_turn, deliver_as=deliver_as)

    async def send_user_message(self, content: Any, *, deliver_as: Any = None) -> None:
        self._record("send_user_message", content, deliver_as=deliver_as)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        return self.session_manager.append_custom_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self.session_manager.append_session_info(name)

    def get_session_name(self) -> str | None:
        return self.session_manager.get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.session_manager.append_label_change(entry_id, label)

    async def set_model(self, model: Any) -> None:
        self.model = model

    def get_thinking_level(self) -> str:
        return self.thinking_level

    def set_thinking_level(self, level: str) -> None:
        self.thinking_level = level

    def is_idle(self) -> bool:
        return True

    def has_pending_messages(self) -> bool:
        return False

    async def abort(self) -> None:
        self._record("abort")

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        self._record("compact", custom_instructions)
        return {"summary": "s"}

    def get_context_usage(self) -> dict[str, Any]:
        return {"tokens": 10, "contextWindow": 100, "percent": 10.0}

    def get_system_prompt(self) -> str:
        return "You are tau."

    async def execute_tool(
        self, caller_id: str, name: str, args: Any, *, signal: Any = None, on_update: Any = None
    ):
        self._record("execute_tool", caller_id, name, args, signal=signal)
        return {
            "toolCall": {"id": f"{caller_id}/1", "name": name},
            "result": {"content": []},
            "isError": False,
        }

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        self._record("navigate_tree", target_id, **options)
        return {"cancelled": False}

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
        self._record("fork", entry_id, position=position)
        return {"cancelled": False}

    async def new_session(self) -> dict[str, Any]:
        self._record("new_session")
        return {"cancelled": False}
