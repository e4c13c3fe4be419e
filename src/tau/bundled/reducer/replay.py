"""The Evidence-Preserving Reducer in a replay (:mod:`tau.bundled.sol_common.replay`): undo, evidence.

- **undo**: a receipt in a tool result is replaced by the log it stands for, read back from the
  reducer's archive (``source_artifact``, else ``sol/<id>/`` by hash, checked by hash); a receipt
  whose archive is gone stays (counted as ``unrestored``).
- A replay cannot apply it: a receipt is the reducer model's answer, which a replay does not have.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tau.bundled.reducer.wire import DETAILS_KEY, MECHANISM, RECEIPT_PREFIX, archived_object, is_receipt
from tau.bundled.sol_common.replay import ReplayHost, Undone
from tau.common.regular_files import read_regular
from tau.extension import entry_message

__all__ = ["REPLAY", "ReducerReplay", "restore_receipts"]

Entry = dict[str, Any]
_ARTIFACT = re.compile(r"^source_artifact=(.+)$", re.MULTILINE)
_SOURCE_HASH = re.compile(r"^source_sha256=([0-9a-f]{64})$", re.MULTILINE)
_READBACK = re.compile(r"^readback=.*$", re.MULTILINE)


def _archived(text: str, archive_root: Path | None) -> str | None:
    """The log a receipt stands for: its ``source_artifact``, else the archive by hash; checked by hash."""
    wanted = _SOURCE_HASH.search(text)
    candidates: list[Path] = []
    artifact = _ARTIFACT.search(text)
    if artifact:
        candidates.append(Path(artifact.group(1).strip()))
    if wanted and archive_root is not None:
        digest = wanted.group(1)
        candidates.append(archive_root.joinpath(*archived_object(digest)))
    for path in candidates:
        try:
            data = read_regular(path)  # never a pipe or a link in the archive's place
        except OSError:
            continue
        if wanted is None or hashlib.sha256(data).hexdigest() == wanted.group(1):
            return data.decode("utf-8", "replace")
    return None


def _restore_block(text: str, archive_root: Path | None) -> str | None:
    start = text.find(RECEIPT_PREFIX)
    end = _READBACK.search(text, start) if start >= 0 else None
    if end is None:
        return None
    original = _archived(text[start:], archive_root)
    if original is None:
        return None
    return text[:start] + original + text[end.end() :]


def _restore_receipt(message: dict[str, Any], archive_root: Path | None) -> dict[str, Any] | None:
    content = []
    restored = False
    for block in message.get("content") or []:
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if isinstance(text, str) and RECEIPT_PREFIX in text:
            replaced = _restore_block(text, archive_root)
            if replaced is None:
                return None
            block, restored = {**block, "text": replaced}, True
        content.append(block)
    if not restored:
        return None
    details = {k: v for k, v in message["details"].items() if k != DETAILS_KEY}
    return {**message, "content": content, "details": details}


def restore_receipts(branch: list[Entry], root: Path | None) -> tuple[list[Entry], int, int]:
    """``branch`` with every receipt replaced by its archived log; how many receipts, how many kept."""
    entries = []
    receipts = unrestored = 0
    for entry in branch:
        message = entry_message(entry, "toolResult")
        if message is not None and is_receipt(message):
            restored = _restore_receipt(dict(message), root)
            receipts += 1
            if restored is None:
                unrestored += 1
            else:
                entry = {**entry, "message": restored}
        entries.append(entry)
    return entries, receipts, unrestored


class ReducerReplay:
    name = MECHANISM
    undo_rank = 0  # first: a fused result's log comes back before the result is split
    not_measured: str | None = "a receipt is the reducer model's answer, which a replay does not have"

    def evidence(self, branch: Sequence[Entry]) -> int:
        """The tool results a receipt replaced."""
        return sum(
            1 for entry in branch if (m := entry_message(entry, "toolResult")) is not None and is_receipt(m)
        )

    def undo(self, branch: list[Entry], host: ReplayHost) -> Undone:
        undone, receipts, unrestored = restore_receipts(branch, host.archive_root)
        notes = [f"{unrestored} receipt(s) kept: their archived log is gone"] if unrestored else []
        return Undone(undone, {"receipts": receipts, "unrestored": unrestored}, notes)

    def apply(self, branch: list[Entry]) -> tuple[list[Entry], dict[str, Any]]:
        return branch, {}

    def start(self, branch: list[Entry], host: ReplayHost) -> None:
        return None


REPLAY = ReducerReplay()
