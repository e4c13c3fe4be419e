"""Online Context Compact's wire format: the entries it writes (extensions.md §5.6).

The single source of these names for the live extension, its replay (:mod:`tau.bundled.occ.replay`)
and the readers of its traces (``tau session info``, ``tau savings``):

- ``custom_message`` :data:`CONTINUE_TYPE` (hidden): the reminder that continues the task after its
  compaction (the compaction entry right before it is OCC's); :data:`SKIPPED_TYPE`: a ``custom``
  entry recording a skipped compaction, then the same reminder;
- ``custom`` :data:`STATE_TYPE`: OCC's state snapshots; :data:`DECISION_TYPE`: each boundary's
  decision and its figures;
- the ``update_plan`` tool (:data:`PLAN_TOOL`), whose result's ``details.boundary`` marks a boundary.
"""

from __future__ import annotations

__all__ = [
    "CONTINUE_TYPE",
    "DECISION_TYPE",
    "MECHANISM",
    "OCC_MESSAGE_TYPES",
    "PLAN_TOOL",
    "SKIPPED_TYPE",
    "STATE_TYPE",
]

MECHANISM = "onlineContextCompact"  # its key in the ``sol`` settings and in ``tau savings``
CONTINUE_TYPE = "sol-pi-online-context-compact"
SKIPPED_TYPE = "sol-pi-online-context-compact-skipped"
OCC_MESSAGE_TYPES = (CONTINUE_TYPE, SKIPPED_TYPE)
STATE_TYPE = "sol-pi-online-context-state-v1"
DECISION_TYPE = "sol-pi-online-context-decision-v1"
PLAN_TOOL = "update_plan"
