"""A faux "model" that plans three dependent tasks with the todo tool and completes them in order.

Used as a faux factory (``{"factory": "todo_planner.py:plan"}``): it reads the todo results in the
request, the way a model would, and answers with the next tool call.
"""

from __future__ import annotations

import json
import re

MUTATION = re.compile(r"^todo revision (\d+) \(1 change: ([0-9a-f-]+)\)")


def _todo_results(request: dict) -> list[str]:
    texts = []
    for message in request["messages"]:
        if message.get("role") == "toolResult" and message.get("toolName") == "todo":
            texts.append(
                "".join(block.get("text", "") for block in message["content"] if block.get("type") == "text")
            )
    return texts


def next_step(request: dict) -> dict:
    results = _todo_results(request)
    ids = [found.group(2) for text in results if (found := MUTATION.match(text))]
    revision = 0
    for text in results:
        if (found := MUTATION.match(text)) is not None:
            revision = int(found.group(1))
        elif text.startswith("{"):
            revision = json.loads(text.split("\n", 1)[0])["revision"]
    titles = ["Write the parser", "Test the parser", "Document the parser"]
    done = len(results)
    if done == 0:
        args: dict = {"action": "list"}
    elif done <= 3:
        args = {"action": "add", "baseRevision": revision, "title": titles[done - 1]}
        if done > 1:
            args["dependencies"] = [ids[done - 2]]
    elif done <= 6:
        args = {
            "action": "update",
            "baseRevision": revision,
            "updates": [{"id": ids[done - 4], "status": "completed"}],
        }
    else:
        return {"text": "All three tasks are done."}
    return {"text": f"step {done + 1}", "tool": "todo", "args": args}


def plan(request: dict) -> list:
    """Answer this call and stay in the queue for the next one."""
    return [next_step(request), {"factory": plan}]


def plan_from_file(request: dict) -> list:
    return [next_step(request), {"factory": f"{__file__}:plan_from_file"}]
