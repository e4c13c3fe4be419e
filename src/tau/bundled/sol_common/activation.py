"""How each SoL mechanism switches itself on: once, at the first ``session_start``, from the settings.

The mechanisms load at every start and are usually off, so the module stays light: the settings are
read, and the mechanism imported, only when the session starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["on_first_session_start"]

# (session id, message) of the settings errors already reported: the four mechanisms read the same
# block, and the user should read a bad value once, not once per mechanism.
_reported: set[tuple[str, str]] = set()


def on_first_session_start(tau: Any, install: Callable[[Any, Any], None]) -> None:
    """Call ``install(settings, ctx)`` once, at the first ``session_start``, with the ``sol`` settings.

    An invalid ``sol`` block raises from the handler, which the host reports as an extension error;
    the other mechanisms of the same session stay off without repeating it.
    """
    started = False

    def on_session_start(event: Any, ctx: Any) -> None:
        nonlocal started
        if started:
            return
        started = True
        from tau.bundled.sol_common.host import load_sol_settings
        from tau.bundled.sol_common.settings import SolConfigError

        try:
            settings = load_sol_settings(tau, ctx)
        except SolConfigError as exc:
            seen = (ctx.session_manager.get_session_id(), str(exc))
            if seen in _reported:
                return
            _reported.add(seen)
            raise
        install(settings, ctx)

    tau.on("session_start", on_session_start)
