"""The loop's state: anchor, rounds, stalls, pause and stop reasons, and the ``/todoloop`` lines.

Everything here is in memory and resets with the process; a session file shows which continuations
happened, never the counters or why the loop stopped (the seed's item 14).

At a settle (the run would otherwise end) :meth:`LoopState.settle` decides, in this order:

1. the anchor moved (a new human message, or another branch): rounds, stalls and latched stops
   re-arm;
2. paused: no continuation, nothing recorded;
3. a latched stop (round cap, stall, block) holds until the anchor moves;
4. no list → ``no list``; no open task → ``all tasks closed`` (both describe this settle only and
   are evaluated again at the next one, like ``aborted``);
5. ``maxRounds`` continuations already made for this anchor → ``round cap (N)``, latched;
6. a stall: the task snapshot equals the one the previous continuation was made with (the round it
   started changed nothing). The ``maxStalls``-th stall in a row stops the loop:
   ``stalled (N rounds without progress)``, latched; a change resets the count;
7. otherwise continue: one more round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tau.bundled.todo_loop.branch import Anchor, Scan
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "ABORTED",
    "ALL_CLOSED",
    "DEFAULT_MAX_STALLS",
    "NO_LIST",
    "Limits",
    "LoopState",
    "blocked",
    "round_cap",
    "stalled",
]

NO_LIST = "no list"
ALL_CLOSED = "all tasks closed"
ABORTED = "aborted"
DEFAULT_MAX_STALLS = 3
ANCHOR_CHARS = 60
_UNSET: Any = object()
_SPACES = lazy_pattern(r"\s+")


def round_cap(max_rounds: int) -> str:
    return f"round cap ({max_rounds})"


def stalled(max_stalls: int) -> str:
    return f"stalled ({max_stalls} rounds without progress)"


def blocked(reason: str) -> str:
    return f"blocked ({one_line(reason)})"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) as one space, trimmed."""
    return _SPACES.sub(" ", text).strip()


def _integer(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


@dataclass(frozen=True)
class Limits:
    """``todoLoop.maxRounds`` (``None``: no cap) and ``todoLoop.maxStalls`` from the settings."""

    max_rounds: int | None = None
    max_stalls: int = DEFAULT_MAX_STALLS

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> tuple[Limits, list[str]]:
        """The limits of the effective settings, and a message for each value that was ignored."""
        block = (settings or {}).get("todoLoop")
        if block is None:
            return cls(), []
        if not isinstance(block, Mapping):
            return cls(), [f"settings.json: todoLoop must be an object, got {block!r}; using the defaults"]
        problems = []
        max_rounds = block.get("maxRounds")
        if max_rounds is not None and not _integer(max_rounds, 0):
            problems.append(
                f"settings.json: todoLoop.maxRounds must be a non-negative integer or null, "
                f"got {max_rounds!r}; using no cap"
            )
            max_rounds = None
        max_stalls = block.get("maxStalls", DEFAULT_MAX_STALLS)
        if not _integer(max_stalls, 1):
            problems.append(
                f"settings.json: todoLoop.maxStalls must be a positive integer, "
                f"got {max_stalls!r}; using {DEFAULT_MAX_STALLS}"
            )
            max_stalls = DEFAULT_MAX_STALLS
        return cls(max_rounds, max_stalls), problems


class LoopState:
    """The in-memory loop: one per extension instance (per process)."""

    def __init__(self) -> None:
        self.paused = False
        self.anchor_id: Any = _UNSET
        self.rounds = 0
        self.stalls = 0
        self.latched: str | None = None  # round cap, stall or block: holds until the anchor moves
        self.last_stop: str | None = None  # no list, all tasks closed, aborted: the last settle only
        self._last_snapshot: Any = None

    # -- anchor ------------------------------------------------------------------------------

    def observe_anchor(self, anchor: Anchor | None) -> None:
        """Re-arm the budget when the newest plain human message is another one than before."""
        anchor_id = anchor.entry_id if anchor is not None else None
        if anchor_id == self.anchor_id:
            return
        self.anchor_id = anchor_id
        self.rounds = 0
        self.stalls = 0
        self.latched = None
        self._last_snapshot = None

    # -- events ------------------------------------------------------------------------------

    def settle(self, scan: Scan, limits: Limits) -> bool:
        """The run would end now: ``True`` when it is continued (the round is counted)."""
        self.observe_anchor(scan.anchor)
        if self.paused or self.latched is not None:
            return False
        tasks = scan.tasks
        if tasks is None or tasks.open_count == 0:
            self.last_stop = NO_LIST if tasks is None else ALL_CLOSED
            return False
        if limits.max_rounds is not None and self.rounds >= limits.max_rounds:
            self.latched = round_cap(limits.max_rounds)
            return False
        snapshot = tasks.snapshot
        stall = self._last_snapshot is not None and snapshot == self._last_snapshot
        self.stalls = self.stalls + 1 if stall else 0
        if self.stalls >= limits.max_stalls:
            self.latched = stalled(limits.max_stalls)
            return False
        self.rounds += 1
        self._last_snapshot = snapshot
        self.last_stop = None
        return True

    def aborted(self) -> None:
        """The run was aborted: not continued, and evaluated again at the next settle."""
        self.last_stop = ABORTED

    def block(self, reason: str, anchor: Anchor | None) -> None:
        """``todo_loop_block``: no continuation until the next human message."""
        self.observe_anchor(anchor)
        self.latched = blocked(reason)

    # -- status ------------------------------------------------------------------------------

    def state_line(self, *, disabled: bool) -> str:
        if disabled:
            state = "disabled (kill switch)"
        elif self.paused:
            state = "paused"
        elif self.latched is not None:
            state = f"stopped: {self.latched}"
        elif self.last_stop is not None:
            state = f"stopped: {self.last_stop}"
        else:
            state = "running"
        return f"state: {state}"

    def status_lines(self, scan: Scan, limits: Limits, *, disabled: bool) -> list[str]:
        """The lines of ``/todoloop`` for the branch as it is now."""
        self.observe_anchor(scan.anchor)
        anchor = scan.anchor
        if anchor is None:
            anchor_line = "anchor: none"
        else:
            anchor_line = f'anchor: {anchor.entry_id} "{one_line(anchor.text)[:ANCHOR_CHARS].rstrip()}"'
        cap = "∞" if limits.max_rounds is None else str(limits.max_rounds)
        tasks = scan.tasks
        if tasks is None:
            tasks_line = "tasks: 0/0 (source: none)"
        else:
            tasks_line = f"tasks: {tasks.open_count}/{tasks.total} (source: {tasks.source})"
        return [
            self.state_line(disabled=disabled),
            anchor_line,
            f"rounds: {self.rounds}/{cap}",
            f"stalls: {self.stalls}/{limits.max_stalls}",
            tasks_line,
        ]
