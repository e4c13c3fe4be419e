"""A tau session as stock pi would have run it: every context-economy mechanism undone.

Each mechanism undoes its own traces (:meth:`~tau.bundled.sol_common.replay.MechanismReplay.undo`,
in each mechanism's ``replay`` module), so the replay of the result is the baseline ``tau savings``
compares tau's bill with:

- **Evidence-Preserving Reducer**: a receipt in a tool result is replaced by the log it stands for,
  read back from the reducer's archive (``source_artifact``); a receipt whose archive is gone stays
  (counted as ``unrestored``).
- **Online Context Compact**: its compactions and its hidden continuation messages are removed
  (the host's own compactions stay).
- **ObservationPack** edits only requests (placeholders never reach the file); the ``obs_recall``
  calls the model made to read packed results are removed with their results (a request made only
  of recalls disappears), and the system messages' declarations lose ``obs_recall``.
- **Action Fusion**: an ``edit``/``write`` that carried ``then_run`` becomes the plain call, and the
  command becomes one more request, a lone ``bash`` call, whose result is the command's output;
  the declarations lose the ``then_run`` property.

The todo checklist's context block is never in the file, so there is nothing to undo for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.bundled.sol_common.replay import ReplayHost, mechanism_replays
from tau.common.dataclass import dataclass

__all__ = ["UndoResult", "evidence", "undo_branch"]

Entry = dict[str, Any]


@dataclass
class UndoResult:
    """The undone branch and what was taken out."""

    branch: list[Entry]
    unfused: int = 0
    receipts: int = 0
    unrestored: int = 0
    recalls: int = 0
    occ_compactions: int = 0
    notes: list[str] = field(default_factory=list)


_COUNTS = {
    "unfused": "unfused",
    "receipts": "receipts",
    "unrestored": "unrestored",
    "recalls": "recalls",
    "occCompactions": "occ_compactions",
}


def evidence(branch: list[Entry]) -> dict[str, int]:
    """What the context-economy mechanisms left in a branch (empty for a stock pi session)."""
    found = {replay.name: replay.evidence(branch) for replay in mechanism_replays()}
    return {name: count for name, count in found.items() if count}


def undo_branch(
    branch: list[Entry],
    mechanisms: Iterable[str],
    host: ReplayHost | None = None,
    *,
    archive_root: str | os.PathLike[str] | None = None,
) -> UndoResult:
    """``branch`` with ``mechanisms`` (names as in ``evidence``) undone, each by its own replay;
    ``host`` (or just the session's ``archive_root``) is what the replays get from the host."""
    if host is None:
        from tau.session.projection import build_session_projection

        root = Path(archive_root) if archive_root is not None else None
        host = ReplayHost(projection=build_session_projection, archive_root=root)
    undo = set(mechanisms)
    result = UndoResult(list(branch))
    for replay in sorted(mechanism_replays(), key=lambda replay: replay.undo_rank):
        if replay.name not in undo:
            continue
        undone = replay.undo(result.branch, host)
        result.branch = undone.branch
        for key, count in undone.counts.items():
            setattr(result, _COUNTS[key], getattr(result, _COUNTS[key]) + count)
        result.notes += undone.notes
    return result
