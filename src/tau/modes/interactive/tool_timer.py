"""The timing line of a tool row, as pi's bash and codemode rows show it.

``Elapsed 4.2s`` while the call runs (the live area redraws it every second), ``Took 4.2s`` once it
finished. A finished call's recorded duration (``durationMs`` of ``tool_execution_end``, kept on the
tool-result message in the session file) wins over the row's own clock: it is what the tool loop
measured, and a resumed session still has it. With neither a start time (rows of a loaded history
have none) nor a recorded duration there is no line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from tau.modes.interactive.model import ToolBlock

__all__ = ["format_tool_duration", "timer_text", "timer_tick"]


def format_tool_duration(ms: float) -> str:
    """``4.2s`` below a minute, then ``1m 30s`` and ``2h 3m 4s`` (whole seconds)."""
    seconds = ms / 1000
    if seconds < 60:
        # A tenth rounded half up on the exact value, as JavaScript's toFixed(1) does (pi's
        # formatting): Python's own format rounds 1.25 to "1.2", pi shows "1.3s".
        return f"{Decimal(seconds).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}s"
    total = math.floor(seconds)
    minutes, remainder = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {remainder}s"
    return f"{minutes // 60}h {minutes % 60}m {remainder}s"


def timer_text(block: ToolBlock, now: float) -> str | None:
    """The row's timing line at ``now`` (the controller's clock, in seconds), or ``None``."""
    running = block.status == "running"
    if not running and block.duration_ms is not None and math.isfinite(block.duration_ms):
        return f"Took {format_tool_duration(block.duration_ms)}"
    if block.started_at is None:
        return None
    end = block.ended_at if block.ended_at is not None and not running else now
    elapsed_ms = max(0.0, end - block.started_at) * 1000
    return f"{'Elapsed' if running else 'Took'} {format_tool_duration(elapsed_ms)}"


def timer_tick(blocks: Iterable[object], now: float) -> tuple[int, ...]:
    """Whole seconds each running row has run: the live area redraws when one of them changes."""
    return tuple(
        math.floor(now - block.started_at)
        for block in blocks
        if isinstance(block, ToolBlock) and block.status == "running" and block.started_at is not None
    )
