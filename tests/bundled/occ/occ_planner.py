"""A faux model that works through three ``todo`` tasks; part 2 prints four 30 KB outputs.

Used as a faux ``factory`` step (``occ_planner.py:respond``). Every answer is derived from the request,
and the whole plan is one turn, as a real model works (no stop between a task's work and its
completion):

- the human's prompt → ``add`` "part 1", "part 2", "part 3", then ``list``;
- any other user-side message (OCC's hidden reminder, todo-loop's nudge) → ``list``;
- after a ``list`` → the first open task's commands (one ``echo``; four 30,000-character prints for
  part 2); after its last command, ``Built part N.`` with the ``update`` that completes it, then
  ``list`` again; with no open task left → the final answer;
- a summary request (pi's summarizer, or a summary asked for at the end of the conversation) → a fixed
  summary (cut at the token cap, ``stopReason: "length"``, when ``OCC_PLANNER_SUMMARY_CAPPED`` is set).

Each request is appended to the JSON-lines file named by ``OCC_PLANNER_TRACE`` when it is set.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

SPEC = f"{Path(__file__).resolve()}:respond"
PARTS = ("part 1", "part 2", "part 3")
SUMMARY = "## Goal\nBuild the three parts.\n\n## Progress\n### Done\n- [x] part 1\n- [x] part 2\n"
FINAL = "All three parts are built."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


def _calls(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [
        block["arguments"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "toolCall" and block["name"] == name
    ]


OUTPUT_CHARS = 30_000
SUMMARY_ASKS = ("Create a structured context checkpoint summary", "Create a concise checkpoint")


def _commands(part: str) -> list[str]:
    if part != "part 2":
        return [f"echo building {part}"]
    return [f"{sys.executable} -c \"print('{n}' * {OUTPUT_CHARS})\" # {part} step {n}" for n in range(1, 5)]


def _last_list(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for index in range(len(messages) - 1, 0, -1):
        message = messages[index]
        if message["role"] == "toolResult" and message.get("toolName") == "todo":
            call = next(b for b in messages[index - 1]["content"] if b.get("type") == "toolCall")
            if call["arguments"]["action"] == "list":
                return json.loads(_text(message).split("\n", 1)[0])
    raise AssertionError("no todo list in the context")


def _built(title: str) -> str:
    return f"Built {title}."


def _after_list(messages: list[dict[str, Any]], snapshot: dict[str, Any]) -> dict[str, Any]:
    open_tasks = [task for task in snapshot["tasks"] if task["status"] != "completed"]
    if not open_tasks:
        return {"text": FINAL}
    return {"bash": _commands(open_tasks[0]["title"])[0]}


def _after_bash(messages: list[dict[str, Any]]) -> dict[str, Any]:
    snapshot = _last_list(messages)
    task = next(task for task in snapshot["tasks"] if task["status"] != "completed")
    commands = _commands(task["title"])
    done = _calls(messages, "bash")[-1]["command"]
    position = commands.index(done)
    if position + 1 < len(commands):
        return {"bash": commands[position + 1]}
    patch = {"id": task["id"], "status": "completed"}
    return {
        "text": _built(task["title"]),
        "tool": "todo",
        "args": {"action": "update", "baseRevision": snapshot["revision"], "updates": [patch]},
    }


def _answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1]
    if last["role"] != "toolResult":
        if not _calls(messages, "todo") and len(messages) == 1:
            return {"tool": "todo", "args": {"action": "add", "baseRevision": 0, "title": PARTS[0]}}
        return {"tool": "todo", "args": {"action": "list"}}
    if last.get("isError"):
        return {"text": f"failed: {_text(last)}"}
    if last.get("toolName") == "bash":
        return _after_bash(messages)
    action = next(b for b in messages[-2]["content"] if b.get("type") == "toolCall")["arguments"]["action"]
    if action == "add":
        revision = int(re.match(r"todo revision (\d+)", _text(last)).group(1))
        added = len(_calls(messages, "todo"))
        if added < len(PARTS):
            return {
                "tool": "todo",
                "args": {"action": "add", "baseRevision": revision, "title": PARTS[added]},
            }
        return {"tool": "todo", "args": {"action": "list"}}
    if action == "list":
        return _after_list(messages, json.loads(_text(last).split("\n", 1)[0]))
    return {"tool": "todo", "args": {"action": "list"}}


def _is_snapshot(message: dict[str, Any]) -> bool:
    return message["role"] == "user" and _text(message).startswith("[todo snapshot")


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    trace = os.environ.get("OCC_PLANNER_TRACE")
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(request) + "\n")
    last = request["messages"][-1] if request["messages"] else {}
    asked = last.get("role") == "user" and any(ask in _text(last) for ask in SUMMARY_ASKS)
    if "summarization assistant" in request["systemPrompt"] or asked:
        if os.environ.get("OCC_PLANNER_SUMMARY_CAPPED"):  # the summary stops at its token cap
            capped = {"content": [{"type": "text", "text": SUMMARY[:20]}], "stopReason": "length"}
            return [capped, {"factory": SPEC}]
        return [{"text": SUMMARY}, {"factory": SPEC}]
    messages = [message for message in request["messages"] if not _is_snapshot(message)]
    return [_answer(messages), {"factory": SPEC}]
