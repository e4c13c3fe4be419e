"""Stand-ins for the extension API, ctx and model registry, enough to drive the reducer's handler."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from tau.extension import ToolResultEvent


@dataclass(frozen=True)
class FakeModel:
    provider: str = "faux"
    id: str = "faux-1"
    max_tokens: int = 16_384


class FakeRegistry:
    """``find`` knows the given models; ``complete`` answers from ``replies`` (text, dict or callable)."""

    def __init__(self, *models: FakeModel, replies: list[Any] | None = None) -> None:
        self.models = list(models) or [FakeModel()]
        self.replies = list(replies or [])
        self.calls: list[tuple[Any, dict[str, Any], tuple[Any, ...]]] = []

    def find(self, provider: str, model_id: str) -> FakeModel | None:
        return next((m for m in self.models if (m.provider, m.id) == (provider, model_id)), None)

    async def complete(self, model: Any, context: dict[str, Any], *options: Any) -> dict[str, Any]:
        self.calls.append((model, context, options))
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(context)
            if asyncio.iscoroutine(reply):
                reply = await reply
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return answer(reply)
        return reply


def answer(text: str, stop_reason: str = "stop", total: int = 321) -> dict[str, Any]:
    usage = {"input": 300, "output": 21, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": stop_reason,
        "usage": usage,
    }


def failure_receipt(quote: str):
    """A reply (for ``FakeRegistry``) with a valid failure receipt quoting ``quote`` from the request's log."""

    def respond(context: dict[str, Any]) -> dict[str, Any]:
        text = context["messages"][0]["content"][0]["text"]
        digest = re.search(r"^source_sha256=([0-9a-f]{64})$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]
        receipt = {
            "schema": "sol-pi-evidence-receipt/1",
            "source_sha256": digest,
            "status": "failure",
            "uncertain": False,
            "evidence": [{"kind": "failure", "quote": quote}],
        }
        return answer(json.dumps(receipt))

    return respond


class FakeUI:
    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.statuses: list[tuple[str, str | None]] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notices.append((message, type))

    def set_status(self, key: str, text: str | None = None) -> None:
        self.statuses.append((key, text))


class FakeSessionManager:
    def __init__(self, session_dir: str, session_id: str = "session-a") -> None:
        self.session_dir = session_dir
        self.session_id = session_id

    def get_session_dir(self) -> str:
        return self.session_dir

    def get_session_id(self) -> str:
        return self.session_id


class FakeCtx:
    def __init__(self, session_dir: str, registry: FakeRegistry | None = None, **kw: Any) -> None:
        self.session_manager = FakeSessionManager(session_dir, kw.pop("session_id", "session-a"))
        self.model_registry = registry or FakeRegistry()
        self.model = kw.pop("model", FakeModel())
        self.mode = kw.pop("mode", "json")
        self.signal = kw.pop("signal", None)
        self.ui = FakeUI()


class FakeTau:
    def __init__(self) -> None:
        self.handlers: dict[str, list[Any]] = {}
        self.entries: list[tuple[str, Any]] = []

    def on(self, event: str, handler: Any) -> Any:
        self.handlers.setdefault(event, []).append(handler)
        return lambda: None

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        self.entries.append((custom_type, data))
        return f"e{len(self.entries)}"

    def journal(self) -> list[dict[str, Any]]:
        return [data for kind, data in self.entries if kind == "sol-pi-evidence-preserving-reducer-v1"]

    def kinds(self) -> list[str]:
        return [data["kind"] for data in self.journal()]


def bash_event(command: str, text: str, *, is_error: bool = False, **kw: Any) -> ToolResultEvent:
    return ToolResultEvent(
        tool_call_id=kw.pop("tool_call_id", "call_1"),
        tool_name="bash",
        input={"command": command},
        content=[{"type": "text", "text": text}],
        is_error=is_error,
        **kw,
    )


def fused_event(
    tool: str, command: str, blocks: list[str], *, is_error: bool = False, **kw: Any
) -> ToolResultEvent:
    return ToolResultEvent(
        tool_call_id=kw.pop("tool_call_id", "call_1"),
        tool_name=tool,
        input={"path": "a.py", "then_run": {"command": command}},
        content=[{"type": "text", "text": block} for block in blocks],
        is_error=is_error,
        **kw,
    )
