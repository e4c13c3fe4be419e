"""ObservationPack's wire format: what it leaves in a session and beside it (extensions.md §5.4).

The single source of these names for the live extension, its replay
(:mod:`tau.bundled.obspack.replay`) and the readers of its traces. Placeholders never reach the
session file (they exist only in requests); what does:

- the model's ``obs_recall`` calls (:data:`RECALL_TOOL`) and their results;
- a ``custom`` entry :data:`WINDOW_TYPE` when the stale window widens;
- under ``sol/<sessionId>/``: :data:`PACK_DIR` with the stored originals (:data:`OBJECTS_DIR`) and
  the ledger :data:`LEDGER_FILE`, one JSON line per packing decision.
"""

from __future__ import annotations

__all__ = ["LEDGER_FILE", "MECHANISM", "OBJECTS_DIR", "PACK_DIR", "RECALL_TOOL", "WINDOW_TYPE"]

MECHANISM = "observationPack"  # its key in the ``sol`` settings and in ``tau savings``
RECALL_TOOL = "obs_recall"
WINDOW_TYPE = "sol-pi-observation-pack-window-v1"
PACK_DIR = "observation-pack"
OBJECTS_DIR = "objects"
LEDGER_FILE = "ledger.jsonl"
