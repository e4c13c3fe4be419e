"""A faux-driven AgentSession harness for tests (pi's ``test/suite/harness.ts`` in spirit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.llm.providers import faux
from tau.llm.registry import ModelRegistry
from tau.session.manager import SessionManager


class Harness:
    """A session over a faux script, recording every public event."""

    def __init__(
        self,
        cwd: Path,
        steps: list[dict[str, Any]],
        *,
        settings: dict[str, Any] | None = None,
        hooks: Any = None,
        persist: bool = True,
        model_overrides: dict[str, Any] | None = None,
        manager: SessionManager | None = None,
        **options: Any,
    ) -> None:
        self.provider = faux.use_script(steps)
        self.registry = ModelRegistry()
        model = self.registry.find("faux", "faux-1")
        if model_overrides:
            import dataclasses

            model = dataclasses.replace(model, **model_overrides)
        values = {"retry": {"enabled": False}, "compaction": {"enabled": False}}
        values.update(settings or {})
        if manager is None:
            manager = (
                SessionManager.create(cwd, cwd / "sessions") if persist else SessionManager.in_memory(cwd)
            )
        self.manager = manager
        self.session = AgentSession(
            manager, Settings.in_memory(values), self.registry, model, cwd=cwd, hooks=hooks, **options
        )
        self.events: list[dict[str, Any]] = []
        self.session.subscribe(self.events.append)

    def types(self, *, updates: bool = False) -> list[str]:
        skip = () if updates else ("message_update", "tool_execution_update")
        return [event["type"] for event in self.events if event["type"] not in skip]

    def roles(self) -> list[str]:
        return [message["role"] for message in self.session.messages]

    def entry_types(self) -> list[str]:
        out = []
        for entry in self.manager.get_entries():
            kind = entry["type"]
            if kind == "message":
                kind = f"message:{entry['message']['role']}"
            out.append(kind)
        return out

    def file_lines(self) -> list[str]:
        path = self.manager.get_session_file()
        return Path(path).read_text().splitlines() if path and Path(path).exists() else []
