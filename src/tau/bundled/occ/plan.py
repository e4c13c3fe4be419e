"""Plans and plan boundaries (extensions.md §5.6.1, §5.6.6).

A plan is a list of steps ``{"id", "goal", "status"}``. A boundary is a step that was registered
unfinished and is now completed; a step that first appears completed is history, never a boundary.
The ``update_plan`` tool's strings are measured in grapheme clusters (TypeBox's rule; the ``regex``
package's ``\\X``); with ``todo`` as the plan source the steps are the todo tasks.
"""

from __future__ import annotations

from typing import Any

from tau.common import jsjson
from tau.common.dataclass import dataclass

__all__ = [
    "MAX_PLAN_STEPS",
    "MAX_PLAN_STRING_LENGTH",
    "PlanTransition",
    "analyze_transition",
    "format_plan_snapshot",
    "grapheme_length",
    "parse_plan_steps",
    "parse_progress",
    "plan_from_todo",
]

MAX_PLAN_STEPS = 128
MAX_PLAN_STRING_LENGTH = 16_384
_PROGRESS_LIMITS = {"files_changed": 128, "verification": 64, "decisions": 64}
_PROGRESS_STRING_LENGTH = 1000
_STATUSES = ("pending", "in_progress", "completed")
_GRAPHEME: Any = None  # regex.compile(r"\X"), compiled when first needed (the module costs ~10 ms)


def grapheme_length(text: str) -> int:
    """User-perceived characters: ``"a\\u0301"`` and ``"😀"`` are one each."""
    global _GRAPHEME
    if _GRAPHEME is None:
        import regex

        _GRAPHEME = regex.compile(r"\X")
    return sum(1 for _ in _GRAPHEME.finditer(text))


def _bounded(value: Any, limit: int, minimum: int = 1) -> bool:
    # Cheap bounds first: graphemes are at most code points, and a code point is at most one.
    if not isinstance(value, str) or len(value) < minimum:
        return False
    return len(value) <= limit or grapheme_length(value) <= limit


def parse_plan_steps(value: Any) -> list[dict[str, Any]] | None:
    """Valid steps (exactly ``id``, ``goal``, ``status``; unique ids; 1–128 of them), else ``None``."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PLAN_STEPS:
        return None
    steps = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"id", "goal", "status"}
            or not _bounded(item["id"], MAX_PLAN_STRING_LENGTH)
            or not _bounded(item["goal"], MAX_PLAN_STRING_LENGTH)
            or item["status"] not in _STATUSES
        ):
            return None
        steps.append({"id": item["id"], "goal": item["goal"], "status": item["status"]})
    if len({step["id"] for step in steps}) != len(steps):
        return None
    return steps


def parse_progress(value: Any) -> dict[str, list[str]] | None:
    """The ``progress`` argument of ``update_plan``, else ``None`` (absent or invalid)."""
    if not isinstance(value, dict) or set(value) != set(_PROGRESS_LIMITS):
        return None
    for key, limit in _PROGRESS_LIMITS.items():
        items = value[key]
        if not isinstance(items, list) or len(items) > limit:
            return None
        if not all(_bounded(item, _PROGRESS_STRING_LENGTH, minimum=0) for item in items):
            return None
    return {key: list(value[key]) for key in _PROGRESS_LIMITS}


@dataclass(frozen=True)
class PlanTransition:
    """What an update changed: the steps that became completed (boundaries) and advice lines."""

    completed: list[dict[str, Any]]
    advice: list[str]


def analyze_transition(previous: list[dict[str, Any]], steps: list[dict[str, Any]]) -> PlanTransition:
    """Compare by step id; only a registered unfinished step that is now completed counts."""
    before = {step["id"]: step for step in previous}
    completed, advice = [], []
    for step in steps:
        prior = before.get(step["id"])
        if prior is None:
            continue
        if prior["status"] != "completed" and step["status"] == "completed":
            completed.append(step)
        if prior["goal"] != step["goal"]:
            advice.append(
                f"Plan step {jsjson.dumps_str(step['id'])} changed goal; reuse an id only for the same goal."
            )
    in_progress = sum(1 for step in steps if step["status"] == "in_progress")
    if in_progress > 1:
        advice.append("Keep at most one plan step in_progress.")
    if in_progress == 0 and any(step["status"] == "pending" for step in steps):
        advice.append("Mark one pending plan step in_progress before starting it.")
    return PlanTransition(completed, advice)


def format_plan_snapshot(steps: list[dict[str, Any]]) -> str:
    """``<sol-pi-plan task_status="active">{"steps":[...]}</sol-pi-plan>``."""
    return f'<sol-pi-plan task_status="active">{jsjson.dumps_str({"steps": steps})}</sol-pi-plan>'


def plan_from_todo(tasks: Any) -> list[dict[str, Any]] | None:
    """The plan of a ``todo`` snapshot's ``tasks`` (id, title, status), else ``None``."""
    if not isinstance(tasks, list):
        return None
    plan = []
    for task in tasks:
        if not isinstance(task, dict) or task.get("status") not in _STATUSES:
            return None
        if not isinstance(task.get("id"), str) or not isinstance(task.get("title"), str):
            return None
        plan.append({"id": task["id"], "goal": task["title"], "status": task["status"]})
    return plan
