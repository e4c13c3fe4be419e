"""The adaptive window: how many unused turns make a result old, per session (issue 25).

A session starts with ``staleAfterTurns``. When its model fetches again something stale packing
packed as old (an ``obs_recall`` of it, or the same ``read`` or ``bash`` call again with nothing
edited since: :mod:`tau.bundled.sol_common.refetch`), packing it was a mistake for this model: the
window widens by half its starting width, up to ``staleMaxTurns``. A recall of a large result
(SoL-Pi's rule) or of a superseded one does not widen it: those go whatever the window.

The calls are noted at each request, before it is planned, from the calls the context scan read
since the previous one; the window is part of what ``tau savings`` replays, so the replay makes the
same decisions as the live extension. A change is persisted as a small ``custom`` entry
(:data:`WINDOW_TYPE`), which restores the window when a session is resumed and which
``tau session info`` shows.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, TypeGuard

from tau.bundled.obspack.projection import ProjectionPlan, is_old_reason
from tau.bundled.obspack.wire import WINDOW_TYPE
from tau.bundled.sol_common.refetch import RECALL_TOOL, CallHistory, call_identity
from tau.common.dataclass import dataclass

__all__ = ["WINDOW_SCHEMA", "WINDOW_TYPE", "Window", "window_entry"]

WINDOW_SCHEMA = "sol-pi-observation-pack-window/1"


@dataclass
class Window:
    """One session's window and what it needs to see a refetch of old packed content."""

    base: int
    cap: int
    turns: int = 0
    refetches: int = 0
    _calls: CallHistory = field(default_factory=CallHistory)
    # The first request's calls as read then: recorded when the history is first needed (a resumed
    # run whose turns make no call never needs it; a long session has tens of thousands).
    _first: list[dict[str, Any]] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)  # tool call ids noted
    _started: bool = False
    _old: set[str] = field(default_factory=set)  # observation ids packed as old
    _old_outputs: dict[str, str] = field(default_factory=dict)  # call identity → its packed newest output

    def __post_init__(self) -> None:
        self.cap = max(self.cap, self.base)
        self.turns = min(max(self.turns or self.base, self.base), self.cap)

    @property
    def step(self) -> int:
        """How much one refetch widens the window: half its starting width."""
        return max(1, (self.base + 1) // 2)

    @property
    def calls(self) -> CallHistory:
        """The session's calls noted so far, in order."""
        if self._first:
            first, self._first = self._first, []
            self._record(first)
        return self._calls

    def restore(self, branch: list[dict[str, Any]]) -> None:
        """Take the window and the refetch count of the newest valid entry on ``branch``."""
        # (a loop over the entries as they are: touching each entry once is the cost; C-level
        # passes over a 50,000-entry branch measured slower)
        for entry in reversed(branch):
            if entry.get("type") != "custom" or entry.get("customType") != WINDOW_TYPE:
                continue
            data = found_data if isinstance(found_data := entry.get("data"), dict) else {}
            turns, refetches = data.get("staleAfterTurns"), data.get("refetches")
            if _count(turns) and _count(refetches):
                self.turns = min(max(turns, self.base), self.cap)
                self.refetches = refetches
                return

    def note_calls(self, calls: list[dict[str, Any]]) -> bool:
        """Note the tool calls made since the previous request; whether the window or the refetch
        count changed. The first request of a session (or of a resumed one) only records."""
        if not self._started:
            self._started = True
            # Nothing packed yet, so none of these is a refetch: they are only recorded, when the
            # history is first needed (:attr:`calls`). Copied now: a block may change after this request.
            self._first = list(map(dict.copy, calls))
            return False
        history = self.calls
        refetched = 0
        for block in calls:
            call_id = str(block.get("id"))
            if call_id in self._seen:
                continue
            self._seen.add(call_id)
            name, arguments = str(block.get("name")), block.get("arguments")
            refetched += self._refetches(name, arguments)
            identity = call_identity(name, arguments)
            if identity is not None:
                self._old_outputs.pop(identity, None)  # this call's output is the newest now
            history.record(name, arguments)
        if not refetched:
            return False
        self.refetches += refetched
        self.turns = min(self.cap, self.turns + self.step)
        return True

    def _record(self, calls: list[dict[str, Any]]) -> None:
        """Record the first request's calls (none is a refetch, none the newest output of a packed one)."""
        seen, history = self._seen, self._calls
        for block in calls:
            call_id = str(block.get("id"))
            if call_id not in seen:
                seen.add(call_id)
                history.record(str(block.get("name")), block.get("arguments"))

    def _refetches(self, name: str, arguments: Any) -> int:
        if name == RECALL_TOOL:
            return int(isinstance(arguments, dict) and arguments.get("id") in self._old)
        identity = call_identity(name, arguments)
        return int(identity in self._old_outputs and self._calls.is_refetch(name, arguments))

    def note_swaps(self, plan: ProjectionPlan) -> None:
        """Remember what a sent plan packed as old: its observation ids, and the calls whose newest
        output it is (a later identical call fetches it again)."""
        for item, obs_id, reason in plan.swapped:
            if not is_old_reason(reason):
                continue
            self._old.add(obs_id)
            call = item.call if item.block is None else None
            identity = call_identity(str(call.get("name")), call.get("arguments")) if call else None
            if identity is not None:
                self._old_outputs[identity] = obs_id

    def entry(self) -> dict[str, Any]:
        return window_entry(self.turns, self.refetches, self.base, self.cap)


def window_entry(turns: int, refetches: int, base: int, cap: int) -> dict[str, Any]:
    """The data of a :data:`WINDOW_TYPE` entry."""
    return {
        "schema": WINDOW_SCHEMA,
        "staleAfterTurns": turns,
        "refetches": refetches,
        "startTurns": base,
        "maxTurns": cap,
    }


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
