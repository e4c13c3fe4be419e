"""The session store of a run-time session: the session file, its projection, and which entry holds which message.

:class:`SessionStore` owns the :class:`~tau.session.manager.SessionManager` (swapped by a resume, a
fork keeps it), the working directory the file names, the :class:`ProjectionCache` every request
starts from, the index from message objects to their entry ids, and the write failure that stopped
the current run.

When the session file cannot be written (a full disk, a read-only file) the manager keeps the entry
in memory, unsaved, and writes it with the next successful write
(:class:`~tau.session.errors.SessionWriteError`). During a run that error does not break the agent
loop: the run is stopped at once, so no further tool runs with its results unsaved, and it closes as
an aborted run does; then the run's caller gets the error, which names the file and says the session
is no longer being saved. Until the unsaved entries can be written, a new run is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.agent.agent import AgentState
from tau.agent.session.projection_cache import ProjectionCache
from tau.llm.messages import tool_calls
from tau.session.errors import SessionWriteError
from tau.session.manager import SessionManager

__all__ = ["SessionStore"]

_PERSISTED_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


def _outside_run() -> bool:
    return False


class SessionStore:
    """The session file and what is derived from it, for one run-time session.

    Args:
        manager: the session file.
        cwd: the working directory (default: the one the file names).
        emit: where ``entry_appended`` events go.
    """

    def __init__(
        self, manager: SessionManager, cwd: str | None, emit: Callable[[dict[str, Any]], None]
    ) -> None:
        self.manager = manager
        self.cwd = cwd if cwd is not None else manager.get_cwd()
        self.projection = ProjectionCache(manager)
        self.save_failure: SessionWriteError | None = None
        self._emit = emit
        self._transcript: AgentState | None = None
        self._stop_run: Callable[[], bool] = _outside_run
        # id(message) -> (message, entry id); holding the message keeps its id() from being reused.
        self._entry_ids: dict[int, tuple[Any, str]] = {}
        self._remembered: tuple[Any, int] = (None, 0)  # the projection whose entries are in _entry_ids
        self._unremembered: dict[str, Any] | None = None  # the projection refreshed from, not remembered yet
        self._remembered_late: set[int] = set()  # ids remembered since that refresh

    def attach(self, transcript: AgentState, stop_run: Callable[[], bool]) -> None:
        """The agent state whose messages follow the projection, and how a write failure stops a run
        (``stop_run()`` stops the running run and says whether one was running)."""
        self._transcript = transcript
        self._stop_run = stop_run

    # -- the file ----------------------------------------------------------------------------

    def adopt(self, manager: SessionManager) -> None:
        """Continue in another session file (a resume): its projection and working directory."""
        self.manager = manager
        self.projection = ProjectionCache(manager)
        self.cwd = manager.get_cwd()

    def reset(self) -> None:
        """The file now holds another session (new, fork, resume): forget what was derived."""
        self.projection.invalidate()
        self._entry_ids.clear()
        self._remembered = (None, 0)
        self._unremembered, self._remembered_late = None, set()

    def save(self, append: Callable[..., str], *args: Any) -> str | None:
        """``append(*args)`` on the manager; during a run a failed write stops the run instead of
        raising (outside a run it raises to the caller).

        Returns the entry's id (the entry is in the session, written or not).
        """
        try:
            return append(*args)
        except SessionWriteError as exc:
            if not self.absorb_failure(exc):
                raise
            return exc.entry_id

    def absorb_failure(self, exc: SessionWriteError) -> bool:
        """During a run: keep the failure for the run's caller and stop the run; False outside one."""
        if not self._stop_run():
            return False
        if self.save_failure is None:
            self.save_failure = exc
        return True

    def raise_save_failure(self) -> None:
        """After a run: the write failure that stopped it, with the count of entries still unsaved."""
        failure, self.save_failure = self.save_failure, None
        if failure is None:
            return
        unsaved = self.manager.unsaved_count
        if unsaved in (0, failure.unsaved):
            raise failure
        raise SessionWriteError(failure.path, failure.cause, unsaved) from failure.cause

    def refuse_run_while_unsaved(self) -> None:
        """A new run would add to a session that is not being saved: write what waits, or refuse."""
        manager = self.manager
        if manager.unsaved_count == 0:
            return
        try:
            manager.save_unsaved()
        except SessionWriteError as exc:
            raise SessionWriteError(
                exc.path, exc.cause, exc.unsaved, refusing="run the prompt"
            ) from exc.cause

    def save_message(self, message: dict[str, Any]) -> str | None:
        """Append a finished message (system, user, assistant, toolResult, custom); its entry id."""
        role = message.get("role")
        entry_id = None
        manager = self.manager
        if role == "custom":
            entry_id = self.save(
                manager.append_custom_message_entry,
                message["customType"],
                message["content"],
                message.get("display", True),
                message.get("details"),
            )
        elif role in _PERSISTED_ROLES:
            entry_id = self.save(manager.append_message, message)
        if entry_id is not None:
            self.remember_entry(message, entry_id)
        return entry_id

    def append_custom_messages(self, messages: list[dict[str, Any]]) -> None:
        """Append extension custom messages to the transcript, each announced as it lands."""
        for message in messages:
            self.save(
                self.manager.append_custom_message_entry,
                message["customType"],
                message["content"],
                message["display"],
                message.get("details"),
            )
            self.refresh()
            self._emit({"type": "message_start", "message": message})
            self._emit({"type": "message_end", "message": message})

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Extension state (a ``custom`` entry, never sent to the model), announced with ``entry_appended``."""
        entry_id = self.manager.append_custom_entry(custom_type, data)
        entry = self.manager.get_entry(entry_id)
        if entry is not None:
            self._emit({"type": "entry_appended", "entry": entry})
        return entry_id

    # -- the transcript ----------------------------------------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The agent's transcript (the projection's messages since the last refresh)."""
        assert self._transcript is not None, "SessionStore.attach was not called"
        return self._transcript.messages

    def refresh(self) -> dict[str, Any]:
        """Make the agent's transcript the session's projection again; the projection."""
        projection = self.projection.get()
        # The entry id of each projected message is remembered when one is first asked for that the
        # messages appended since (remembered as they were saved) do not answer: a resumed session's
        # run asks only about its own messages.
        if self._unremembered is not None and self._unremembered is not projection:
            self._remember_projection()
        self._unremembered = projection
        assert self._transcript is not None, "SessionStore.attach was not called"
        self._transcript.messages = projection["messages"]
        return projection

    # -- the entry index ---------------------------------------------------------------------

    def remember_entry(self, message: Any, entry_id: str) -> None:
        self._entry_ids[id(message)] = (message, entry_id)
        if self._unremembered is not None:
            self._remembered_late.add(id(message))

    def entry_id_of(self, message: Any) -> str | None:
        """The id of the entry that holds this very message object, or ``None``."""
        found = self._entry_ids.get(id(message))
        if found is None and self._unremembered is not None:
            self._remember_projection()
            found = self._entry_ids.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        for entry in reversed(self.manager.get_branch()):
            if entry.get("type") == "message" and entry.get("message") is message:
                return entry["id"]
        return None

    def _mapped(self, message: Any) -> str | None:
        """The entry id remembered for this very message object (no search)."""
        found = self._entry_ids.get(id(message))
        return found[1] if found is not None and found[0] is message else None

    def _remember_projection(self) -> None:
        """Remember the entry ids of the projection the context was last refreshed from; an id
        remembered since that refresh (a message saved) is newer and stays."""
        projection, late = self._unremembered, self._remembered_late
        self._unremembered, self._remembered_late = None, set()
        assert projection is not None
        entries = projection["entries"]
        # A projection only grows at its end while it is the same object (ProjectionCache): the
        # entries remembered last time are still there.
        remembered = self._remembered
        start = remembered[1] if remembered[0] is projection and remembered[1] <= len(entries) else 0
        entry_ids = self._entry_ids
        for index in range(start, len(entries)):
            item = entries[index]
            for message in item["messages"]:
                if id(message) not in late:
                    entry_ids[id(message)] = (message, item["sourceEntry"]["id"])
        self._remembered = (projection, len(entries))

    def omit_attempt(self, message: dict[str, Any]) -> None:
        """Omit a failed attempt and its tool results from the model context, durably (``context_edit``)."""
        call_ids = {block.get("id") for block in tool_calls(message)}
        entry_id = self.entry_id_of(message)
        if self._unremembered is not None:
            self._remember_projection()  # every message's entry id is looked up below
        messages = self.messages
        index = next(
            (
                i
                for i, item in enumerate(messages)
                if item is message or (entry_id is not None and self._mapped(item) == entry_id)
            ),
            -1,
        )
        targets = [message]
        for item in messages[index + 1 :] if index >= 0 else []:
            if item.get("role") == "assistant":
                break
            if item.get("role") == "toolResult" and item.get("toolCallId") in call_ids:
                targets.append(item)
        manager = self.manager
        for target in targets:
            target_id = self.entry_id_of(target)
            if target_id is None:
                continue
            edit_id = manager.append_context_edit(target_id, None)
            entry = manager.get_entry(edit_id)
            if entry is not None:
                self._emit({"type": "entry_appended", "entry": entry})
        self.refresh()
