"""Online Context Compact in a replay (:mod:`tau.bundled.sol_common.replay`): decide, undo, evidence.

**decide**: its economic decision at every plan boundary.

OCC compacts only at a plan boundary, a step of the plan that becomes completed. A session that
used a plan tool has them: a ``todo`` result where a task moved from pending or in progress to
completed, or an ``update_plan`` result with ``details.boundary``. A session without one (every pi
session so far) gets a stand-in: the end of each run, a final answer (``stopReason: "stop"``)
followed by the user's next prompt, is a completed step, with one step assumed to remain.

At each boundary the replay asks OCC's own economics (:func:`tau.bundled.occ.economics.decide`)
with OCC's own figures: the context tokens ``W`` of the last request as sent (ObservationPack
placeholders at their small size), the removable history ``A``: what the host's compaction removes
when it keeps the message that completed the step (the plan call, or the final answer of a run) and
what follows it, at most ``keepRecentTokens`` 20,000 (:func:`tau.bundled.occ.estimate.removable_tokens`,
split turns included), a summary of 1,000 tokens, the cache write/read ratio 12.5, the request
samples, growth, debt and cooldown of OCC's state (:mod:`tau.bundled.occ.state`), its floor (no
economic compaction under ``keepRecentTokens`` plus the summary, or 8% of the window if smaller) and its refetches (requests that
only fetch again what was given are no horizon samples; a refetch of compacted content is debt:
:func:`tau.bundled.occ.state.note_turn`). When it compacts,
a compaction entry with a 1,000-token summary is placed on the replayed branch after the boundary
turn, keeping from the host's cut; its summary calls are priced as tau sends them, cache-friendly
(``tau savings`` prices them): the last request read from the cache, the
instruction written, 1,000 tokens of output, two calls for a split turn with history before it.

**undo**: its compactions (a compaction followed by its hidden continuation message) and its
continuation messages are removed; the host's own compactions stay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tau.bundled.occ import economics
from tau.bundled.occ import state as occ_state
from tau.bundled.occ.decision_record import decision_data
from tau.bundled.occ.estimate import (
    ObservedTokens,
    boundary_keep_tokens,
    compaction_settings,
    context_tokens,
    keep_from,
    removable_tokens,
)
from tau.bundled.occ.wire import MECHANISM, OCC_MESSAGE_TYPES, PLAN_TOOL
from tau.bundled.sol_common.refetch import CallHistory
from tau.bundled.sol_common.replay import ReplayHost, Request, Undone
from tau.common.dataclass import dataclass
from tau.extension import CompactionSettings, content_text, entry_message, estimate_tokens, prepare_compaction

__all__ = ["REPLAY", "SUMMARY_TOKENS", "Boundary", "OccRun", "SummaryCall", "boundaries"]

Entry = dict[str, Any]
SUMMARY_TOKENS = economics.MEMO_TOKENS
DEFAULT_WINDOW = 200_000  # a model the catalogue does not know
_SUMMARY = ("[Online Context Compact summary, 1,000 tokens in the replay]\n" + "." * 4000)[:4000]
_UNFINISHED = ("pending", "in_progress")


def _turn_end(branch: list[Entry], index: int) -> int:
    """The last entry of the turn holding ``branch[index]`` (its tool results and custom entries)."""
    while index + 1 < len(branch):
        following = branch[index + 1]
        message = entry_message(following)
        if not (
            following.get("type") == "custom" or (message is not None and message.get("role") == "toolResult")
        ):
            break
        index += 1
    return index


@dataclass(frozen=True)
class Boundary:
    """A completed step: the steps left after it, and the plan call that completed it ("" at a run end)."""

    left: int
    call: str = ""


def _plan_boundaries(branch: list[Entry]) -> dict[int, Boundary]:
    found: dict[int, Boundary] = {}
    statuses: dict[str, str] = {}
    for index, entry in enumerate(branch):
        message = entry_message(entry)
        if message is None or message.get("role") != "toolResult" or message.get("isError"):
            continue
        details = found_details if isinstance(found_details := message.get("details"), dict) else {}
        left: int | None = None
        if message.get("toolName") == "todo" and isinstance(details.get("tasks"), list):
            tasks = [t for t in details["tasks"] if isinstance(t, dict)]
            done = any(
                statuses.get(str(t.get("id"))) in _UNFINISHED and t.get("status") == "completed"
                for t in tasks
            )
            statuses = {str(t.get("id")): str(t.get("status")) for t in tasks}
            if done:
                left = sum(1 for t in tasks if t.get("status") != "completed")
        elif message.get("toolName") == PLAN_TOOL and details.get("boundary"):
            plan = found_plan if isinstance(found_plan := details.get("plan"), list) else []
            left = sum(1 for s in plan if isinstance(s, dict) and s.get("status") != "completed")
        if left is not None:
            end = _turn_end(branch, index)
            # the turn's first boundary is the one OCC decides at (its pending boundary), with the plan
            # as the turn left it
            first = found.get(end)
            found[end] = Boundary(left, first.call if first else str(message.get("toolCallId", "")))
    return found


def _run_ends(branch: list[Entry]) -> dict[int, Boundary]:
    found: dict[int, Boundary] = {}
    for index, entry in enumerate(branch[:-1]):
        message = entry_message(entry)
        if message is None or message.get("role") != "assistant" or message.get("stopReason") != "stop":
            continue
        following = next(
            (entry_message(e) for e in branch[index + 1 :] if entry_message(e) is not None), None
        )
        if following is not None and following.get("role") == "user":
            found[index] = Boundary(1)
    return found


def _boundaries(branch: list[Entry]) -> tuple[dict[str, Boundary], str]:
    plan = _plan_boundaries(branch)
    source = "plan" if plan else "run ends"
    chosen = plan or _run_ends(branch)
    return {str(branch[index].get("id")): boundary for index, boundary in chosen.items()}, source


def boundaries(branch: list[Entry]) -> tuple[dict[str, int], str]:
    """``{id of the boundary turn's last entry: steps left}`` and where they come from."""
    found, source = _boundaries(branch)
    return {entry_id: boundary.left for entry_id, boundary in found.items()}, source


@dataclass(frozen=True)
class SummaryCall:
    """A replayed boundary compaction's summary: ``calls`` requests reading ``prompt`` tokens from the
    cache (the last request), with ``model``; ``archive`` tokens removed."""

    prompt: int
    calls: int
    model: tuple[str, str]
    archive: int


class _Model:
    """A model the catalogue does not know: its name, for the per-model settings."""

    def __init__(self, provider: str, model_id: str) -> None:
        self.provider, self.id = provider, model_id


class OccRun:
    """Online Context Compact across one replay, fed what the live extension observes.

    At each request (``before_provider_request``) it records the context's tokens; at the end of each
    turn it notes the turn's calls (refetches); at a boundary turn's end it decides with the live
    extension's own figures: ``W`` the context tokens of the last request as sent (without its system
    messages, plus the system prompt, or the usage the provider reported for the request plus the
    messages after it when larger: :func:`tau.bundled.occ.estimate.context_tokens`), the window of
    the request's model, ``keepRecentTokens``/``reserveTokens`` from the settings (per model) and the
    ``sol`` cache write/read ratio. A compaction already on the branch right after a boundary it
    decides to compact at (a session OCC ran in) is that decision's; it places one otherwise.
    """

    def __init__(self, branch: list[Entry], host: ReplayHost) -> None:
        self.after_turns, self.source = _boundaries(branch)
        self.host = host
        self.ratio = host.sol_settings().cache_write_read_ratio
        self.state = occ_state.initial_state()
        self.calls = CallHistory()
        self.observed_tokens = ObservedTokens()
        self.reasons: Counter[str] = Counter()
        self.summaries: list[SummaryCall] = []
        self.decisions: list[dict[str, Any]] = []  # decision_data of each decision, as OCC records it
        self.observed: list[dict[str, Any]] = []
        self.system_prompt = ""
        self.model: tuple[str, str] = ("", "")
        self.prompt = 0
        self.turn_end = -1
        self.usage: dict[int, int] = {}  # id(assistant message) -> its tokens as the provider reported them
        self.own: set[int] = set()  # id() of the branch's compactions this run's decisions stand for
        self.debt: tuple[float, float] | None = (
            None  # (debt, repayment) of a compaction decided, not yet seen
        )

    # -- what the live extension observes -------------------------------------------------------

    def request(self, messages: list[dict[str, Any]], work: list[Entry], index: int) -> list[dict[str, Any]]:
        return messages

    def sent(self, request: Request) -> None:
        message = request.work[request.index]["message"]
        self.model = (str(message.get("provider", "")), str(message.get("model", "")))
        self.observed = [m for m in request.messages if m.get("role") != "system"]
        self.system_prompt = _system_prompt(request.messages)
        self.prompt = request.prompt
        if not _never_sent(message):
            reported = self._reported(request.projected, request.work, request.index)
            self.state = occ_state.record_provider_request(self.state, self._context_tokens(reported))
        if message.get("stopReason") not in ("aborted", "error") and request.prompt + request.output > 0:
            self.usage[id(message)] = request.prompt + request.output
        self.turn_end = _turn_end(request.work, request.index)
        self.request_at = request.index

    def after(self, work: list[Entry], index: int) -> Entry | None:
        entry = work[index]
        if entry.get("type") == "compaction":
            self._compacted(entry)
        if index != self.turn_end:
            return None
        message = work[self.request_at]["message"]
        results = _results_after(work, self.request_at)
        boundary = self.after_turns.get(str(entry.get("id")))
        if boundary is not None:
            self.state = occ_state.record_boundary(self.state, self.state["plan"], None)
        self.state = occ_state.note_turn(self.state, self.calls, message, results, self.ratio or 0)
        if boundary is None or message.get("stopReason") in ("error", "aborted"):
            return None
        return self._decide(work, index, boundary, results)

    def _compacted(self, entry: Entry) -> None:
        """``session_compact``: a new epoch; OCC's own compaction carries the debt it decided."""
        self.calls.epoch += 1
        debt = self.debt if id(entry) in self.own else None
        self.debt = None
        self.state = occ_state.record_compaction(self.state, *(debt or (0, 0)))

    # -- the decision ---------------------------------------------------------------------------

    def _reported(self, projected: list[dict[str, Any]], work: list[Entry], index: int) -> int | None:
        """The context tokens the host reports before the request ``work[index]`` (pi's estimate: the
        last reported usage plus the messages after it; None when a compaction came after it)."""
        for position in range(len(projected) - 1, -1, -1):
            usage = self.usage.get(id(projected[position]))
            if usage is not None:
                since = _entry_position(work, projected[position], index)
                if since is None or any(e.get("type") == "compaction" for e in work[since:index]):
                    return None
                return usage + sum(estimate_tokens(m) for m in projected[position + 1 :])
        return None

    def _context_tokens(self, reported: int | None) -> float:
        return context_tokens(self.observed, self.system_prompt, reported, self.observed_tokens)

    def _settings(self) -> Any:
        model = self.host.model(*self.model) or _Model(*self.model)
        return model, compaction_settings(self.host.settings, model)

    def _decide(self, work: list[Entry], index: int, boundary: Boundary, results: list[Any]) -> Entry | None:
        model, compaction = self._settings()
        window = getattr(model, "context_window", None) or DEFAULT_WINDOW
        branch = work[: index + 1]
        message = work[self.request_at]["message"]
        usage = self.usage.get(id(message))
        reported = usage + sum(estimate_tokens(r) for r in results) if usage is not None else None
        write = self._context_tokens(reported)
        keep = self._keep(branch, boundary, compaction.keep_recent_tokens)
        state = self.state
        decision = economics.decide(
            write_tokens=write,
            archive_tokens=removable_tokens(branch, self.observed, keep),
            samples=list(state["completedBoundaryRequestCounts"]),
            remaining_boundaries=boundary.left,
            average_increment=occ_state.average_increment(state),
            context_window=window,
            cache_write_read_ratio=self.ratio,
            prior_compaction_count=state["nativeCompactionCount"],
            requests_since_compaction=occ_state.requests_since_compaction(state),
            debt_tokens=state["cacheDebtTokens"],
            repayment_tokens=state["cacheDebtRepaymentTokens"],
            economics=economics.Economics(window_reserve_tokens=compaction.reserve_tokens),
            floor_tokens=economics.compaction_floor(
                compaction.keep_recent_tokens, window, economics.MEMO_TOKENS
            ),
        )
        self.decisions.append(
            decision_data(
                decision, tool_call_id=boundary.call, remaining_steps=boundary.left, keep_recent_tokens=keep
            )
        )
        if not decision.compact:
            self.reasons[decision.reason] += 1
            return None
        self.debt = (decision.new_debt_tokens, max(0.0, decision.saving_tokens))
        ran = _compaction_after(work, index)
        if ran is not None:  # OCC compacted here when the session ran: that compaction is this one
            self.own.add(id(ran))
            self.reasons[decision.reason] += 1
            return None
        preparation = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=keep))
        if preparation is None:
            self.debt = None
            self.reasons["native_not_compactable"] += 1
            return None
        self.reasons[decision.reason] += 1
        split = preparation.is_split_turn and bool(preparation.turn_prefix_messages)
        calls = 2 if split and preparation.messages_to_summarize else 1
        self.summaries.append(SummaryCall(self.prompt, calls, self.model, int(decision.archive_tokens)))
        placed = {
            "type": "compaction",
            "id": f"occ{len(self.summaries):05d}",
            "parentId": work[index].get("id"),
            "timestamp": work[index].get("timestamp"),
            "summary": _SUMMARY,
            "firstKeptEntryId": preparation.first_kept_entry_id,
            "tokensBefore": int(write),
        }
        self.own.add(id(placed))
        self._compacted(placed)
        return placed

    def _keep(self, branch: list[Entry], boundary: Boundary, keep_recent: int) -> int:
        """What the boundary compaction keeps (OCC's rule): the plan call that completed the step and
        what follows it; at a run end (no plan), the final answer."""
        projection = self.host.projection(branch)
        if boundary.call:
            return boundary_keep_tokens(projection, boundary.call, keep_recent)
        entries = projection["entries"]
        answer = next(
            (
                i
                for i in range(len(entries) - 1, -1, -1)
                if any(m.get("role") == "assistant" for m in entries[i]["messages"])
            ),
            None,
        )
        return keep_from(entries, answer, keep_recent) if answer is not None else keep_recent

    def details(self) -> dict[str, Any]:
        return {
            "boundaries": self.source,
            "boundaryCount": len(self.after_turns),
            "compactions": len(self.summaries),
            "decisions": dict(sorted(self.reasons.items())),
        }


