"""The checklist of one session: recovery from the branch, verified writes, quarantine.

The store needs only a read-only view of the session (:class:`SessionView`, which the extension
API's ``ctx.session_manager`` is) and a way to append a custom entry (``tau.append_entry``). Its
modes:

- ``file``: a session file backs the session. Every write is verified (:mod:`.storage`); the
  checklist is the latest valid snapshot on the branch whose exact line is on disk.
- ``pending``: the session has a file name but no file yet (no conversation): the empty checklist,
  ``not yet persisted``; edits are refused until a message is sent.
- ``volatile``: an in-memory session (``--no-session``): edits work, nothing survives the process.
- ``unavailable``: the storage cannot vouch for the checklist (a disconnected branch, an unreadable
  file, or a quarantine after an uncertain write). Only :meth:`Store.reconcile` lifts a quarantine.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from tau.bundled.todo import results
from tau.bundled.todo.results import Reply
from tau.bundled.todo.storage import NoConversation, SessionFile, StorageUnavailable, same_json
from tau.bundled.todo_state import State, TodoError, apply, check_state, empty_state, new_task_id
from tau.extension import entry_message

__all__ = ["CUSTOM_TYPE", "Mode", "SessionView", "Store"]

CUSTOM_TYPE = "pi-todo:state"

Mode = Literal["file", "pending", "volatile", "unavailable"]


class SessionView(Protocol):
    """What the store reads from the session (the extension API's read-only session manager)."""

    def get_session_file(self) -> str | None: ...

    def get_header(self) -> dict[str, Any] | None: ...

    def get_branch(self) -> list[dict[str, Any]]: ...

    def get_leaf_entry(self) -> dict[str, Any] | None: ...

    def get_entry(self, entry_id: str) -> dict[str, Any] | None: ...


class Store:
    """The checklist state of one session, and the only way to change it."""

    def __init__(
        self,
        session: SessionView,
        append: Callable[[str, Any], Any],
        *,
        new_id: Callable[[], str] = new_task_id,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self._session = session
        self._append = append
        self._new_id = new_id
        self._warn = warn or (lambda message: None)
        self._warned: set[Any] = set()
        self._file: SessionFile | None = None
        self._quarantine: str | None = None
        self._owner: tuple[str | None, Any] = (None, None)
        self.mode: Mode = "pending"
        self.state: State | None = empty_state()
        self.reason: str | None = None  # why the storage is unavailable
        self.recorded = False  # a snapshot entry backs the state (not just the implicit empty list)

    # ------------------------------------------------------------------------------ what it shows

    @property
    def note(self) -> str | None:
        """The storage words the model and the user must see (``None`` for plain file-backed success)."""
        return {"volatile": results.VOLATILE, "pending": results.PENDING}.get(self.mode)

    @property
    def quarantined(self) -> bool:
        return self._quarantine is not None

    def status_text(self) -> str:
        """The compact status line (key ``pi-todo``)."""
        if self.state is None:
            return "todo unavailable"
        done = sum(1 for task in self.state["tasks"] if task["status"] == "completed")
        # "done", so it is not read as /todoloop's count of open tasks (issue 32).
        text = f"todo {done}/{len(self.state['tasks'])} done"
        return f"{text} ({self.note})" if self.note else text

    # ------------------------------------------------------------------------------ reconciliation

    def reconcile(self) -> None:
        """The explicit reconcile: lift a quarantine, forget every cached verification, recover."""
        self._quarantine = None
        if self._file is not None:
            self._file.forget()
        self.recover()

    def recover(self) -> None:
        """Adopt the latest valid snapshot of the current branch that has authority (a quarantine stays)."""
        path = self._session.get_session_file()
        header = self._session.get_header()
        self._owner = (path, header.get("id") if isinstance(header, dict) else None)
        if self._quarantine is not None:
            self._unavailable(self._quarantine)
            return
        branch = self._session.get_branch()
        if branch and branch[0].get("parentId") is not None:
            self._unavailable(
                f"the branch is disconnected at entry {branch[0].get('id')!r} (its parent "
                f"{branch[0].get('parentId')!r} is missing); navigate to a verified entry and reconcile"
            )
            return
        candidates = self._snapshots(branch)
        if path is None:
            self._adopt("volatile", next(iter(candidates), None))
            return
        if self._file is None or self._file.path != Path(path):
            self._file = SessionFile(path)
        if not Path(path).exists():
            if _has_conversation(branch):
                self._unavailable(f"the session file {path!r} is missing")
            else:
                self._adopt("pending", None)
            return
        if not candidates:  # nothing to verify: the first edit checks the whole branch anyway
            self._adopt("file", None)
            return
        try:
            self._file.check_header(header)
            committed = self._file.committed(entry for entry, _ in candidates)
        except StorageUnavailable as exc:
            self._unavailable(exc.reason)
            return
        found = next((candidate for candidate, ok in zip(candidates, committed, strict=True) if ok), None)
        if found is None:  # the branch holds a checklist the file no longer vouches for: never "empty"
            self._unavailable(
                f"no {CUSTOM_TYPE} entry of this branch is a complete line of {Path(path).name} "
                f"({len(candidates)} on the branch; the file changed outside this session)"
            )
            return
        self._adopt("file", found)

    def _snapshots(self, branch: list[dict[str, Any]]) -> list[tuple[dict[str, Any], State]]:
        """The branch's valid ``pi-todo:state`` entries, newest first (malformed ones warned about)."""
        found = []
        for entry in reversed(branch):
            if entry.get("type") != "custom" or entry.get("customType") != CUSTOM_TYPE:
                continue
            try:
                found.append((entry, check_state(entry.get("data"))))
            except ValueError as exc:
                if entry.get("id") not in self._warned:
                    self._warned.add(entry.get("id"))
                    self._warn(f"todo: ignoring malformed {CUSTOM_TYPE} entry {entry.get('id')}: {exc}")
        return found

    def _adopt(self, mode: Mode, found: tuple[dict[str, Any], State] | None) -> None:
        self.mode = mode
        self.reason = None
        if found is None:
            self.state, self.recorded = empty_state(), False
        else:
            self.state, self.recorded = found[1], True

    def _unavailable(self, reason: str) -> None:
        self.mode = "unavailable"
        self.state = None
        self.reason = reason
        self.recorded = False

    def _quarantine_for(self, reason: str) -> Reply:
        self._quarantine = reason
        self._unavailable(reason)
        return results.error_reply(StorageUnavailable(reason), None)

    # ------------------------------------------------------------------------------------ actions

    def list(self) -> Reply:
        """``{"action":"list"}``."""
        self.refresh()
        if self.state is None:
            return results.error_reply(StorageUnavailable(self.reason or "unknown"), None)
        return results.list_reply(self.state, self.note)

    def mutate(self, params: dict[str, Any]) -> Reply:
        """``add``, ``update``, ``remove`` or ``clear``: validated, appended and verified, or refused."""
        self.refresh()
        if self.state is None:
            return results.error_reply(StorageUnavailable(self.reason or "unknown"), None)
        try:
            change = apply(self.state, params, self._new_id)
        except TodoError as exc:
            return results.error_reply(exc, self.state, self.note)
        if change.is_noop:
            return results.mutation_reply(change, self.note)
        before = self.state
        written = self._write_volatile(change) if self.mode == "volatile" else self._write_verified(change)
        return written if written is not None else results.mutation_reply(change, self.note, before)

    def refresh(self) -> None:
        """Catch up with what happened without a reconcile event: the file appeared, the session changed."""
        header = self._session.get_header()
        owner = (self._session.get_session_file(), header.get("id") if isinstance(header, dict) else None)
        if owner != self._owner:
            self._quarantine = None  # a quarantine belongs to the session file it was raised for
            self.recover()
        elif self.mode == "pending":
            self.recover()

    def _write_volatile(self, change: Any) -> Reply | None:
        """Append to the in-memory session: ``None`` when done, else the error reply."""
        try:
            self._append(CUSTOM_TYPE, copy.deepcopy(change.state))
        except Exception as exc:  # boundary: the host's append failed; nothing is known about its branch
            return self._quarantine_for(f"the in-memory append failed ({exc})")
        self.state = change.state
        self.recorded = True
        return None

    def _write_verified(self, change: Any) -> Reply | None:
        """Append and verify on disk: ``None`` when done, else the error reply."""
        assert self._file is not None
        leaf = self._session.get_leaf_entry()
        try:
            self._file.check_chain(self._session.get_header(), leaf, self._session.get_entry)
        except NoConversation as exc:
            return results.error_reply(exc, self.state, self.note)
        except StorageUnavailable as exc:
            return self._quarantine_for(exc.reason)
        failure: Exception | None = None
        entry_id = None
        try:
            entry_id = self._append(CUSTOM_TYPE, copy.deepcopy(change.state))
        except Exception as exc:  # boundary: a verified line still counts; anything else is quarantined
            failure = exc
        entry = self._appended(entry_id, leaf, change.state)
        if entry is None:
            why = (
                f"the host reported {failure}"
                if failure is not None
                else "the appended entry cannot be found"
            )
            return self._quarantine_for(f"the outcome of the last write is uncertain ({why})")
        try:
            self._file.check_entry(entry)
        except StorageUnavailable as exc:
            return self._quarantine_for(f"the last write is not verified on disk: {exc.reason}")
        self.state = change.state
        self.recorded = True
        return None

    def _appended(self, entry_id: Any, leaf: dict[str, Any] | None, data: State) -> dict[str, Any] | None:
        """The entry the append created: our type, our data, a child of the verified leaf."""
        entry = (
            self._session.get_entry(entry_id) if isinstance(entry_id, str) else self._session.get_leaf_entry()
        )
        if not isinstance(entry, dict) or entry is leaf:
            return None
        if entry.get("type") != "custom" or entry.get("customType") != CUSTOM_TYPE:
            return None
        if entry.get("parentId") != (leaf or {}).get("id") or not same_json(entry.get("data"), data):
            return None
        return entry


def _has_conversation(branch: list[dict[str, Any]]) -> bool:
    for entry in branch:
        message = entry_message(entry)
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            return True
    return False
