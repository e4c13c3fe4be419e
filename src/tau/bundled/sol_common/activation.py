"""How each SoL mechanism switches itself on: once, at the first ``session_start``, from the settings.

The mechanisms load at every start and are usually off, so the module stays light: the settings are
read, and the mechanism imported, only when the session starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["on_first_session_start"]


def on_first_session_start(tau: Any, install: Callable[[Any, Any], None]) -> None:
    """Call ``install(settings, ctx)`` once, at the first ``session_start``, with the ``sol`` settings.

    An invalid ``sol`` block raises from the handler, which the host reports as an extension error.
    """
    started = False

    def on_session_start(event: Any, ctx: Any) -> None:
        nonlocal started
        if started:
            return
        started = True
        from tau.bundled.sol_common.host import load_sol_settings

        install(load_sol_settings(tau, ctx), ctx)

    tau.on("session_start", on_session_start)
