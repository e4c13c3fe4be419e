"""OCC's persistent state and its transitions (extensions.md §5.6.2).

The state is a plain dict with SoL-Pi's camelCase keys, saved as a full snapshot in a
``sol-pi-online-context-state-v1`` custom entry after every change; restoring takes the newest valid
snapshot on the branch. Transitions return a new dict and never change their input.

Compaction keeps the plan, the request-horizon samples and the growth history (the seed), and
cache debt accumulates (decisions.md).

Refetches (issue 25, :mod:`tau.bundled.sol_common.refetch`): a request whose calls only fetch again
what the model was already given is counted apart (``refetchRequestCount``) and left out of the
request-horizon samples, so a model that thrashes after a compaction does not make the task look
longer and the next compaction more worth it; a refetch of compacted content adds what that
request cost to the cache debt the next decision must earn back.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from tau.bundled.occ.wire import STATE_TYPE
from tau.bundled.sol_common.refetch import CallHistory, named_calls
from tau.common.jsstr import js_len

__all__ = [
    "STATE_TYPE",
    "average_increment",
    "initial_state",
    "note_turn",
    "parse_state",
    "record_boundary",
    "record_compaction",
    "record_completed_plan_handoff",
    "record_correction",
    "record_provider_request",
    "record_refetch",
    "requests_since_compaction",
    "restore_state",
    "with_plan",
]

_MAX_SAFE = 2**53 - 1
_COUNTS = (
    "epoch",
    "requestCount",
    "lastBoundaryRequestCount",
    "positiveContextDeltaCount",
    "nativeCompactionCount",
    "refetchRequestCount",
    "lastBoundaryRefetchCount",
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
        "refetchRequestCount": 0,
        "lastBoundaryRefetchCount": 0,
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
    data = {"refetchRequestCount": 0, "lastBoundaryRefetchCount": 0, **data}  # older snapshots lack them
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
        or data["lastBoundaryRefetchCount"] > data["refetchRequestCount"]
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
    for entry in reversed(branch):  # (the newest snapshot is usually a few entries from the end)
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
    """A completed step: one request-horizon sample (its requests, refetches left out), and its
    progress record."""
    pending = [*state["pendingProgress"], *([copy.deepcopy(progress)] if progress else [])]
    requests = state["requestCount"] - state["lastBoundaryRequestCount"]
    refetches = state.get("refetchRequestCount", 0) - state.get("lastBoundaryRefetchCount", 0)
    return {
        **state,
        "plan": copy.deepcopy(plan),
        "completedBoundaryRequestCounts": [
            *state["completedBoundaryRequestCounts"],
            max(1, requests - refetches) if requests > 0 else requests,
        ],
        "lastBoundaryRequestCount": state["requestCount"],
        "lastBoundaryRefetchCount": state.get("refetchRequestCount", 0),
        "pendingProgress": pending,
    }


def record_refetch(state: dict[str, Any], debt_tokens: float = 0) -> dict[str, Any]:
    """A request that only fetched again what the model had been given; ``debt_tokens``, what it
    cost when it fetched content a compaction removed (added to the debt the next decision weighs)."""
    return {
        **state,
        "refetchRequestCount": state.get("refetchRequestCount", 0) + 1,
        "cacheDebtTokens": state["cacheDebtTokens"] + max(0.0, debt_tokens),
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
        "lastBoundaryRefetchCount": state.get("refetchRequestCount", 0),
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
        "lastBoundaryRefetchCount": state.get("refetchRequestCount", 0),
    }


def _result_tokens(result: Any) -> float:
    """A tool result's text as tokens (UTF-16 code units / 4)."""
    content = result.get("content") if isinstance(result, dict) else None
    blocks = content if isinstance(content, list) else []
    return sum(js_len(str(b.get("text") or "")) for b in blocks if isinstance(b, dict)) / 4


def note_turn(
    state: dict[str, Any], calls: CallHistory, message: Any, results: list[Any], ratio: float
) -> dict[str, Any]:
    """A turn's calls noted in ``calls``; when every call was a refetch, the request is counted as
    one (:func:`record_refetch`), and when one of them fetched what a compaction removed, it costs
    the debt of one more request: its context read (``lastContextTokens``) and its results written
    again (``ratio`` times their tokens, in cache-read units)."""
    made = named_calls(message)
    if not made:
        return state
    refetches = [calls.is_refetch(name, arguments) for name, arguments in made]
    compacted = False
    for refetch, (name, arguments) in zip(refetches, made, strict=True):
        epoch = calls.previous_epoch(name, arguments) if refetch else None
        compacted = compacted or (epoch is not None and epoch < calls.epoch)
    for name, arguments in made:
        calls.record(name, arguments)
    if not all(refetches):
        return state
    debt = 0.0
    if compacted:
        debt = (state.get("lastContextTokens") or 0) + ratio * sum(map(_result_tokens, results))
    return record_refetch(state, debt)
