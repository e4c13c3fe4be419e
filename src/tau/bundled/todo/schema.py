"""The ``todo`` tool's declaration: name, description, parameters, prompt lines."""

from __future__ import annotations

from typing import Any

__all__ = ["DESCRIPTION", "GUIDELINES", "NAME", "NAMESPACE", "PARAMETERS", "SNIPPET"]

NAME = "todo"
NAMESPACE = "tasks"

DESCRIPTION = (
    "Revisioned checklist for the current session branch. "
    'Call {"action":"list"} before editing: it returns the full snapshot with its revision. '
    'Mutations ("add", "update", "remove", "clear") require the current baseRevision; on a revision '
    "conflict, list again and retry, never replay blindly. A successful mutation returns the new list: "
    "no need to list again. "
    '"add" takes one task or a whole plan: tasks: [{title, description?, dependencies?}] (dependency '
    '"#N": the N-th task of that array). '
    '"update" takes an atomic array of patches {id, title?, description?, status?, dependencies?}. '
    "Ids may be shortened to their first 8 characters. "
    "Status is pending, in_progress or completed; starting or completing a task requires its "
    "dependencies to be completed. An empty description clears it; an empty dependencies array "
    "removes prerequisites. Limits: 40 tasks, titles 160 characters, descriptions 512, 16 dependencies."
)

SNIPPET = "Revisioned checklist of the current branch: list, add, update, remove, clear"

GUIDELINES = [
    "Use todo to plan multi-step work: list first, then add the whole plan in one call (tasks: [...]) "
    "with its dependencies, and mark each task in_progress and completed as you go, passing the current "
    "baseRevision.",
]

_STATUS = {"type": "string", "enum": ["pending", "in_progress", "completed"]}
_IDS = {"type": "array", "items": {"type": "string"}, "description": "ids of prerequisite tasks"}
_BATCH_TASK = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "description": {"type": "string"},
        "dependencies": {
            "type": "array",
            "items": {"type": "string"},
            "description": 'task ids, or "#N" for the N-th task of this array',
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "add", "update", "remove", "clear"]},
        "baseRevision": {
            "type": "integer",
            "minimum": 0,
            "description": "the current revision (from list); required by add, update, remove, clear",
        },
        "title": {"type": "string", "description": "add: the task title (non-blank, at most 160 characters)"},
        "description": {"type": "string", "description": "add: optional details (at most 512 characters)"},
        "status": {**_STATUS, "description": "add: initial status (default pending)"},
        "dependencies": {**_IDS, "description": "add: ids of prerequisite tasks"},
        "tasks": {
            "type": "array",
            "minItems": 1,
            "maxItems": 40,
            "description": "add: a whole plan in one revision, instead of title",
            "items": _BATCH_TASK,
        },
        "updates": {
            "type": "array",
            "minItems": 1,
            "description": "update: patches applied together, atomically",
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
        "id": {"type": "string", "description": "remove: the task id (or its first 8 characters)"},
    },
    "required": ["action"],
    "additionalProperties": False,
}
