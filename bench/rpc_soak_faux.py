"""The scripted model of ``bench/rpc_soak.py`` for tau (a faux ``factory``); ``_PI_FAUX`` in
``rpc_soak.py`` gives real pi the same replies.

A prompt ``<n>`` → a ``bash`` call ``echo <n>; seq 1 150`` (about 700 bytes of output); its result →
a second call ``echo second; seq 151 300``; that result → the answer ``done``. A summary request
(pi's summarizer, or tau's cache-friendly one) → a short summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPEC = f"{Path(__file__).resolve()}:respond"
SUMMARY = "## Goal\nAnswer the soak's prompts.\n\n## Progress\n- every prompt answered so far\n"
_calls = 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or () if block.get("type") == "text")


def _is_summary(request: dict[str, Any]) -> bool:
    from tau.agent.compaction.prompts import CACHED_REQUEST_PREAMBLE

    if "summarization assistant" in (request.get("systemPrompt") or ""):
        return True
    last = request["messages"][-1] if request["messages"] else {}
    return last.get("role") == "user" and CACHED_REQUEST_PREAMBLE in _text(last.get("content"))


def _call(command: str) -> dict[str, Any]:
    global _calls
    _calls += 1
    return {"bash": command, "id": f"call_{_calls}"}


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    if _is_summary(request):
        return {"text": SUMMARY}
    messages = request["messages"]
    last = messages[-1]
    if last["role"] != "toolResult":
        return _call(f"echo {_text(last['content']).strip()}; seq 1 150")
    results = 0
    for message in reversed(messages):
        if message["role"] == "user":
            break
        results += message["role"] == "toolResult"
    if results < 2:
        return _call("echo second; seq 151 300")
    return {"text": "done"}


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [_reply(request), {"factory": SPEC}]
