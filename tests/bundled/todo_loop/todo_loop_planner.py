"""A faux model that plans three tasks with tau's ``todo`` tool and stops after each one.

Used as a faux ``factory`` step (``todo_loop_planner.py:respond``). Every answer is derived from the
request alone: the last message says what happened, the ``todo`` results carry revisions and ids
(the ``todo`` extension's snapshot blocks are skipped).

- the human's prompt → ``add`` "part 1"; after each ``add`` → the next one, three in all;
- after the third ``add``, and whenever todo-loop's hidden marker arrives → ``list``;
- after a ``list`` → ``update`` the first open task to ``completed``;
- after an ``update`` → a final answer (``Finished part N.``): the run would end here, and only
  todo-loop's marker can bring the model back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SPEC = f"{Path(__file__).resolve()}:respond"
PARTS = ("part 1", "part 2", "part 3")
NUDGE_PREFIX = "Continue working: your todo list still has unfinished tasks."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


def _todo_calls(messages: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    return [
        block["arguments"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "toolCall"
        and block["name"] == "todo"
        and block["arguments"]["action"] == action
    ]


def _todo(args: dict[str, Any]) -> dict[str, Any]:
    return {"tool": "todo", "args": args}


def _answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1]
    if last["role"] == "user":
        if _text(last).startswith(NUDGE_PREFIX) or _todo_calls(messages, "add"):
            return _todo({"action": "list"})
        return _todo({"action": "add", "baseRevision": 0, "title": PARTS[0]})
    if last["role"] != "toolResult" or last.get("toolName") != "todo":
        return {"text": f"unexpected request ending in {last['role']}"}
    text = _text(last)
    if last.get("isError"):
        return {"text": f"todo failed: {text}"}
    previous = next(b for b in messages[-2]["content"] if b.get("type") == "toolCall")["arguments"]
    if previous["action"] == "add":
        revision = int(re.match(r"todo revision (\d+)", text).group(1))
        added = len(_todo_calls(messages, "add"))
        if added < len(PARTS):
            return _todo({"action": "add", "baseRevision": revision, "title": PARTS[added]})
        return _todo({"action": "list"})
    if previous["action"] == "list":
        snapshot = json.loads(text.split("\n", 1)[0])
        open_tasks = [task for task in snapshot["tasks"] if task["status"] != "completed"]
        if not open_tasks:
            return {"text": "Nothing left to do."}
        patch = {"id": open_tasks[0]["id"], "status": "completed"}
        return _todo({"action": "update", "baseRevision": snapshot["revision"], "updates": [patch]})
    done = len(_todo_calls(messages, "update"))
    return {"text": f"Finished part {done}."}


def _is_snapshot(message: dict[str, Any]) -> bool:
    """The ``todo`` extension's hidden ``[todo snapshot, revision N]`` block (a user message here)."""
    return message["role"] == "user" and _text(message).startswith("[todo snapshot")


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    messages = [message for message in request["messages"] if not _is_snapshot(message)]
    return [_answer(messages), {"factory": SPEC}]
