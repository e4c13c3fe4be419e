"""The savings treatment of the interactive mode (extensions.md §5.2, SoL-Pi's ``tui.ts``).

Only ``ctx.mode == "tui"`` shows anything: RPC also has a UI, but its clients did not ask for
these notices, and print/JSON output must not change.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

__all__ = [
    "STATUS_KEY",
    "banner_lines",
    "format_savings_bytes",
    "format_savings_count",
    "show_savings",
]

STATUS_KEY = "sol-pi-savings"
STATUS_SECONDS = 4.0
_status_timers: dict[int, asyncio.TimerHandle] = {}


def format_savings_count(value: float, unit: str) -> str:
    """``12,345 context tokens avoided``: en-US grouping of the rounded, non-negative count."""
    count = max(0, round(value)) if math.isfinite(value) else 0
    return f"{count:,} {unit}"


def _compact(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def format_savings_bytes(value: float) -> str:
    """``1.5 MiB removed from future prompts`` (MiB, KiB or bytes; a trailing ``.0`` dropped)."""
    size = max(0, round(value)) if math.isfinite(value) else 0
    if size >= 1024 * 1024:
        return f"{_compact(size / (1024 * 1024))} MiB removed from future prompts"
    if size >= 1024:
        return f"{_compact(size / 1024)} KiB removed from future prompts"
    return f"{size:,} B removed from future prompts"


def banner_lines(mechanism: str, saving: str) -> list[str]:
    """The two lines shown above a tool row that saved something."""
    return [f"⚡ SoL-Pi · {mechanism}", f"Money saved · {saving}"]


def show_savings(ctx: Any, mechanism: str, saving: str) -> None:
    """Notify and set the ``sol-pi-savings`` status for 4 s (interactive mode only)."""
    if ctx.mode != "tui":
        return
    ui = ctx.ui
    ui.notify(f"⚡ SoL-Pi · {mechanism}\nMoney saved · {saving}", "info")
    ui.set_status(STATUS_KEY, f"⚡ {mechanism} · {saving}")
    previous = _status_timers.pop(id(ui), None)
    if previous is not None:
        previous.cancel()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return

    def clear() -> None:
        if _status_timers.get(id(ui)) is handle:
            del _status_timers[id(ui)]
            ui.set_status(STATUS_KEY, None)

    handle = loop.call_later(STATUS_SECONDS, clear)
    _status_timers[id(ui)] = handle
