"""The bundled ``observation-pack`` extension (SoL-Pi's ObservationPack, extensions.md §5.4).

A successful, text-only tool result over 10 KiB is sent in full for its first two provider
requests; later requests carry a short, byte-stable placeholder instead, edited into the projected
messages in place (the session file keeps the original). The original bytes are stored under
``<sessionDir>/sol/<sessionId>/observation-pack/`` and ``obs_recall`` pages or searches them.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.sol_common.activation import on_first_session_start

__all__ = ["ObservationPack", "extension"]


def extension(tau: Any) -> None:
    """Read the ``sol`` settings at the first ``session_start`` and install ObservationPack if on."""

    def install(settings: Any, ctx: Any) -> None:
        if settings.observation_pack:
            from tau.bundled.obspack.pack import ObservationPack

            ObservationPack(tau, settings).install()

    on_first_session_start(tau, install)


def __getattr__(name: str) -> Any:
    """``ObservationPack``, imported on first use (the extension loads at every start, usually switched off)."""
    if name == "ObservationPack":
        from tau.bundled.obspack.pack import ObservationPack

        return ObservationPack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
