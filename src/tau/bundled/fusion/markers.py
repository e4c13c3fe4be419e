"""The ``then_run`` parameter and the texts of a fused result (extensions.md §5.3).

A fused call's text ends with one marker block: ``[then_run:succeeded]`` (the command's output
follows on the next lines), ``[then_run:failed]`` (an error result that keeps the mutation's text
and details), or ``[then_run:skipped]`` (the command never ran).
"""

from __future__ import annotations

from typing import Any

from tau.bundled.fusion.wire import FAILED, SKIPPED, SUCCEEDED
from tau.extension import TextContent, text_block

__all__ = [
    "FAILED",
    "SKIPPED",
    "SUCCEEDED",
    "failed_block",
    "mutation_failed_text",
    "run_error_text",
    "skipped_text",
    "succeeded_block",
    "then_run_schema",
]

EMPTY_FAILURE_OUTPUT = "Command failed."


def then_run_schema(verb: str) -> dict[str, Any]:
    """The optional ``then_run`` property of the fused ``edit`` (``verb="edit"``) or ``write``.

    SoL-Pi's shape (``command``, optional ``timeout``); its descriptions are cut to what a model needs
    (issue 25: the declaration is sent with every request).
    """
    return {
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number", "description": "seconds"},
        },
        "description": f"Command to run right after the {verb} succeeds (e.g. its tests); a failure keeps the {verb}",
    }


def succeeded_block(output: str) -> TextContent:
    return text_block(f"{SUCCEEDED}\n{output}" if output else SUCCEEDED)


def failed_block(output: str) -> TextContent:
    return text_block(f"{FAILED}\n{output or EMPTY_FAILURE_OUTPUT}")


def mutation_failed_text(error: str) -> str:
    return f"{error}\n\n{SKIPPED} The file mutation did not complete successfully; the command was not run."


def skipped_text(reason: str) -> str:
    return f"{SKIPPED} {reason}; the command was not run."


def run_error_text(mutation_text: str, error: str) -> str:
    """A command that timed out, was aborted or ended without an exit code: the mutation's text kept."""
    return "\n\n".join(part for part in (mutation_text, FAILED, error) if part)
