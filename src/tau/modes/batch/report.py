"""What ``tau batch`` shows while it runs: a progress bar, each distinct warning once, and a summary."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from tau.modes.progress import Progress

__all__ = ["BatchReport"]

_STATUSES = ("ok", "error", "timeout", "cancelled")


class BatchReport:
    """Counts results by status; the bar is on stderr (on a terminal, unless ``enabled`` says otherwise)."""

    def __init__(
        self, total: int, *, skipped: int = 0, enabled: bool | None = None, stream: TextIO | None = None
    ):
        self.stream = stream or sys.stderr
        self.counts: Counter[str] = Counter()
        self.skipped = skipped
        self._warned: set[str] = set()
        self.bar = Progress(total, "", enabled=enabled, stream=self.stream, unit="tasks", min_steps=1)
        self.bar.done = skipped

    def add(self, result: dict[str, Any], warnings: list[str]) -> None:
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.bar.clear()
                print(f"Warning: {warning}", file=self.stream)
        self.counts[result["status"]] += 1
        self.bar.label = self._tally()
        self.bar.step()

    def _tally(self) -> str:
        parts = [f"{self.counts[status]} {status}" for status in _STATUSES if self.counts[status]]
        if self.skipped:
            parts.append(f"{self.skipped} skipped (ok before)")
        return ", ".join(parts) or "nothing run"

    def close(self, results: Path) -> None:
        self.bar.close()
        where = f"; results in {results}" if results.exists() else ""  # none when nothing could run
        print(f"tau batch: {self._tally()}{where}", file=self.stream)
