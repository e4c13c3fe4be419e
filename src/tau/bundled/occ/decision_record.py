"""Each boundary decision OCC makes, as a small ``custom`` entry (decisions.md, "Compaction").

Whether OCC compacted or not, the session records why: the reason and the figures that led to it,
so ``tau session info`` can show a user why a boundary was (or was not) compacted. The entry is
never sent to the model and is not part of OCC's state (the state snapshot stays the seed's).
"""

from __future__ import annotations

import math
from typing import Any

from tau.bundled.occ.economics import Decision
from tau.bundled.occ.wire import DECISION_TYPE
from tau.common.brief import brief, label

__all__ = ["DECISION_TYPE", "decision_data", "format_decision"]


def _tokens(value: float) -> int:
    return round(value)


def _requests(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 2)


def decision_data(
    decision: Decision, *, tool_call_id: str, remaining_steps: int, keep_recent_tokens: int
) -> dict[str, Any]:
    """The entry's data: the outcome and every figure of the decision (tokens rounded)."""
    horizon = decision.horizon
    return {
        "toolCallId": tool_call_id,
        "compact": decision.compact,
        "reason": decision.reason,
        "writeTokens": _tokens(decision.write_tokens),
        "archiveTokens": _tokens(decision.archive_tokens),
        "memoTokens": _tokens(decision.memo_tokens),
        "savingTokens": _tokens(decision.saving_tokens),
        "newDebtTokens": _tokens(decision.new_debt_tokens),
        "horizonRequests": horizon.expected if horizon is not None else None,
        "effectiveHorizonRequests": _requests(decision.effective_horizon_requests),
        "breakevenRequests": _requests(decision.breakeven_requests),
        "combinedBreakevenRequests": _requests(decision.combined_breakeven_requests),
        "remainingSteps": remaining_steps,
        "keepRecentTokens": keep_recent_tokens,
        "cacheWriteReadRatio": decision.cache_write_read_ratio,
        "priorCompactions": decision.prior_compaction_count,
        "requestsSinceCompaction": decision.requests_since_compaction,
    }


def _number(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return brief(value)  # a hand-edited or damaged entry: shown, never a crash of `tau session info`
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def format_decision(data: dict[str, Any]) -> str:
    """One line for people: the outcome, then W, A, saving, debt, horizon and break-even."""
    outcome = "compact" if data.get("compact") else "keep"
    horizon = data.get("effectiveHorizonRequests", data.get("horizonRequests"))
    return (
        f"{outcome} ({label(data.get('reason'))}): W {_number(data.get('writeTokens'))}, "
        f"A {_number(data.get('archiveTokens'))}, saving {_number(data.get('savingTokens'))}, "
        f"debt {_number(data.get('newDebtTokens'))}, horizon {_number(horizon)} requests, "
        f"break-even {_number(data.get('breakevenRequests'))} requests"
    )
