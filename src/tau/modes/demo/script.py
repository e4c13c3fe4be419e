"""The demo's scripted model: a faux ``factory`` that plays one small, complete coding session.

Every answer is derived from the request alone (faux calls ``respond`` with the request's model
messages): the step is the number of assistant messages so far, and ids, revisions and the
observation id are read back from the tool results the session produced. The session it plays:

1. plans three tasks with ``todo``;
2. fixes the bug in ``calc.py`` with one ``edit`` whose ``then_run`` runs the test (Action Fusion:
   the edit and the test run in one request), closes the task and stops: todo-loop carries on;
3. reads ``build.log`` (about 40 KB), counts its warnings, closes the task and stops again: by then
   ObservationPack has replaced the log by a placeholder in the requests;
4. searches the packed log with ``obs_recall`` and finishes the last task.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

from tau.bundled.obspack.wire import RECALL_TOOL
from tau.llm.messages import message_text

__all__ = ["FACTORY", "TASKS", "respond"]

FACTORY = f"{Path(__file__).resolve()}:respond"
TASKS = ("Fix add() in calc.py", "Check build.log for warnings", "Report the first error in the log")
_REVISION = re.compile(r"todo revision (\d+)(?: \(1 change: ([^)]+)\))?")
_OBS_ID = re.compile(r"^id: (obs_[a-f0-9]{24})$", re.MULTILINE)


def _todo_results(messages: list[dict[str, Any]]) -> list[str]:
    return [
        message_text(m)
        for m in messages
        if m.get("role") == "toolResult" and m.get("toolName") == "todo" and not m.get("isError")
    ]


def _revision(messages: list[dict[str, Any]]) -> int:
    found = [int(match.group(1)) for text in _todo_results(messages) if (match := _REVISION.match(text))]
    return found[-1] if found else 0


def _task_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [
        match.group(2)
        for text in _todo_results(messages)
        if (match := _REVISION.match(text)) and match.group(2)
    ][: len(TASKS)]


def _complete(messages: list[dict[str, Any]], task: int) -> dict[str, Any]:
    update = {"id": _task_ids(messages)[task], "status": "completed"}
    return {
        "tool": "todo",
        "args": {"action": "update", "baseRevision": _revision(messages), "updates": [update]},
    }


def _add(messages: list[dict[str, Any]], task: int) -> dict[str, Any]:
    args = {"action": "add", "baseRevision": _revision(messages), "title": TASKS[task]}
    return {"tool": "todo", "args": args}


def _fused_fix(messages: list[dict[str, Any]]) -> dict[str, Any]:
    command = f"{shlex.quote(sys.executable)} test_calc.py"
    edit = {
        "path": "calc.py",
        "edits": [{"oldText": "return a - b", "newText": "return a + b"}],
        "then_run": {"command": command, "timeout": 60},
    }
    return {
        "text": "The test expects add(2, 3) == 5; fixing the operator and running the test.",
        "tool": "edit",
        "args": edit,
    }


def _recall(messages: list[dict[str, Any]]) -> dict[str, Any]:
    found = [
        match.group(1)
        for m in messages
        if m.get("role") == "toolResult" and (match := _OBS_ID.search(message_text(m)))
    ]
    if not found:
        return {"text": "The log was never packed; nothing to recall."}
    return {"tool": RECALL_TOOL, "args": {"id": found[-1], "query": "ERROR"}}


def _report(messages: list[dict[str, Any]]) -> dict[str, Any]:
    recalls = [
        message_text(m)
        for m in messages
        if m.get("role") == "toolResult" and m.get("toolName") == RECALL_TOOL
    ]
    line = re.search(r'"line":(\d+)', recalls[-1]) if recalls else None
    where = f" (line {line.group(1)} of build.log)" if line else ""
    return {"text": f"Done: add() is fixed, build.log has warnings, and its first error is recalled{where}."}


# One answer per request, in order; the index is the number of assistant messages already sent.
_STEPS = (
    lambda m: _add(m, 0),
    lambda m: _add(m, 1),
    lambda m: _add(m, 2),
    _fused_fix,
    lambda m: _complete(m, 0),
    lambda m: {"text": "Fixed add(); test_calc.py passes."},
    lambda m: {"tool": "read", "args": {"path": "build.log"}},
    lambda m: {"bash": "grep -c WARNING build.log"},
    lambda m: _complete(m, 1),
    lambda m: {"text": "build.log checked: warnings counted."},
    _recall,
    lambda m: _complete(m, 2),
    _report,
)


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The faux answer to ``request``, and the factory again for the next call."""
    messages = request.get("messages") or []
    step = sum(1 for message in messages if message.get("role") == "assistant")
    answer = _STEPS[step](messages) if step < len(_STEPS) else {"text": "Nothing left to do."}
    return [answer, {"factory": FACTORY}]
