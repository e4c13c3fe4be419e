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
from dataclasses import dataclass, field
from typing import Any

from tau.bundled.occ import economics
from tau.bundled.occ import state as occ_state
from tau.bundled.occ.estimate import boundary_keep_tokens, keep_from, removable_tokens
from tau.bundled.occ.wire import MECHANISM, OCC_MESSAGE_TYPES, PLAN_TOOL
from tau.bundled.sol_common.refetch import CallHistory
from tau.bundled.sol_common.replay import ReplayHost, Undone
from tau.extension import CompactionSettings, entry_message, estimate_tokens, prepare_compaction

__all__ = ["REPLAY", "SUMMARY_TOKENS", "OccReplay", "OccRun", "SummaryCall", "boundaries"]

Entry = dict[str, Any]
SUMMARY_TOKENS = 1000
KEEP_RECENT_TOKENS = 20_000
RATIO = 12.5
DEFAULT_WINDOW = 200_000
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


def _plan_boundaries(branch: list[Entry]) -> dict[int, int]:
    found: dict[int, int] = {}
    statuses: dict[str, str] = {}
    for index, entry in enumerate(branch):
        message = entry_message(entry)
        if message is None or message.get("role") != "toolResult" or message.get("isError"):
            continue
        details = found_details if isinstance(found_details := message.get("details"), dict) else {}
        if message.get("toolName") == "todo" and isinstance(details.get("tasks"), list):
            tasks = [t for t in details["tasks"] if isinstance(t, dict)]
            done = any(
                statuses.get(str(t.get("id"))) in _UNFINISHED and t.get("status") == "completed"
                for t in tasks
            )
            statuses = {str(t.get("id")): str(t.get("status")) for t in tasks}
            if done:
                found[_turn_end(branch, index)] = sum(1 for t in tasks if t.get("status") != "completed")
        elif message.get("toolName") == PLAN_TOOL and details.get("boundary"):
            plan = found_plan if isinstance(found_plan := details.get("plan"), list) else []
            found[_turn_end(branch, index)] = sum(
                1 for s in plan if isinstance(s, dict) and s.get("status") != "completed"
            )
    return found


def _run_ends(branch: list[Entry]) -> dict[int, int]:
    found: dict[int, int] = {}
    for index, entry in enumerate(branch[:-1]):
        message = entry_message(entry)
        if message is None or message.get("role") != "assistant" or message.get("stopReason") != "stop":
            continue
        following = next(
            (entry_message(e) for e in branch[index + 1 :] if entry_message(e) is not None), None
        )
        if following is not None and following.get("role") == "user":
            found[index] = 1
    return found


def boundaries(branch: list[Entry]) -> tuple[dict[str, int], str]:
    """``{id of the boundary turn's last entry: steps left}`` and where they come from."""
    plan = _plan_boundaries(branch)
    source = "plan" if plan else "run ends"
    chosen = plan or _run_ends(branch)
    return {str(branch[index].get("id")): left for index, left in chosen.items()}, source


@dataclass(frozen=True)
class SummaryCall:
    """A replayed boundary compaction's summary: ``calls`` requests reading ``prompt`` tokens from the
    cache (the last request), with ``model``; ``archive`` tokens removed."""

    prompt: int
    calls: int
    model: tuple[str, str]
    archive: int


