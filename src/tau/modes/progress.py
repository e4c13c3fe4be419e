"""A one-line progress bar on stderr for long runs (only on a terminal, unless asked)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 30


class Progress:
    """Counts steps and redraws ``[#####.....] n/total <unit>  <label>`` at most ten times a second.

    Args:
        total: Steps to count.
        label: Shown after the count (may be changed between steps).
        enabled: Draw it; default: only on a terminal and for at least ``min_steps`` steps.
        stream: Where to draw (default: stderr).
        unit: What a step is (``requests replayed``, ``tasks``).
        min_steps: Fewer steps than this finish before a bar would help (only for ``enabled=None``).
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        enabled: bool | None = None,
        stream: TextIO | None = None,
        unit: str = "requests replayed",
        min_steps: int = 300,
    ) -> None:
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = total >= min_steps and self.stream.isatty()
        self.enabled = enabled and total > 0
        self.total, self.label, self.unit, self.done, self._drawn = total, label, unit, 0, 0.0

    def step(self) -> None:
        self.done += 1
        if self.enabled and (time.monotonic() - self._drawn >= 0.1 or self.done == self.total):
            self._draw()

    def _draw(self) -> None:
        self._drawn = time.monotonic()
        filled = _WIDTH * self.done // self.total
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r\x1b[2K[{bar}] {self.done}/{self.total} {self.unit}  {self.label}")
        self.stream.flush()

    def clear(self) -> None:
        """Take the bar off its line (before other output); the next step draws it again."""
        if self.enabled:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = 0.0

    def close(self) -> None:
        self.clear()
