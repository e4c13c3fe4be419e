"""A one-line progress bar on stderr for long replays (only on a terminal, unless asked)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 30
_MIN_STEPS = 300  # shorter replays finish before a bar would help


class Progress:
    """Counts steps and redraws ``[#####.....] n/total label`` at most ten times a second."""

    def __init__(
        self, total: int, label: str, *, enabled: bool | None = None, stream: TextIO | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = total >= _MIN_STEPS and self.stream.isatty()
        self.enabled = enabled and total > 0
        self.total, self.label, self.done, self._drawn = total, label, 0, 0.0

    def step(self) -> None:
        self.done += 1
        if self.enabled and (time.monotonic() - self._drawn >= 0.1 or self.done == self.total):
            self._draw()

    def _draw(self) -> None:
        self._drawn = time.monotonic()
        filled = _WIDTH * self.done // self.total
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} requests replayed  {self.label}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
