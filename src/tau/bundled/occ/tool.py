"""The ``update_plan`` tool (extensions.md §5.6.1), registered only when ``todo`` is not active.

String limits count grapheme clusters (TypeBox's rule). tau's argument validation counts code
points, which is stricter for combining marks, so the declared schema leaves ``maxLength`` out and
:func:`~tau.bundled.occ.plan.parse_plan_steps` checks the grapheme limits itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.bundled.occ.wire import PLAN_TOOL
from tau.bundled.sol_common import banner_lines
from tau.extension import ToolDefinition

__all__ = ["PLAN_PARAMETERS", "plan_tool"]

DESCRIPTION = (
    "Replace the complete working plan. Completing a previously registered unfinished step becomes a safe "
    "point where SoL-Pi may compact context if doing so is economical. Newly introduced completed steps are "
    "recorded as history."
)
GUIDELINES = [
    "Send the complete plan on every update_plan call.",
    "Preserve step IDs, and register an unfinished step before reporting it completed.",
    "Keep at most one step in_progress, and mark finished steps completed.",
    "Include concise progress evidence (files changed, verification, decisions) when completing a step.",
]
_STRING = {"type": "string", "minLength": 1}
_LIST = {"type": "array", "items": {"type": "string"}}
PLAN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["steps"],
    "properties": {
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": 128,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "goal", "status"],
                "properties": {
                    "id": _STRING,
                    "goal": _STRING,
                    "status": {"enum": ["pending", "in_progress", "completed"]},
                },
            },
        },
        "progress": {
            "type": "object",
            "additionalProperties": False,
            "required": ["files_changed", "verification", "decisions"],
            "properties": {
                "files_changed": {**_LIST, "maxItems": 128},
                "verification": {**_LIST, "maxItems": 64},
                "decisions": {**_LIST, "maxItems": 64},
            },
        },
    },
}
MECHANISM = "Online Context Compact"
SAVING = "compacts only when projected savings are positive"


def render_plan_call(args: Any, *_: Any) -> list[str]:
    steps = args.get("steps") if isinstance(args, dict) else None
    steps = steps if isinstance(steps, list) else []
    done = sum(1 for step in steps if isinstance(step, dict) and step.get("status") == "completed")
    return [*banner_lines(MECHANISM, SAVING), f"Plan: {len(steps)} steps, {done} completed"]


def render_plan_result(result: Any, *_: Any, **__: Any) -> list[str]:
    details = getattr(result, "details", None)
    if details is None and isinstance(result, dict):
        details = result.get("details")
    if not isinstance(details, dict):
        return ["Updating plan..."]
    return ["Progress boundary recorded" if details.get("boundary") else "Plan recorded"]


def plan_tool(execute: Callable[..., Any]) -> ToolDefinition:
    """The tool definition around OCC's ``execute``."""
    return ToolDefinition(
        name=PLAN_TOOL,
        label="Update Plan",
        description=DESCRIPTION,
        parameters=PLAN_PARAMETERS,
        execute=execute,
        prompt_snippet="Keep the working plan current",
        prompt_guidelines=list(GUIDELINES),
        execution_mode="sequential",
        # A script's call would get a nested id no turn reports as a tool result, so its plan boundary
        # could never compact: the model calls update_plan itself, in both codemode modes (seed 003).
        exposure="model-only",
        render_call=render_plan_call,
        render_result=render_plan_result,
    )
