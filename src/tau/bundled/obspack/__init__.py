"""The bundled ``observation-pack`` extension (SoL-Pi's ObservationPack, extensions.md §5.4).

A successful, text-only tool result over 10 KiB is sent in full for its first two provider
requests; later requests carry a short, byte-stable placeholder instead, edited into the projected
messages in place (the session file keeps the original). The original bytes are stored under
``<sessionDir>/sol/<sessionId>/observation-pack/`` and ``obs_recall`` pages or searches them.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.obspack.pack import ObservationPack
from tau.bundled.sol_common import load_sol_settings

__all__ = ["ObservationPack", "extension"]


def extension(tau: Any) -> None:
    """Read the ``sol`` settings at the first ``session_start`` and install ObservationPack if on."""
    started = {"done": False}

    def on_session_start(event: Any, ctx: Any) -> None:
        if started["done"]:
            return
        started["done"] = True
        settings = load_sol_settings(tau, ctx)
        if settings.observation_pack:
            ObservationPack(tau, settings).install()

    tau.on("session_start", on_session_start)
