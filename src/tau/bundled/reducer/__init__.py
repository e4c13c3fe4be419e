"""The bundled ``evidence-reducer`` extension (SoL-Pi's Evidence-Preserving Reducer, extensions.md §5.5).

A long test or build log (a ``bash`` result, or the command output of a fused ``edit``/``write``) is
archived under ``<sessionDir>/sol/<sessionId>/evidence-preserving-reducer/`` and replaced, in the
tool result, by a receipt of verbatim quotes, checked against the log. Two tiers:

- the **extractor tier** (``sol.evidenceExtractors``, on): known log formats get a receipt built by
  deterministic extractors, with no model call;
- the **model tier** (``sol.evidencePreservingReducer``, opt-in): a reducer model picks the quotes of
  other logs, when the call pays.

Whenever a step cannot be verified the original result is kept, and the reason is journaled.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.sol_common.activation import on_first_session_start

__all__ = ["Reducer", "extension"]


def extension(tau: Any) -> None:
    """Read the ``sol`` settings at the first ``session_start`` and install the reducer if a tier is on."""

    def install(settings: Any, ctx: Any) -> None:
        if not (settings.evidence_preserving_reducer or settings.evidence_extractors):
            return
        made: list[Any] = []

        async def on_tool_result(event: Any, ctx: Any) -> Any:
            # The reducer's modules (extractors, secret scan, receipts) load with the first tool
            # result: a run that calls no tool never needs them.
            if not made:
                from tau.bundled.reducer.reducer import Reducer

                made.append(Reducer(tau, settings))
            return await made[0].on_tool_result(event, ctx)

        tau.on("tool_result", on_tool_result)
        if settings.evidence_preserving_reducer:  # the opt-in tier warns when it cannot be reached
            from tau.bundled.sol_common.reachability import watch_reachability

            watch_reachability(tau, ctx, action_fusion=False, reducer=True)

    on_first_session_start(tau, install)


def __getattr__(name: str) -> Any:
    """``Reducer``, imported on first use (the extension loads at every start, usually switched off)."""
    if name == "Reducer":
        from tau.bundled.reducer.reducer import Reducer

        return Reducer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
