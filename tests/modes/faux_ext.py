"""The faux replies pi's golden CLI runs used (``faux-ext.ts``), as a faux ``factory`` step.

``bash: <cmd>`` → a bash call; after a tool result → ``tool <name> returned: <output>``; otherwise
``echo: <text>``. Returning ``[reply, {"factory": ...}]`` keeps the factory answering every call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPEC = f"{Path(__file__).resolve()}:respond"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    if last["role"] == "toolResult":
        output = _text(last["content"]).strip()
        reply: dict[str, Any] = {"text": f"tool {last['toolName']} returned: {output}"}
    else:
        text = _text(last["content"])
        reply = {"bash": text[len("bash: ") :]} if text.startswith("bash: ") else {"text": f"echo: {text}"}
    return [reply, {"factory": SPEC}]


def script() -> list[dict[str, Any]]:
    """The whole script: one factory step that answers every call."""
    return [{"factory": SPEC}]
