"""Stand-ins for the extension API and ctx, enough to drive OCC's handlers one by one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau.extension import AbortSignal


@dataclass(frozen=True)
class FakeModel:
    provider: str = "faux"
    id: str = "faux-1"
    context_window: int = 200_000
    max_tokens: int = 16_384


class FakeUI:
    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notices.append((message, type))

    def set_status(self, key: str, text: str | None = None) -> None:
        pass


class FakeSessionManager:
    def __init__(self, entries: list[dict[str, Any]] | None = None) -> None:
        self.entries = entries or []

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        return list(self.entries)

    def build_session_projection(self) -> dict[str, Any]:
        from tau.session.projection import build_session_projection

        return build_session_projection(self.entries)


class FakeTau:
    def __init__(self, settings: dict[str, Any] | None = None, active: list[str] | None = None) -> None:
        self.handlers: dict[str, list[Any]] = {}
        self.tools: dict[str, Any] = {}
        self.entries: list[tuple[str, Any]] = []
        self.sent: list[tuple[dict[str, Any], bool]] = []
        self.settings = settings or {}
        self.active = active or ["read", "bash", "edit", "write"]

    def on(self, event: str, handler: Any) -> Any:
        self.handlers.setdefault(event, []).append(handler)
        return lambda: None

    def register_tool(self, definition: Any) -> None:
        self.tools[definition.name] = definition

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        self.entries.append((custom_type, data))
        return f"e{len(self.entries)}"

    def send_message(
        self, message: dict[str, Any], *, trigger_turn: bool = False, deliver_as: Any = None
    ) -> None:
        self.sent.append((message, trigger_turn))

    def get_settings(self) -> dict[str, Any]:
        return self.settings

    def get_active_tools(self) -> list[str]:
        return list(self.active)

    def states(self) -> list[dict[str, Any]]:
        return [data for kind, data in self.entries if kind == "sol-pi-online-context-state-v1"]


class FakeCtx:
    """``compact_outcome``: a result dict, or an exception for ``on_error``."""

    def __init__(self, entries: list[dict[str, Any]] | None = None, **kw: Any) -> None:
        self.session_manager = FakeSessionManager(entries)
        self.model = kw.pop("model", FakeModel())
        self.mode = kw.pop("mode", "json")
        self.ui = FakeUI()
        self.signal: AbortSignal | None = kw.pop("signal", None)
        self.usage: dict[str, Any] | None = kw.pop("usage", None)
        self.system_prompt = kw.pop("system_prompt", "")
        self.idle = True
        self.aborts = 0
        self.compactions: list[str | None] = []
        self.kept: list[int | None] = []
        self.compact_outcome: Any = {"summary": "short summary", "firstKeptEntryId": "x", "tokensBefore": 1}

    def get_context_usage(self) -> dict[str, Any] | None:
        return self.usage

    def get_system_prompt(self) -> str:
        return self.system_prompt

    def is_idle(self) -> bool:
        return self.idle

    def abort(self) -> None:
        self.aborts += 1

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        on_complete: Any = None,
        on_error: Any = None,
        keep_recent_tokens: int | None = None,
    ) -> None:
        self.compactions.append(custom_instructions)
        self.kept.append(keep_recent_tokens)
        if isinstance(self.compact_outcome, BaseException):
            on_error(self.compact_outcome)
        else:
            on_complete(self.compact_outcome)


def message_entry(entry_id: str, message: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-11-30T00:00:00.000Z",
        "message": message,
    }


def user(text: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant_call(call_id: str, name: str, args: dict[str, Any], ts: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
        "stopReason": "toolUse",
        "timestamp": ts,
    }


def tool_result(call_id: str, name: str, text: str, ts: int, is_error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "timestamp": ts,
    }
