"""The loop's state: anchor, rounds, stalls, pause and stop reasons, and the ``/todoloop`` lines.

Everything here is in memory and resets with the process; a session file shows which continuations
happened, never the counters or why the loop stopped (the seed's item 14).

At a settle (the run would otherwise end) :meth:`LoopState.settle` decides, in this order:

1. the anchor moved (a new human message, or another branch): rounds, stalls and latched stops
   re-arm;
2. paused: no continuation;
3. a latched stop (round cap, stall, block) holds until the anchor moves;
4. ``todo`` is not an active tool, or its storage is unavailable, or there is no list, or no open
   task: no continuation (these describe this settle only and are evaluated again at the next one,
   like ``aborted``);
5. a human message arrived during this run (a steer or a follow-up): the human is in the
   conversation, so this run is not continued;
6. ``maxRounds`` continuations already made for this anchor → ``round cap (N)``, latched;
7. a stall: the previous continuation was followed by no progress (no task it saw open was closed,
   and no tool other than ``todo`` succeeded). The ``maxStalls``-th stall in a row stops the loop:
   ``stalled (N rounds without progress)``, latched; progress resets the count;
8. otherwise continue: one more round.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tau.bundled.todo_loop.branch import Anchor
from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

if TYPE_CHECKING:
    from tau.bundled.todo_loop.tasks import TaskList

__all__ = [
    "ABORTED",
    "ALL_CLOSED",
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_MAX_STALLS",
    "HUMAN_IN_RUN",
    "NOT_ACTIVE",
    "NO_LIST",
    "PAUSED",
    "TODO_TOOL",
    "Limits",
    "LoopState",
    "Observation",
    "blocked",
    "round_cap",
    "stalled",
    "unavailable",
]

NO_LIST = "no list"
ALL_CLOSED = "all tasks closed"
ABORTED = "aborted"
PAUSED = "paused"
NOT_ACTIVE = "todo is not an active tool"
HUMAN_IN_RUN = "a human message arrived during the run"
TODO_TOOL = "todo"
DEFAULT_MAX_ROUNDS = 25
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


def unavailable(reason: str) -> str:
    return f"todo unavailable ({one_line(reason)})"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) as one space, trimmed."""
    return _SPACES.sub(" ", text).strip()


