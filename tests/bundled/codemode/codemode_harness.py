"""A run-time session on the faux model with the bundled extensions and codemode enabled
(``defaultTools: ["+codemode"]``), recording what each request declares and carries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.extension import load_extensions
from tau.llm.transcript import current_tools
from tau.session.manager import SessionManager


def code_call(code: str) -> dict[str, Any]:
    return {"tool": "codemode", "args": {"code": code}}


def text_of(message: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in message["content"] if block.get("type") == "text")


def _request(context: dict[str, Any]) -> dict[str, Any]:
    """What a request carried: its system prompt, its messages (copied) and the tools it declares."""
    return {
        "systemPrompt": context.get("systemPrompt") or "",
        "messages": json.loads(json.dumps(context["messages"], default=str)),
        "tools": {tool["name"]: tool for tool in current_tools(context["messages"])},
    }


class Harness:
    def __init__(self, steps: list[Any], cwd: Path, settings: dict[str, Any] | None = None) -> None:
        scripted = FauxModel(steps, record=_request)
        self.requests: list[dict[str, Any]] = scripted.requests
        self.events: list[dict[str, Any]] = []
        self.manager = SessionManager.create(str(cwd), str(cwd / "sessions"))
        self.session = AgentSession(
            self.manager,
            Settings.in_memory({"defaultTools": ["+codemode"], **(settings or {})}),
            scripted.registry,
            scripted.model,
            cwd=str(cwd),
            stream_fn=scripted.stream,
        )
        self.session.subscribe(self.events.append)
        self.cwd = cwd

    async def start(self) -> Any:
        runner = await load_extensions(self.session, cwd=str(self.cwd), mode="json")
        await self.session.start()
        return runner

    def tool_results(self, name: str | None = None) -> list[dict[str, Any]]:
        return [
            entry["message"]
            for entry in self.manager.get_entries()
            if entry["type"] == "message"
            and entry["message"]["role"] == "toolResult"
            and (name is None or entry["message"]["toolName"] == name)
        ]

    def nested_ends(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "tool_execution_end" and e.get("parentToolCallId")]
