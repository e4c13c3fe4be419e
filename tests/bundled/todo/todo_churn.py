"""A faux "model" that makes twenty todo revisions in one run, with tool work between them.

Used as a faux factory (``{"factory": "todo_churn.py:respond"}``). It reads the newest successful
``todo`` result the way a model would: the revision from its first line and the tasks from the list
JSON on the line after it (``list`` results: the first line). Its plan: one ``add`` of five tasks,
then each task ``in_progress`` and ``completed`` with a ``bash`` call between, then eight one-task
adds and removes, then a final answer: revisions 1 to 20.
"""

from __future__ import annotations

import json
from typing import Any

REVISIONS = 20


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")


def _current(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for message in reversed(messages):
        if (
            message.get("role") == "toolResult"
            and message.get("toolName") == "todo"
            and not message["isError"]
        ):
            lines = _text(message).split("\n")
            return json.loads(lines[1] if lines[0].startswith("todo revision ") else lines[0])
    return {"revision": 0, "tasks": []}


def _next(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1]
    if last.get("isError"):
        return {"text": f"failed: {_text(last)}"}
    listed = _current(messages)
    revision, tasks = listed["revision"], listed["tasks"]
    if last.get("role") == "toolResult" and last.get("toolName") == "todo" and revision in range(2, 11):
        return {"bash": f"echo work for revision {revision}"}
    base = {"baseRevision": revision}
    if revision == 0:
        batch = [{"title": f"step {n}", "description": f"do step {n}"} for n in range(1, 6)]
        return {"tool": "todo", "args": {"action": "add", **base, "tasks": batch}}
    if revision < 11:
        task = tasks[(revision - 1) // 2]
        status = "in_progress" if task["status"] == "pending" else "completed"
        update = {"id": task["id"][:8], "status": status}
        return {"tool": "todo", "args": {"action": "update", **base, "updates": [update]}}
    if revision < REVISIONS:
        extra = [task for task in tasks if task["title"].startswith("extra")]
        if extra:
            return {"tool": "todo", "args": {"action": "remove", **base, "id": extra[0]["id"][:8]}}
        return {"tool": "todo", "args": {"action": "add", **base, "title": f"extra {revision}"}}
    return {"text": f"done at revision {revision}"}


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Answer this call and stay in the queue for the next one."""
    return [_next(request["messages"]), {"factory": respond}]