def _shown(value: Any) -> str:
    """A settings value as JSON writes it (``"x"``, ``true``), as the host's warnings quote it."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:59] + "…"


def _integer(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


@dataclass(frozen=True)
class Limits:
    """``todoLoop.maxRounds`` (``None``: no cap) and ``todoLoop.maxStalls`` from the settings."""

    max_rounds: int | None = DEFAULT_MAX_ROUNDS
    max_stalls: int = DEFAULT_MAX_STALLS

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any] | None, source: str = "settings.json"
    ) -> tuple[Limits, list[str]]:
        """The limits of ``settings``, and a message for each value that was ignored.

        ``null`` is the same as leaving a key out (the host's rule); ``maxRounds: 0`` means no cap.
        Each message is one line naming ``source`` (the file that holds the value), the key and what
        it must be, as the host's settings warnings do.
        """
        block = (settings or {}).get("todoLoop")
        if block is None:
            return cls(), []
        if not isinstance(block, Mapping):
            return cls(), [f"{source}: todoLoop must be an object, got {_shown(block)}; using the defaults"]
        problems = []
        max_rounds = block.get("maxRounds")
        if max_rounds is None:
            max_rounds = DEFAULT_MAX_ROUNDS
        elif not _integer(max_rounds, 0):
            problems.append(
                f"{source}: todoLoop.maxRounds must be a non-negative integer (0: no cap), "
                f"got {_shown(max_rounds)}; using the default {DEFAULT_MAX_ROUNDS}"
            )
            max_rounds = DEFAULT_MAX_ROUNDS
        max_stalls = block.get("maxStalls")
        if max_stalls is None:
            max_stalls = DEFAULT_MAX_STALLS
        elif not _integer(max_stalls, 1):
            problems.append(
                f"{source}: todoLoop.maxStalls must be a positive integer, "
                f"got {_shown(max_stalls)}; using the default {DEFAULT_MAX_STALLS}"
            )
            max_stalls = DEFAULT_MAX_STALLS
        return cls(max_rounds or None, max_stalls), problems

    @property
    def cap_text(self) -> str:
        return "∞" if self.max_rounds is None else str(self.max_rounds)


@dataclass(frozen=True)
class Observation:
    """What the loop sees at a settle.

    Attributes:
        tasks: The list, as ``todo`` itself reads it (or, without the bundled ``todo``, from the
            branch's other sources); ``None`` when there is none.
        anchor: The newest plain human message on the branch.
        todo_active: Whether a ``todo`` tool is among the active tools (the model can see the list).
        unavailable: Why ``todo``'s storage cannot vouch for the list, or ``None``.
    """

    tasks: TaskList | None
    anchor: Anchor | None
    todo_active: bool = True
    unavailable: str | None = None

    @property
    def open_count(self) -> int | None:
        """Open tasks, or ``None`` when the list cannot be read."""
        return self.tasks.open_count if self.tasks is not None and self.unavailable is None else None


def _key(task: Any) -> Any:
    return task.id if task.id is not None else ("text", task.text)


class LoopState:
    """The in-memory loop: one per extension instance (per process)."""

    def __init__(self) -> None:
        self.paused = False
        self.anchor_id: Any = _UNSET
        self.rounds = 0
        self.stalls = 0
        self.latched: str | None = None  # round cap, stall or block: holds until the anchor moves
        self.last_stop: str | None = None  # every other reason: the last settle only
        self.worked = False  # a tool other than todo succeeded since the last continuation
        self.human_in_run = False  # a human message arrived during the current run
        self._expects_prompt = False
        self._open_at_last: frozenset[Any] = frozenset()

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
        self._open_at_last = frozenset()

    # -- what happens between settles --------------------------------------------------------

    def start_run(self, *, prompted: bool) -> None:
        """A session-level run starts; ``prompted``: with a human prompt (its message comes next)."""
        self.human_in_run = False
        self._expects_prompt = prompted

    def saw_human(self) -> None:
        """A plain human message was recorded: the run's prompt, or one that arrived during the run."""
        if self._expects_prompt:
            self._expects_prompt = False
        else:
            self.human_in_run = True

    def end_run(self) -> None:
        self.human_in_run = False
        self._expects_prompt = False

    def saw_tool(self, name: str, is_error: bool) -> None:
        """A tool call ended: successful work other than ``todo`` is progress."""
        if not is_error and name != TODO_TOOL:
            self.worked = True

    # -- events ------------------------------------------------------------------------------

    def reason_now(self, seen: Observation) -> str | None:
        """Why a settle with ``seen`` cannot continue whatever the counters say, or ``None``."""
        if not seen.todo_active:
            return NOT_ACTIVE
        if seen.unavailable is not None:
            return unavailable(seen.unavailable)
        if seen.tasks is None:
            return NO_LIST
        if seen.tasks.open_count == 0:
            return ALL_CLOSED
        return None

    def settle(self, seen: Observation, limits: Limits) -> bool:
        """The run would end now: ``True`` when it is continued (the round is counted)."""
        self.observe_anchor(seen.anchor)
        if self.paused:
            self.last_stop = PAUSED
            return False
        if self.latched is not None:
            return False
        reason = self.reason_now(seen) or (HUMAN_IN_RUN if self.human_in_run else None)
        if reason is not None:
            self.last_stop = reason
            return False
        assert seen.tasks is not None
        if limits.max_rounds is not None and self.rounds >= limits.max_rounds:
            self.latched = round_cap(limits.max_rounds)
            return False
        if self.rounds > 0:
            self.stalls = 0 if self._progressed(seen.tasks) else self.stalls + 1
            if self.stalls >= limits.max_stalls:
                self.latched = stalled(limits.max_stalls)
                return False
        self.rounds += 1
        self._open_at_last = frozenset(_key(task) for task in seen.tasks.tasks if task.is_open)
        self.worked = False
        self.last_stop = None
        return True

    def _progressed(self, tasks: TaskList) -> bool:
        """Since the last continuation: a task it saw open is closed now, or other tools did work."""
        closed = any(_key(task) in self._open_at_last and not task.is_open for task in tasks.tasks)
        return closed or self.worked

    def aborted(self) -> None:
        """The run was aborted: not continued, and evaluated again at the next settle."""
        self.last_stop = ABORTED

    def block(self, reason: str, anchor: Anchor | None) -> None:
        """``todo_loop_block``: no continuation until the next human message."""
        self.observe_anchor(anchor)
        self.latched = blocked(reason)

    @property
    def stop_reason(self) -> str | None:
        """Why the last settle did not continue (``None`` after a continuation)."""
        return self.latched if self.latched is not None else self.last_stop

    # -- status ------------------------------------------------------------------------------

    def state_line(self, seen: Observation | None = None, *, disabled: bool) -> str:
        """``state: …``. Stops that describe a settle are checked against ``seen``, the branch as it
        is now, so the line never contradicts the ``tasks`` line beside it."""
        if disabled:
            state = "disabled (kill switch)"
        elif self.paused:
            state = PAUSED
        elif self.latched is not None:
            state = f"stopped: {self.latched}"
        elif seen is not None and (now := self.reason_now(seen)) is not None:
            state = f"stopped: {now}"
        elif self.last_stop in (ABORTED, HUMAN_IN_RUN) or (seen is None and self.last_stop is not None):
            state = f"stopped: {self.last_stop}"
        else:
            state = "running"
        return f"state: {state}"

    def status_lines(self, seen: Observation, limits: Limits, *, disabled: bool) -> list[str]:
        """The lines of ``/todoloop`` for the branch as it is now."""
        self.observe_anchor(seen.anchor)
        anchor = seen.anchor
        if anchor is None:
            anchor_line = "anchor: none"
        else:
            anchor_line = f'anchor: {anchor.entry_id} "{one_line(anchor.text)[:ANCHOR_CHARS].rstrip()}"'
        tasks = seen.tasks
        if seen.unavailable is not None:
            tasks_line = "tasks: unavailable (source: pi-todo:state)"
        elif tasks is None:
            tasks_line = "tasks: 0/0 (source: none)"
        else:
            # "open", so it is not read as the footer's count of tasks done (issue 32).
            tasks_line = f"tasks: {tasks.open_count}/{tasks.total} open (source: {tasks.source})"
        return [
            self.state_line(seen, disabled=disabled),
            anchor_line,
            f"rounds: {self.rounds}/{limits.cap_text}",
            f"stalls: {self.stalls}/{limits.max_stalls}",
            tasks_line,
        ]
