"""Replaying pi 1.6's scenario goldens through tau's AgentSession with the faux provider.

The faux answers come from the golden itself (decisions.md, "faux and the scenario goldens"): a
turn request gets the next assistant message of the golden session file (file order), a summary
request gets the canned summary chosen by its prompt, as pi's generator did (fixtures README).
Files the scenario read are recreated from its ``read`` results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faux_model import FauxModel, Summarizer
from tau.agent.compaction.prompts import CACHED_REQUEST_PREAMBLE
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm

SUMMARIES = {
    "compaction": "## Goal\nWrite an essay about testing.\n\n## Progress\n### Done\n- [x] Read notes.txt\n"
    "- [x] Wrote the essay\n\n## Next Steps\n1. Answer follow-up questions",
    "prefix": "## Original Request\nSee above.\n\n## Progress So Far\n- none",
    "updated": "## Goal\nWrite an essay about testing, then save a report.\n\n## Progress\n### Done\n- [x] Essay\n"
    "- [x] Read numbers.txt\n- [x] Wrote report.txt",
    "branch": '## Goal\nAnswer the second question.\n\n## Progress\n- Answered it with "Answer two."',
}


def golden_entries(fixtures: Path, name: str) -> list[dict[str, Any]]:
    lines = (fixtures / "scenarios" / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def golden_context(fixtures: Path, name: str) -> dict[str, Any]:
    return json.loads((fixtures / "scenarios" / f"{name}.context.json").read_text())


def _texts(messages: list[dict[str, Any]]) -> str:
    return "\n".join(
        block.get("text", "")
        for message in messages
        for block in (message["content"] if isinstance(message["content"], list) else [])
    )


def is_cached_summary_request(request: dict[str, Any]) -> bool:
    """A cache-friendly summary request: the agent's request, then tau's instruction message."""
    last = request["messages"][-1] if request["messages"] else {}
    return last.get("role") == "user" and CACHED_REQUEST_PREAMBLE in _texts([last])


def summary_text(request: dict[str, Any]) -> str:
    # A cache-friendly request holds the whole conversation: only its instruction says what is asked.
    cached = is_cached_summary_request(request)
    text = _texts(request["messages"][-1:] if cached else request["messages"])
    if "summary of this conversation branch" in text:
        return SUMMARIES["branch"]
    if "Create a concise checkpoint" in text:
        return SUMMARIES["prefix"]
    if "<previous-summary>" in text or (cached and "Update the existing structured summary" in text):
        return SUMMARIES["updated"]
    return SUMMARIES["compaction"]


class GoldenModel(Summarizer):
    """The faux factory: golden assistant messages for turns, canned texts for summaries."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        super().__init__(
            [
                entry["message"]
                for entry in entries
                if entry["type"] == "message" and entry["message"]["role"] == "assistant"
            ]
        )
        self.kinds: list[str] = []
        self.cached: list[bool] = []  # per summary request: cache-friendly (else pi's)

    def summarize(self, request: dict[str, Any]) -> dict[str, Any]:
        self.kinds.append("summary")
        self.cached.append(is_cached_summary_request(request))
        return {"text": summary_text(request)}

    def turn(self, request: dict[str, Any]) -> dict[str, Any]:
        self.kinds.append("turn")
        message = self.turns.pop(0)
        reply = {"content": message["content"], "stopReason": message["stopReason"]}
        if message.get("errorMessage"):
            reply["errorMessage"] = message["errorMessage"]
        return reply


def recreate_files(entries: list[dict[str, Any]], cwd: Path) -> None:
    """Write every file the scenario read successfully, with the content its ``read`` returned."""
    calls = {}
    for entry in entries:
        message = entry.get("message") or {}
        for block in message.get("content") or [] if message.get("role") == "assistant" else []:
            if block.get("type") == "toolCall" and block["name"] == "read":
                calls[block["id"]] = block["arguments"]["path"]
        if message.get("role") == "toolResult" and message["toolCallId"] in calls and not message["isError"]:
            path = cwd / calls[message["toolCallId"]]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(message["content"][0]["text"])


class Replay:
    """A persisted AgentSession in ``cwd`` answering with the golden's replies."""

    def __init__(
        self,
        fixtures: Path,
        name: str,
        cwd: Path,
        *,
        settings: dict[str, Any] | None = None,
        context_window: int | None = None,
        hooks: Any = None,
        files: dict[str, str] | None = None,
    ) -> None:
        self.entries = golden_entries(fixtures, name)
        self.model = GoldenModel(self.entries)
        overrides = {"context_window": context_window} if context_window is not None else None
        scripted = FauxModel([{"factory": self.model}], record=None, model_overrides=overrides)
        recreate_files(self.entries, cwd)
        for relative, text in (files or {}).items():
            (cwd / relative).write_text(text)
        values = {"compaction": {"enabled": False}, "retry": {"enabled": False}}
        values.update(settings or {})
        self.manager = SessionManager.create(cwd, cwd / ".sessions")
        self.session = AgentSession(
            self.manager, Settings.in_memory(values), scripted.registry, scripted.model, cwd=cwd, hooks=hooks
        )
        self.events: list[dict[str, Any]] = []
        self.session.subscribe(self.events.append)

    def user_texts(self) -> list[str]:
        return [
            _text(entry["message"]["content"])
            for entry in self.entries
            if entry["type"] == "message" and entry["message"]["role"] == "user"
        ]

    def entry_id(self, role: str, text: str) -> str:
        """The id of tau's message entry with this role and text."""
        for entry in self.manager.get_entries():
            message = entry.get("message") or {}
            if (
                entry["type"] == "message"
                and message.get("role") == role
                and _text(message["content"]) == text
            ):
                return entry["id"]
        raise KeyError((role, text))

    def projected(self) -> list[dict[str, Any]]:
        """What tau's written file projects to, through convert_to_llm (as the golden was made)."""
        self.manager.close()
        reopened = SessionManager.open(self.manager.get_session_file(), read_only=True)
        return convert_to_llm(reopened.build_session_context()["messages"])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


_VOLATILE = {"timestamp", "usage", "durationMs", "tokensBefore"}


def comparable(messages: list[dict[str, Any]]) -> list[Any]:
    """Messages modulo what decisions.md lets differ (system section texts compared by name)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key in _VOLATILE:
                    continue
                out[key] = sorted(item) if key == "sections" and isinstance(item, dict) else clean(item)
            return out
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    return [clean(message) for message in messages]
