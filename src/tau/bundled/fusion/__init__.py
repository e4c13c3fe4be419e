"""The bundled ``action-fusion`` extension (SoL-Pi's Action Fusion, extensions.md §5.3).

``edit`` and ``write`` take an optional ``then_run: {command, timeout?}``: after the mutation
succeeds the command runs in the same tool call, saving the model round trip that would otherwise
only ask for it. The result ends with ``[then_run:succeeded]`` and the command's output; a non-zero
exit returns an error result with ``[then_run:failed]`` (the edit is kept, never rolled back); a
failed mutation or a file changed before the command gives ``[then_run:skipped]``.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.sol_common.activation import on_first_session_start

__all__ = ["ActionFusion", "extension", "host_tool_properties"]


def extension(tau: Any) -> None:
    """Read the ``sol`` settings at the first ``session_start`` and register the fused tools if on."""

    def install(settings: Any, ctx: Any) -> None:
        if not settings.action_fusion:
            return
        from tau.bundled.fusion.shell_settings import check_shell_settings
        from tau.bundled.fusion.tools import ActionFusion
        from tau.bundled.sol_common.reachability import watch_reachability

        check_shell_settings(tau, ctx)  # a malformed shell setting stops initialization (seed 003)
        ActionFusion(tau).install()
        watch_reachability(tau, ctx, action_fusion=True, reducer=False)

    on_first_session_start(tau, install)


def __getattr__(name: str) -> Any:
    """``ActionFusion`` and ``host_tool_properties``, imported on first use (the extension loads at every start)."""
    if name in ("ActionFusion", "host_tool_properties"):
        from tau.bundled.fusion import tools

        return getattr(tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
