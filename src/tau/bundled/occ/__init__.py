"""The bundled ``online-compact`` extension (SoL-Pi's Online Context Compact, extensions.md §5.6)."""

from __future__ import annotations

from typing import Any

__all__ = ["extension"]


def extension(tau: Any) -> None:
    """Online Context Compact is opt-in (``sol.onlineContextCompact``); the wiring lands next."""
