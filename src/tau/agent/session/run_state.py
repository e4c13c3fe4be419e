"""What a run-time session is doing: a run, a stop asked of it, and the work in progress besides.

:class:`RunState` owns whether a session-level run is active, whether an abort was requested, the
turn counter and the last turn's outcome, the prompts and actions held while the ``agent_settled``
handlers run, and the abortable operations outside a run (a manual or automatic compaction, a branch
summary). The session is idle when neither a run nor such an operation goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from tau.llm.stream import AbortSignal

__all__ = ["Operation", "RunState"]

Operation = Literal["manual_compaction", "auto_compaction", "branch_summary"]


class RunState:
    """The run and operation state of one session.

    Args:
        abort_agent: aborts the agent's current low-level run (its request and tools).
    """

    def __init__(self, abort_agent: Callable[[], None]) -> None:
        self.active = False
        self.abort_requested = False
        self.turn_index = 0
        self.last_outcome = "completed"  # of the last turn: completed, aborted or error
        self.last_assistant: dict[str, Any] | None = None  # saved since the last post-run decision
        self.prompt_preflight = 0  # prompts between their input handlers and their run
        self.emitting_settled = False
        self.deferred_settled: list[Callable[[], Awaitable[Any]]] = []  # work asked of settled handlers
        self.deferred_prompts = 0  # human prompts among them
        self.announced_prompts = 0  # further human prompts the mode will send (``tau -p P1 P2``)
        self._abort_agent = abort_agent
        self._idle = asyncio.Event()
        self._idle.set()
        self._operations: dict[Operation, AbortSignal] = {}

    # -- the run -----------------------------------------------------------------------------

    def begin(self) -> None:
        self.active = True
        self.abort_requested = False
        self._idle.clear()

    def stop(self) -> bool:
        """Stop a running run (once); whether one was running."""
        if self.active and not self.abort_requested:
            self.abort_requested = True
            self._abort_agent()
        return self.active

    def has_waiting_prompts(self) -> bool:
        return bool(self.deferred_prompts or self.announced_prompts)

    # -- operations besides a run ------------------------------------------------------------

    def start(self, operation: Operation) -> AbortSignal:
        """An abortable operation begins; its signal."""
        self._operations[operation] = signal = AbortSignal()
        return signal

    def end(self, operation: Operation, signal: AbortSignal | None = None) -> None:
        """The operation (the one of ``signal``, when given) is over; idle waiters wake when all are."""
        if signal is None or self._operations.get(operation) is signal:
            self._operations.pop(operation, None)

    def running(self, operation: Operation) -> bool:
        return operation in self._operations

    @property
    def is_compacting(self) -> bool:
        return bool(self._operations)

    def abort_operations(self) -> None:
        for signal in list(self._operations.values()):
            signal.abort()

    # -- idleness ----------------------------------------------------------------------------

    def is_idle(self) -> bool:
        return not self.active and not self._operations

    def mark_idle_if_idle(self) -> None:
        if self.is_idle():
            self._idle.set()

    async def wait_for_idle(self) -> None:
        while not self.is_idle():
            self._idle.clear()
            await self._idle.wait()
