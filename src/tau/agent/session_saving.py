"""When the session file cannot be written (a full disk, a read-only file): stop, keep, say so.

The session store keeps an entry it could not write in memory, unsaved, and writes it with the next
successful write (:class:`~tau.session.errors.SessionWriteError`). During a run the session does
not let that error break the agent loop: the run is aborted at once, so no further tool runs with
its results unsaved, and it closes as an aborted run does (``turn_end``, ``agent_end``,
``agent_settled``); then the run's caller gets the error, which names the file and says the session
is no longer being saved. Until the unsaved entries can be written, a new run is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.session.errors import SessionWriteError

__all__ = ["SavingMixin"]


class SavingMixin:
    """Write failures of :class:`~tau.agent.session.AgentSession`'s run-time appends."""

    _save_failure: SessionWriteError | None

    def _save(self: Any, append: Callable[..., str], *args: Any) -> str | None:
        """``append(*args)`` on the session store; during a run a failed write stops the run instead of
        raising (outside a run it raises to the caller).

        Returns the entry's id (the entry is in the session, written or not).
        """
        try:
            return append(*args)
        except SessionWriteError as exc:
            if not self._run_active:
                raise
            self._note_save_failure(exc)
            return exc.entry_id

    def _note_save_failure(self: Any, exc: SessionWriteError) -> None:
        if self._save_failure is None:
            self._save_failure = exc
        if self._run_active and not self._abort_requested:
            self._abort_requested = True
            self.agent.abort()

    def _raise_save_failure(self: Any) -> None:
        """After a run: the write failure that stopped it, with the count of entries still unsaved."""
        failure, self._save_failure = self._save_failure, None
        if failure is None:
            return
        unsaved = self._session_manager.unsaved_count
        if unsaved in (0, failure.unsaved):
            raise failure
        raise SessionWriteError(failure.path, failure.cause, unsaved) from failure.cause

    def _refuse_run_while_unsaved(self: Any) -> None:
        """A new run would add to a session that is not being saved: write what waits, or refuse."""
        manager = self._session_manager
        if manager.unsaved_count == 0:
            return
        try:
            manager.save_unsaved()
        except SessionWriteError as exc:
            raise SessionWriteError(
                exc.path, exc.cause, exc.unsaved, refusing="run the prompt"
            ) from exc.cause
