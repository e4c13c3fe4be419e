"""The ``edit`` tool: exact (then fuzzy) text replacement in one file, with a diff in ``details``."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tau.common import jsjson
from tau.llm.stream import AbortSignal
from tau.tools._async import raise_if_aborted
from tau.tools.base import CONSTRAINED_SAMPLING, ToolContext, ToolDefinition, ToolResult, UpdateCallback
from tau.tools.fserrors import fs_error
from tau.tools.mutation_queue import with_file_mutation_queue
from tau.tools.paths import resolve_to_cwd
from tau.tools.write import write_file_text

__all__ = ["edit_tool", "prepare_edit_arguments"]

DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping "
    "region of the original file. If two changes affect the same block or nearby lines, merge them into one edit "
    "instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "edits"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["oldText", "newText"],
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": (
                            "Exact text for one targeted replacement. It must be unique in the original file and "
                            "must not overlap with any other edits[].oldText in the same call."
                        ),
                    },
                    "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
                },
            },
            "description": (
                "One or more targeted replacements. Each edit is matched against the original file, not "
                "incrementally. Do not include overlapping or nested edits. If two changes touch the same block or "
                "nearby lines, merge them into one edit instead."
            ),
        },
    },
}


def edit_tool() -> ToolDefinition:
    """The ``edit`` tool definition."""
    return ToolDefinition(
        name="edit",
        label="edit",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute_edit,
        prompt_snippet=(
            "Make precise file edits with exact text replacement, including multiple disjoint edits in one call"
        ),
        prompt_guidelines=[
            "Use edit for targeted changes. Batch changes to one file in a single call.",
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and "
            "non-overlapping; merge nearby changes without including large unchanged regions.",
        ],
        constrained_sampling=dict(CONSTRAINED_SAMPLING),
        prepare_arguments=prepare_edit_arguments,
    )


def _is_single_edit(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )


def prepare_edit_arguments(arguments: Any) -> Any:
    """Fold shapes models send into ``{path, edits: [...]}``: ``edits`` as a JSON string or a single
    object, and the legacy top-level ``oldText``/``newText`` (pi 0.58's schema).

    As in pi 1.6, ``edits`` is replaced in the given arguments (the live tool call: later events and
    the next request carry the array, while the stored entry keeps what the model sent); the legacy
    fold returns a new object.
    """
    if not isinstance(arguments, dict):
        return arguments
    args = arguments
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = jsjson.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
        elif _is_single_edit(parsed):
            args["edits"] = [parsed]
    elif _is_single_edit(edits):
        args["edits"] = [edits]
    if not (isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str)):
        return args
    folded = list(args["edits"]) if isinstance(args.get("edits"), list) else []
    folded.append({"oldText": args["oldText"], "newText": args["newText"]})
    rest = {key: value for key, value in args.items() if key not in ("oldText", "newText")}
    return {**rest, "edits": folded}


async def execute_edit(
    tool_call_id: str,
    params: dict[str, Any],
    signal: AbortSignal | None,
    on_update: UpdateCallback | None,
    ctx: ToolContext,
) -> ToolResult:
    """Apply ``params["edits"]`` to ``params["path"]`` (pi 1.6 ``edit``)."""
    edits = params.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ValueError("Edit tool input is invalid. edits must contain at least one replacement.")
    path: str = params["path"]
    absolute = resolve_to_cwd(path, ctx.cwd)

    async def mutate() -> ToolResult:
        # Blocking file work runs in a thread; aborts are checked between steps, never mid-write, so
        # the queue stays held until the file system call has settled.
        raise_if_aborted(signal)
        return await asyncio.to_thread(_edit_file, absolute, path, edits, signal)

    return await with_file_mutation_queue(absolute, mutate)


def _edit_file(
    absolute: str, path: str, edits: list[dict[str, str]], signal: AbortSignal | None
) -> ToolResult:
    from tau.tools.edit_apply import apply_edits, apply_replacements_to_original, normalize_to_lf, split_bom
    from tau.tools.edit_diff import generate_edit_diff

    _check_editable(absolute, path, signal)
    try:
        with open(absolute, "rb") as handle:
            raw = handle.read().decode("utf-8", "replace")
    except IsADirectoryError as exc:
        raise fs_error(exc, "read") from exc
    raise_if_aborted(signal)
    bom, content = split_bom(raw)
    normalized = normalize_to_lf(content)
    applied = apply_edits(normalized, edits, path)
    details = generate_edit_diff(path, applied.base_content, applied.new_content, applied.replacements)
    raise_if_aborted(signal)
    # Splice into the original so untouched lines keep their line endings.
    if content == normalized:
        final = applied.new_content
    else:
        final = apply_replacements_to_original(content, applied.replacements)
    write_file_text(absolute, bom + final)
    raise_if_aborted(signal)
    return ToolResult.text(f"Successfully replaced {len(edits)} block(s) in {path}.", details=details)


def _check_editable(absolute: str, path: str, signal: AbortSignal | None) -> None:
    if os.access(absolute, os.R_OK | os.W_OK):
        return
    raise_if_aborted(signal)
    try:
        os.stat(absolute)
        code = "EACCES"
    except OSError as exc:
        code = fs_error(exc, "access", absolute).code
    raise ValueError(f"Could not edit file: {path}. Error code: {code}.")
