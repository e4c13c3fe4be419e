"""Action Fusion's wire format: what a fused call leaves in a session file (extensions.md §5.3).

The single source of these names: the live extension writes them, its replay
(:mod:`tau.bundled.fusion.replay`) and the mechanisms that read fused results (the reducer, Online
Context Compact) read them from here.

- An ``edit``/``write`` call whose arguments carry ``then_run``: ``{"command": str, "timeout"?: number}``.
- Its result's text ends with one marker block: :data:`SUCCEEDED` (the command's output follows on
  the next lines), :data:`FAILED` (an error result that keeps the mutation's text and details), or
  :data:`SKIPPED` (the command never ran).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FAILED", "MARKERS", "MECHANISM", "MUTATIONS", "SKIPPED", "SUCCEEDED", "THEN_RUN", "is_fused_call"]

MECHANISM = "actionFusion"  # its key in the ``sol`` settings and in ``tau savings``
MUTATIONS = ("edit", "write")
THEN_RUN = "then_run"
SUCCEEDED = "[then_run:succeeded]"
FAILED = "[then_run:failed]"
SKIPPED = "[then_run:skipped]"
MARKERS = (SUCCEEDED, FAILED, SKIPPED)


def is_fused_call(call: Mapping[str, Any]) -> bool:
    """Whether a tool call is a fused ``edit``/``write`` (its arguments carry ``then_run``)."""
    arguments = call.get("arguments")
    return (
        call.get("name") in MUTATIONS
        and isinstance(arguments, dict)
        and isinstance(arguments.get(THEN_RUN), dict)
    )