def _never_sent(message: dict[str, Any]) -> bool:
    """An aborted request that never reached the provider (the stopped run's next request, say): no
    ``before_provider_request``, so OCC does not count it."""
    usage = message.get("usage")
    tokens = (
        sum(v for k in ("input", "output", "cacheRead", "cacheWrite") if isinstance(v := usage.get(k), int))
        if isinstance(usage, dict)
        else 0
    )
    return message.get("stopReason") == "aborted" and tokens == 0


def _system_prompt(messages: list[dict[str, Any]]) -> str:
    """The request's system prompt: its newest system message's text ("" without one)."""
    for message in reversed(messages):
        if message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else content_text(content)
    return ""


def _entry_position(work: list[Entry], message: dict[str, Any], before: int) -> int | None:
    """Where the entry holding ``message`` is in ``work[:before]``."""
    for position in range(before - 1, -1, -1):
        if work[position].get("message") is message:
            return position
    return None


def _compaction_after(work: list[Entry], index: int) -> Entry | None:
    """OCC's compaction of the boundary ending at ``work[index]`` when the session already has it: the
    compaction before the next user or model message (an aborted request of the stopped run aside)."""
    for position in range(index + 1, len(work)):
        entry = work[position]
        if entry.get("type") == "compaction":
            return entry if _occ_compaction(work, position) else None
        message = entry_message(entry)
        if message is not None and message.get("role") in ("user", "assistant"):
            if message.get("role") == "assistant" and message.get("stopReason") == "aborted":
                continue
            return None
    return None


