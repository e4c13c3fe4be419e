"""The Evidence-Preserving Reducer's wire format (extensions.md §5.5).

The single source of these names for the live extension, its replay
(:mod:`tau.bundled.reducer.replay`) and the readers of its receipts (ObservationPack leaves a
receipt unpacked):

- a reduced tool result's text holds a receipt block, from the line :data:`RECEIPT_PREFIX` to its
  ``readback=`` line, with ``source_artifact=<path>`` and ``source_sha256=<hex>`` naming the log it
  replaced; the result's ``details`` carry :data:`DETAILS_KEY`;
- the replaced log is archived under ``sol/<sessionId>/`` :data:`ARCHIVE_DIR` ``/objects/<2 hex>/<sha256>.txt``;
- ``custom`` entries :data:`JOURNAL_TYPE` journal each step (``kind: "provider_response"`` with the
  reducer call's ``usage``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ARCHIVE_DIR",
    "DETAILS_KEY",
    "EVENT_SCHEMA",
    "JOURNAL_TYPE",
    "MECHANISM",
    "RECEIPT_PREFIX",
    "RECEIPT_SCHEMA",
    "archived_object",
    "is_receipt",
]

MECHANISM = "evidencePreservingReducer"  # its key in the ``sol`` settings and in ``tau savings``
JOURNAL_TYPE = "sol-pi-evidence-preserving-reducer-v1"
EVENT_SCHEMA = "sol-pi-evidence-preserving-reducer/1"
RECEIPT_SCHEMA = "sol-pi-evidence-receipt/1"
RECEIPT_PREFIX = "sol_pi_evidence_receipt_v1"
DETAILS_KEY = "evidencePreservingReducer"
ARCHIVE_DIR = "evidence-preserving-reducer"


def archived_object(digest: str) -> tuple[str, ...]:
    """The path parts, under the session's ``sol/<sessionId>/``, of the archived log with ``digest``."""
    return (ARCHIVE_DIR, "objects", digest[:2], f"{digest}.txt")


def is_receipt(message: Mapping[str, Any]) -> bool:
    """Whether a tool result is one the reducer replaced by a receipt."""
    details = message.get("details")
    return isinstance(details, dict) and isinstance(details.get(DETAILS_KEY), dict)
