"""OCC's persistent state and its transitions (extensions.md §5.6.2).

The state is a plain dict with SoL-Pi's camelCase keys, saved as a full snapshot in a
``sol-pi-online-context-state-v1`` custom entry after every change; restoring takes the newest valid
snapshot on the branch. Transitions return a new dict and never change their input.

Compaction keeps the plan, the request-horizon samples and the growth history (the seed), and
cache debt accumulates (decisions.md).
"""

from __future__ import annotations

import copy
import math
from typing import Any

__all__ = [
    "STATE_TYPE",
    "average_increment",
    "initial_state",
    "parse_state",
    "record_boundary",
    "record_compaction",
    "record_completed_plan_handoff",
    "record_correction",
    "record_provider_request",
    "requests_since_compaction",
    "restore_state",
    "with_plan",
]

STATE_TYPE = "sol-pi-online-context-state-v1"
_MAX_SAFE = 2**53 - 1
_COUNTS = (
    "epoch",
    "requestCount",
    "lastBoundaryRequestCount",
    "positiveContextDeltaCount",
    "nativeCompactionCount",
)
_STATUSES = ("pending", "in_progress", "completed")


def initial_state() -> dict[str, Any]:
    """The state of a session OCC has not seen yet."""
    return {
        "version": 1,
        "epoch": 0,
        "plan": [],
        "awaitingPlanRestatement": False,
        "pendingProgress": [],
        "requestCount": 0,
        "lastCompactionRequestCount": None,
        "lastBoundaryRequestCount": 0,
        "completedBoundaryRequestCounts": [],
        "lastContextTokens": None,
        "positiveContextDeltaTotal": 0,
        "positiveContextDeltaCount": 0,
        "nativeCompactionCount": 0,
        "cacheDebtTokens": 0,
        "cacheDebtRepaymentTokens": 0,
    }


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SAFE