def _results_after(work: list[Entry], index: int) -> list[dict[str, Any]]:
    """The tool results that answer the request ``work[index]`` (the messages right after it)."""
    results = []
    for entry in work[index + 1 :]:
        message = entry_message(entry)
        if message is None:
            if entry.get("type") == "custom":
                continue
            break
        if message.get("role") != "toolResult":
            break
        results.append(message)
    return results


def _occ_message(entry: Entry) -> bool:
    return entry.get("type") == "custom_message" and entry.get("customType") in OCC_MESSAGE_TYPES


def _occ_compaction(entries: list[Entry], index: int) -> bool:
    """A compaction that Online Context Compact asked for: its continuation message follows it."""
    if entries[index].get("type") != "compaction":
        return False
    for entry in entries[index + 1 :]:
        if _occ_message(entry):
            return True
        message = entry_message(entry)
        if message is not None and message.get("role") in ("assistant", "user"):
            return False
    return False


def without_occ(branch: list[Entry]) -> tuple[list[Entry], int]:
    """``branch`` without OCC's compactions and continuation messages; how many compactions."""
    out = []
    compactions = 0
    for index, entry in enumerate(branch):
        if _occ_message(entry) or _occ_compaction(branch, index):
            compactions += entry.get("type") == "compaction"
            continue
        out.append(entry)
    return out, compactions


class OnlineContextCompactReplay:
    name = MECHANISM
    undo_rank = 1
    not_measured: str | None = None

    def evidence(self, branch: Sequence[Entry]) -> int:
        """OCC's continuation messages in ``branch``."""
        return sum(1 for entry in branch if _occ_message(entry))

    def undo(self, branch: list[Entry], host: ReplayHost) -> Undone:
        undone, compactions = without_occ(branch)
        return Undone(undone, {"occCompactions": compactions})

    def apply(self, branch: list[Entry]) -> tuple[list[Entry], dict[str, Any]]:
        return branch, {}

    def start(self, branch: list[Entry], host: ReplayHost) -> OccRun:
        return OccRun(branch, host)


REPLAY = OnlineContextCompactReplay()
