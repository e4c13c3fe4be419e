"""The bundled ``online-compact`` extension (SoL-Pi's Online Context Compact, extensions.md §5.6).

Opt-in (``"sol": {"onlineContextCompact": true}``). At a plan boundary (a ``todo`` task, or an
``update_plan`` step, that becomes completed) it compacts the context when the prompt-cache
economics say it pays, then continues the task with a hidden reminder, without a human. With
``todo`` among the active tools the plan comes from ``todo`` and ``update_plan`` is not registered.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.sol_common.activation import on_first_session_start

__all__ = ["OnlineContextCompact", "extension"]


def extension(tau: Any) -> None:
    """Read the ``sol`` settings at the first ``session_start`` and install OCC if on."""

    def install(settings: Any, ctx: Any) -> None:
        if not settings.online_context_compact:
            return
        from tau.bundled.occ.compact import OnlineContextCompact

        source = "todo" if "todo" in tau.get_active_tools() else "update_plan"
        occ = OnlineContextCompact(tau, settings, source)
        occ.install()
        occ.restore(ctx)

    on_first_session_start(tau, install)


def __getattr__(name: str) -> Any:
    """``OnlineContextCompact``, imported on first use (the extension loads at every start, usually switched off)."""
    if name == "OnlineContextCompact":
        from tau.bundled.occ.compact import OnlineContextCompact

        return OnlineContextCompact
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
