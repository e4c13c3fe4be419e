"""tau's side of ``data/pi22/faux-ext.ts``: the same replies, as a faux ``factory`` step.

``bash: <cmd>`` → a bash call; ``call: <name> <json>`` → a call with those arguments; ``fail: <text>``
→ an error reply; a tool result → ``tool <name> returned: <output> | args <arguments as JSON>``; a
summary request → an error reply; otherwise ``echo: <text>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau.common import jsjson

SPEC = f"{Path(__file__).resolve()}:respond"
_calls = 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def _call_arguments(messages: list[dict[str, Any]], call_id: str) -> Any:
    for message in messages:
        if message["role"] != "assistant":
            continue
        for block in message["content"]:
            if block.get("type") == "toolCall" and block.get("id") == call_id:
                return block.get("arguments")
    return None


def _next_id() -> str:
    global _calls
    _calls += 1
    return f"call_{_calls}"


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    first_user = next((m for m in messages if m["role"] == "user"), None)
    if "context summarization assistant" in (request["systemPrompt"] or "") or (
        first_user is not None and _text(first_user["content"]).startswith("<conversation>")
    ):
        return {"content": [], "stopReason": "error", "errorMessage": "summary service unavailable"}
    last = messages[-1]
    if last["role"] == "toolResult":
        arguments = jsjson.dumps_str(_call_arguments(messages, last["toolCallId"]))
        output = _text(last["content"]).strip()
        return {"text": f"tool {last['toolName']} returned: {output} | args {arguments}"}
    prompt = _text(last["content"])
    if prompt.startswith("bash: "):
        return {"bash": prompt[len("bash: ") :], "id": _next_id()}
    if prompt.startswith("call: "):
        name, _, arguments = prompt[len("call: ") :].partition(" ")
        return {"tool": name, "args": jsjson.loads(arguments), "id": _next_id()}
    if prompt.startswith("fail: "):
        return {"content": [], "stopReason": "error", "errorMessage": prompt[len("fail: ") :]}
    return {"text": f"echo: {prompt}"}


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply to this call, then this factory again for the next one."""
    return [_reply(request), {"factory": SPEC}]