@dataclass
class OccReplay:
    """OCC's state across one replay, and what it decided."""

    after: dict[str, int]
    source: str
    host: ReplayHost
    window: int = DEFAULT_WINDOW
    state: dict[str, Any] = field(default_factory=occ_state.initial_state)
    reasons: Counter[str] = field(default_factory=Counter)
    summaries: list[SummaryCall] = field(default_factory=list)
    last_prompt: int = 0
    calls: CallHistory = field(default_factory=CallHistory)

    @classmethod
    def for_branch(cls, branch: list[Entry], host: ReplayHost) -> OccReplay:
        after, source = boundaries(branch)
        first = next((m for e in branch if (m := entry_message(e, "assistant")) is not None), None)
        model = host.model(str(first.get("provider", "")), str(first.get("model", ""))) if first else None
        return cls(after, source, host, getattr(model, "context_window", None) or DEFAULT_WINDOW)

    def request(self, tokens: int) -> None:
        self.last_prompt = tokens
        self.state = occ_state.record_provider_request(self.state, tokens)

    def turn(self, message: dict[str, Any], results: list[dict[str, Any]]) -> None:
        """The request's calls and their results: a refetch request is counted as OCC counts it."""
        self.state = occ_state.note_turn(self.state, self.calls, message, results, RATIO)

    def compacted(self) -> None:
        """A compaction on the branch (the host's, or one this replay placed): a new epoch."""
        self.calls.epoch += 1

    def at(
        self, work: list[Entry], index: int, observed: list[dict[str, Any]], model: tuple[str, str]
    ) -> Entry | None:
        """The compaction to place after ``work[index]`` when it ends a boundary turn and compacting pays."""
        left = self.after.get(str(work[index].get("id")))
        if left is None:
            return None
        self.state = occ_state.record_boundary(self.state, self.state["plan"], None)
        branch = work[: index + 1]
        write = sum(estimate_tokens(message) for message in observed)
        keep = _boundary_keep(branch, self.source, self.host)
        archive = removable_tokens(branch, observed, keep)
        decision = economics.decide(
            write_tokens=write,
            archive_tokens=archive,
            samples=self.state["completedBoundaryRequestCounts"],
            remaining_boundaries=left,
            average_increment=occ_state.average_increment(self.state),
            context_window=self.window,
            cache_write_read_ratio=RATIO,
            prior_compaction_count=self.state["nativeCompactionCount"],
            requests_since_compaction=occ_state.requests_since_compaction(self.state),
            debt_tokens=self.state["cacheDebtTokens"],
            repayment_tokens=self.state["cacheDebtRepaymentTokens"],
            memo_tokens=SUMMARY_TOKENS,
            floor_tokens=economics.compaction_floor(KEEP_RECENT_TOKENS, self.window, SUMMARY_TOKENS),
        )
        preparation = (
            prepare_compaction(branch, CompactionSettings(keep_recent_tokens=keep))
            if decision.compact
            else None
        )
        if preparation is None:
            self.reasons[decision.reason if not decision.compact else "native_not_compactable"] += 1
            return None
        kept = preparation.first_kept_entry_id
        self.reasons[decision.reason] += 1
        self.state = occ_state.record_compaction(
            self.state, decision.new_debt_tokens, max(0.0, archive - SUMMARY_TOKENS)
        )
        self.compacted()
        split = preparation.is_split_turn and bool(preparation.turn_prefix_messages)
        calls = 2 if split and preparation.messages_to_summarize else 1
        self.summaries.append(SummaryCall(self.last_prompt, calls, model, archive))
        return {
            "type": "compaction",
            "id": f"occ{len(self.summaries):05d}",
            "parentId": work[index].get("id"),
            "timestamp": work[index].get("timestamp"),
            "summary": _SUMMARY,
            "firstKeptEntryId": kept,
            "tokensBefore": int(write),
        }


def _boundary_keep(branch: list[Entry], source: str, host: ReplayHost) -> int:
    """What the boundary compaction keeps (OCC's rule): the message that completed the step and what
    follows it; at a run end (no plan), the final answer."""
    projection = host.projection(branch)
    if source == "plan":
        result = next(
            (
                m
                for e in reversed(branch)
                if (m := entry_message(e)) is not None and m.get("role") == "toolResult"
            ),
            None,
        )
        call = str(result.get("toolCallId")) if result is not None else ""
        return boundary_keep_tokens(projection, call, KEEP_RECENT_TOKENS)
    entries = projection["entries"]
    answer = next(
        (
            i
            for i in range(len(entries) - 1, -1, -1)
            if any(m.get("role") == "assistant" for m in entries[i]["messages"])
        ),
        None,
    )
    return keep_from(entries, answer, KEEP_RECENT_TOKENS) if answer is not None else KEEP_RECENT_TOKENS


class OccRun:
    """:class:`OccReplay` driven by the replay protocol: it observes every request as sent (after
    ObservationPack) and places its compactions after boundary turns."""

    def __init__(self, branch: list[Entry], host: ReplayHost) -> None:
        self.occ = OccReplay.for_branch(branch, host)
        self.last: list[dict[str, Any]] = []
        self.last_at = 0
        self.model: tuple[str, str] = ("", "")

    @property
    def summaries(self) -> list[SummaryCall]:
        return self.occ.summaries

    def request(self, messages: list[dict[str, Any]], work: list[Entry], index: int) -> list[dict[str, Any]]:
        return messages

    def sent(self, work: list[Entry], index: int, prompt: int, messages: list[dict[str, Any]]) -> None:
        message = work[index]["message"]
        self.model = (str(message.get("provider", "")), str(message.get("model", "")))
        self.last, self.last_at = messages, index
        self.occ.request(prompt)
        self.occ.turn(message, _results_after(work, index))

    def after(self, work: list[Entry], index: int) -> Entry | None:
        if work[index].get("type") == "compaction":
            self.occ.compacted()
        observed = self.last + [
            m for e in work[self.last_at : index + 1] if (m := entry_message(e)) is not None
        ]
        return self.occ.at(work, index, observed, self.model)

    def details(self) -> dict[str, Any]:
        occ = self.occ
        return {
            "boundaries": occ.source,
            "boundaryCount": len(occ.after),
            "compactions": len(occ.summaries),
            "decisions": dict(sorted(occ.reasons.items())),
        }


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