def _amount(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value >= 0


def _plan_ok(plan: Any) -> bool:
    return isinstance(plan, list) and all(
        isinstance(step, dict)
        and isinstance(step.get("id"), str)
        and isinstance(step.get("goal"), str)
        and step.get("status") in _STATUSES
        for step in plan
    )


def _progress_ok(progress: Any) -> bool:
    return isinstance(progress, list) and all(isinstance(record, dict) for record in progress)


def parse_state(data: Any) -> dict[str, Any] | None:
    """A valid snapshot as a state (legacy ones lack two optional fields), else ``None``."""
    if not isinstance(data, dict) or data.get("version") != 1:
        return None
    if not all(_count(data.get(key)) for key in _COUNTS):
        return None
    last_compaction = data.get("lastCompactionRequestCount")
    samples = data.get("completedBoundaryRequestCounts")
    last_tokens = data.get("lastContextTokens")
    if (
        (last_compaction is not None and not _count(last_compaction))
        or not isinstance(samples, list)
        or not all(_count(sample) for sample in samples)
        or (last_tokens is not None and not _amount(last_tokens))
        or not _amount(data.get("positiveContextDeltaTotal"))
        or not _amount(data.get("cacheDebtTokens"))
        or not _amount(data.get("cacheDebtRepaymentTokens"))
        or data["lastBoundaryRequestCount"] > data["requestCount"]
        or not isinstance(data.get("awaitingPlanRestatement", False), bool)
        or not _plan_ok(data.get("plan"))
        or not _progress_ok(data.get("pendingProgress"))
    ):
        return None
    state = {**initial_state(), **copy.deepcopy(data)}
    state["awaitingPlanRestatement"] = False  # tau never suppresses a plan update (extensions.md §6 item 1)
    return state


def restore_state(branch: list[dict[str, Any]]) -> dict[str, Any]:
    """The newest valid snapshot on ``branch`` (malformed ones are skipped), else the initial state."""
    for entry in reversed(branch):
        if entry.get("type") == "custom" and entry.get("customType") == STATE_TYPE:
            state = parse_state(entry.get("data"))
            if state is not None:
                return state
    return initial_state()


def with_plan(state: dict[str, Any], plan: list[dict[str, Any]]) -> dict[str, Any]:
    return {**state, "plan": copy.deepcopy(plan)}


def average_increment(state: dict[str, Any]) -> float | None:
    """The mean positive growth of the context between requests, ``None`` before any."""
    count = state["positiveContextDeltaCount"]
    return state["positiveContextDeltaTotal"] / count if count else None


def requests_since_compaction(state: dict[str, Any]) -> int | None:
    last = state.get("lastCompactionRequestCount")
    return None if last is None else state["requestCount"] - last


def record_provider_request(state: dict[str, Any], context_tokens: float) -> dict[str, Any]:
    """One counted request: the growth sample, and one request's worth of debt repaid."""
    previous = state["lastContextTokens"]
    delta = 0 if previous is None else context_tokens - previous
    debt = max(0.0, state["cacheDebtTokens"] - state["cacheDebtRepaymentTokens"])
    return {
        **state,
        "requestCount": state["requestCount"] + 1,
        "lastContextTokens": context_tokens,
        "positiveContextDeltaTotal": state["positiveContextDeltaTotal"] + max(0, delta),
        "positiveContextDeltaCount": state["positiveContextDeltaCount"] + (1 if delta > 0 else 0),
        "cacheDebtTokens": debt,
        "cacheDebtRepaymentTokens": state["cacheDebtRepaymentTokens"] if debt > 0 else 0,
    }


def record_boundary(
    state: dict[str, Any], plan: list[dict[str, Any]], progress: dict[str, Any] | None
) -> dict[str, Any]:
    """A completed step: one request-horizon sample, and its progress record."""
    pending = [*state["pendingProgress"], *([copy.deepcopy(progress)] if progress else [])]
    return {
        **state,
        "plan": copy.deepcopy(plan),
        "completedBoundaryRequestCounts": [
            *state["completedBoundaryRequestCounts"],
            state["requestCount"] - state["lastBoundaryRequestCount"],
        ],
        "lastBoundaryRequestCount": state["requestCount"],
        "pendingProgress": pending,
    }


def record_compaction(state: dict[str, Any], debt_tokens: float, repayment_tokens: float) -> dict[str, Any]:
    """A compaction happened: a new epoch, the debt added; plan, samples and growth kept."""
    return {
        **state,
        "epoch": state["epoch"] + 1,
        "lastCompactionRequestCount": state["requestCount"],
        "pendingProgress": [],
        "nativeCompactionCount": state["nativeCompactionCount"] + 1,
        "cacheDebtTokens": state["cacheDebtTokens"] + debt_tokens,
        "cacheDebtRepaymentTokens": state["cacheDebtRepaymentTokens"] + repayment_tokens,
    }


def record_correction(state: dict[str, Any]) -> dict[str, Any]:
    """The user corrected course: the plan, its samples, the growth history and the debt are dropped."""
    return {
        **state,
        "epoch": state["epoch"] + 1,
        "plan": [],
        "pendingProgress": [],
        "completedBoundaryRequestCounts": [],
        "lastBoundaryRequestCount": state["requestCount"],
        "lastContextTokens": None,
        "positiveContextDeltaTotal": 0,
        "positiveContextDeltaCount": 0,
        "cacheDebtTokens": 0,
        "cacheDebtRepaymentTokens": 0,
    }


def record_completed_plan_handoff(state: dict[str, Any]) -> dict[str, Any]:
    """A new task after a finished plan: fresh plan and samples, unpaid debt kept; else unchanged."""
    plan = state["plan"]
    if not plan or any(step["status"] != "completed" for step in plan):
        return state
    return {
        **state,
        "epoch": state["epoch"] + 1,
        "plan": [],
        "completedBoundaryRequestCounts": [],
        "lastBoundaryRequestCount": state["requestCount"],
    }
