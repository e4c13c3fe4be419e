"""The ``todo`` tool's declaration: name, description, parameters, prompt lines."""

from __future__ import annotations

from typing import Any

__all__ = ["DESCRIPTION", "GUIDELINES", "NAME", "NAMESPACE", "PARAMETERS", "SNIPPET"]

NAME = "todo"
NAMESPACE = "tasks"

# Lean on purpose (issue 25): the declaration is sent with every request, so it says what a model
# needs to call the tool right and nothing the tool's errors would tell it anyway.
DESCRIPTION = (
    "Revisioned checklist. list shows it; add, update, remove and clear take the current baseRevision "
    "(on a conflict, list and retry). add: title, or tasks [{title, description?, dependencies?}] for "
    'a whole plan ("#N" depends on its N-th item). update: updates [{id, status?, ...}], applied together. '
    "Status pending, in_progress or completed; a task starts or completes after its dependencies. "
    "Ids may be shortened to 8 characters."
)

SNIPPET = "Checklist for multi-step work"

GUIDELINES = [
    "Plan multi-step work with todo: add the whole plan in one call, then mark each task in_progress "
    "and completed as you go.",
]

_STATUS = {"type": "string", "enum": ["pending", "in_progress", "completed"]}
_IDS = {"type": "array", "items": {"type": "string"}}
_BATCH_TASK = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "description": {"type": "string"},
        "dependencies": _IDS,
    },
    "required": ["title"],
    "additionalProperties": False,
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "add", "update", "remove", "clear"]},
        "baseRevision": {"type": "integer", "minimum": 0},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "status": _STATUS,
        "dependencies": _IDS,
        "tasks": {"type": "array", "minItems": 1, "maxItems": 40, "items": _BATCH_TASK},
        "updates": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "status": _STATUS,
                    "dependencies": _IDS,
                },
                "required": ["id"],
                "additionalProperties": False,
            },
        },
        "id": {"type": "string"},
    },
    "required": ["action"],
    "additionalProperties": False,
}
