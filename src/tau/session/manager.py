"""``SessionManager``: a pi 1.6 session as an append-only tree in a JSONL file (pi-host §2).

Each entry has an ``id`` and a ``parentId``; the leaf is an in-memory pointer (on load, the last
entry in file order); every append is a child of the leaf and moves it. Nothing is written until the
session holds a user or assistant message; then the whole buffer is created at once and every later
entry is one appended line, written before the append returns. When the file cannot be written (a
full disk, a read-only file) the append raises :class:`SessionWriteError` but the entry stays in the
session, unsaved: the next append, or :meth:`SessionManager.save_unsaved`, writes every unsaved entry
in order once the file can be written again. tau holds an advisory lock while it writes
(:mod:`tau.session.lock`); ``read_only=True`` opens never write and never lock.

Entries are plain dicts with pi's keys. They are parsed lazily (:mod:`tau.session.records`) and
the dicts returned are the stored ones: do not mutate them. How the entries reach the file is
:mod:`tau.session.storage`.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from tau.common.jsstr import iso_now, js_trim, ms_from_iso
from tau.common.lazy_regex import lazy_pattern
from tau.common.paths import make_private_dirs
from tau.session import entries as make
from tau.session import projection
from tau.session.errors import NotASessionError, SessionError, SessionWriteError
from tau.session.forking import branch_records, write_copy
from tau.session.ids import check_session_id, new_entry_id, uuidv7
from tau.session.index import EntryIndex
from tau.session.lock import SessionWriter
from tau.session.paths import default_session_dir, resolve_path, session_file_name
from tau.session.records import Record
from tau.session.storage import FileStorage

__all__ = ["SessionManager"]

Entry = dict[str, Any]
Problem = tuple[int, str]

_NEWLINES = lazy_pattern(r"[\r\n]+")
_CURRENT_LEAF: Any = object()  # default of the ``leaf_id`` parameters: the manager's own leaf


class SessionManager(FileStorage):
    """A session: its header, its entries as a tree, the leaf, and the file they live in."""

    # ------------------------------------------------------------------ construction

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        session_dir: Path | None,
        *,
        persist: bool,
        read_only: bool = False,
    ) -> None:
        """Use the class methods (:meth:`create`, :meth:`open`, :meth:`in_memory`, ...)."""
        self._cwd = str(resolve_path(cwd))
        self._session_dir = session_dir
        self._persist = persist
        self._read_only = read_only
        self._file: Path | None = None
        self._writer: SessionWriter | None = None
        self._flushed = False
        self._unsaved: list[Record] = []  # appended after the file was created, not yet written
        self._write_error: OSError | None = None  # why the last write failed, until one succeeds
        self._header: Entry = {}
        self._header_raw: bytes | None = None
        self._index = EntryIndex()
        self._leaf: Any = None
        self._line_count = 0

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
        parent_session: str | None = None,
    ) -> SessionManager:
        """A new session for ``cwd``, written (once it has a message) to ``session_dir`` or the default dir."""
        directory = resolve_path(session_dir) if session_dir is not None else default_session_dir(cwd)
        manager = cls(cwd, directory, persist=True)
        manager.new_session(id=id, parent_session=parent_session)
        return manager

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        cwd_override: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
    ) -> SessionManager:
        """Open the session file ``path``.

        Writable (the default, as pi): a missing file becomes a new session written there, an empty
        file gets a header, a v1/v2 file is migrated and rewritten, a missing final newline is added,
        and the file stays locked until :meth:`close`. ``read_only=True`` never writes or locks:
        migration happens in memory only, and a missing or empty file is an error.
        Raises :class:`NotASessionError` for a file that is not a session (left untouched).
        """
        resolved = resolve_path(path)
        directory = resolve_path(session_dir) if session_dir is not None else resolved.parent
        manager = cls(cwd_override if cwd_override is not None else os.getcwd(), directory, persist=True)
        manager._read_only = read_only
        manager._open_file(resolved, use_header_cwd=cwd_override is None)
        return manager

    @classmethod
    def in_memory(
        cls,
        cwd: str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
        parent_session: str | None = None,
        entries: Iterable[Entry] | None = None,
    ) -> SessionManager:
        """A session that is never written; ``entries`` (with or without a header) preload it."""
        manager = cls(cwd if cwd is not None else os.getcwd(), None, persist=False)
        preload = list(entries or [])
        if preload:
            manager._load_entries(preload, id=id, parent_session=parent_session)
        else:
            manager.new_session(id=id, parent_session=parent_session)
        return manager

    @classmethod
    def continue_recent(
        cls, cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None
    ) -> SessionManager:
        """The most recently modified session of ``cwd`` (see :func:`find_most_recent`), else a new one."""
        from tau.session.listing import find_most_recent, uses_default_dir

        directory = resolve_path(session_dir) if session_dir is not None else default_session_dir(cwd)
        only_cwd = session_dir is not None and not uses_default_dir(directory, cwd)
        recent = find_most_recent(directory, cwd if only_cwd else None)
        manager = cls(cwd, directory, persist=True)
        if recent is None:
            manager.new_session()
        else:
            manager._open_file(recent, use_header_cwd=False)
        return manager

    @classmethod
    def fork_from(
        cls,
        source_path: str | os.PathLike[str],
        target_cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
    ) -> SessionManager:
        """Copy every entry of ``source_path`` into a new session of ``target_cwd`` (header ``parentSession``
        = the source) and open it. Entry lines are copied byte for byte (a v1/v2 source is migrated first)."""
        source_file = resolve_path(source_path)
        target = str(resolve_path(target_cwd))
        try:
            source = cls.open(source_file, read_only=True)
        except (NotASessionError, SessionError) as exc:
            raise SessionError(f"cannot fork: {exc}") from exc
        if id is not None:
            check_session_id(id)
        directory = resolve_path(session_dir) if session_dir is not None else default_session_dir(target)
        make_private_dirs(directory)
        session_id = id if id is not None else uuidv7()
        timestamp = iso_now()
        file = directory / session_file_name(timestamp, session_id)
        header = make.header(session_id, timestamp, target, str(source_file))
        source.get_entries()  # parse (and drop) every line before copying
        write_copy(source._index, header, file)
        return cls.open(file, directory, target)

    @staticmethod
    def find_by_id(
        cwd: str | os.PathLike[str], session_id: str, session_dir: str | os.PathLike[str] | None = None
    ) -> str | None:
        """The path of the session with exactly this id in ``cwd``'s session dir, reading headers only."""
        from tau.session.listing import find_by_id

        return find_by_id(cwd, session_id, session_dir)

    @staticmethod
    def list(
        cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[Any]:
        """:class:`~tau.session.listing.SessionInfo` of every session of ``cwd``, most recent first."""
        from tau.session.listing import list_sessions

        return list_sessions(cwd, session_dir, on_progress)

    @staticmethod
    def list_all(
        session_dir: str | os.PathLike[str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[Any]:
        """:class:`~tau.session.listing.SessionInfo` of every session of every project, most recent first."""
        from tau.session.listing import list_all_sessions

        return list_all_sessions(session_dir, on_progress)

    # ------------------------------------------------------------------ files (the mechanics: FileStorage)

    def _load_entries(
        self, entries: builtins.list[Entry], *, id: str | None, parent_session: str | None
    ) -> None:
        header = next((entry for entry in entries if entry.get("type") == "session"), None)
        if header is None:
            self.new_session(id=id, parent_session=parent_session)
            self._index = EntryIndex([Record.from_entry(entry) for entry in entries])
        else:
            self._header, self._header_raw = header, None
            self._index = EntryIndex([Record.from_entry(entry) for entry in entries if entry is not header])
            self._migrate()
        self._leaf = self._index.reindex()

    def close(self) -> None:
        """Release the write lock and the file (the session stays readable in memory).

        Entries that a failed write left unsaved get one last try first.
        """
        with contextlib.suppress(SessionWriteError, FileExistsError):
            self.save_unsaved()
        self._close_writer()

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def set_session_file(self, path: str | os.PathLike[str]) -> None:
        """Switch to another session file (resume), as :meth:`open` does."""
        self._refuse_if_unsaved("switch sessions")
        self._open_file(resolve_path(path), use_header_cwd=False)

    def new_session(self, *, id: str | None = None, parent_session: str | None = None) -> str | None:
        """Start a new, empty session (written lazily); returns its future file path, if persisted."""
        if id is not None:
            check_session_id(id)
        self._refuse_if_unsaved("start a new session")
        self._close_writer()
        self._unsaved = []
        session_id = id if id is not None else uuidv7()
        timestamp = iso_now()
        self._header = make.header(session_id, timestamp, self._cwd, parent_session)
        self._header_raw = None
        self._index = EntryIndex()
        self._line_count = 0
        self._leaf = None
        self._flushed = False
        if self._persist and self._session_dir is not None:
            self._file = self._session_dir / session_file_name(timestamp, session_id)
        return self.get_session_file()

    # ------------------------------------------------------------------ appending

    def _append(self, entry: Entry) -> str:
        if self._read_only:
            raise SessionError(
                f"session {self.get_session_file()!r} was opened read-only; open it without read_only to append"
            )
        record = Record.from_entry(entry)
        previous_leaf = self._leaf
        self._index.add(record)
        self._leaf = record.id
        try:
            self._write(record)
        except SessionWriteError as exc:
            exc.entry_id = record.id  # kept in memory, unsaved: written with the next successful write
            raise
        except BaseException:
            # An entry that cannot be written at all must not become the parent of later entries.
            self._index.remove_last(record)
            self._leaf = previous_leaf
            raise
        return record.id

    def _has_conversation(self) -> bool:
        for record in self._index.records:
            if record.kind != "message":
                continue
            message = (self._index.parse(record) or {}).get("message")
            if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
                return True
        return False

    def _new_id(self) -> str:
        return new_entry_id(self._index.by_id)

    def append_message(self, message: dict[str, Any]) -> str:
        """Append a ``message`` entry (user, assistant, toolResult, system, bashExecution, custom)."""
        return self._append(make.message_entry(self._new_id(), self._leaf, iso_now(), message))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append(
            make.thinking_level_change_entry(self._new_id(), self._leaf, iso_now(), thinking_level)
        )

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(
            make.model_change_entry(self._new_id(), self._leaf, iso_now(), provider, model_id)
        )

    def append_usage(
        self, kind: str, provider: str, model: str, usage: dict[str, Any], note: str | None = None
    ) -> Entry:
        """Append usage that is counted in cost totals but never sent to a model; returns the entry."""
        entry = make.usage_entry(self._new_id(), self._leaf, iso_now(), kind, provider, model, usage, note)
        self._append(entry)
        return entry

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int | float,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Mapping[str, Any] | None = None,
    ) -> str:
        """Append a compaction; ``first_kept_entry_id=None`` keeps nothing (it becomes the entry's own id).

        The entry carries ``systemMessage``: every system message of the current projection replayed
        into one, stamped with the entry's time (pi 1.x).
        """
        timestamp = iso_now()
        system = make.current_system_message(self.build_session_projection()["messages"])
        if system is not None:
            system = {**system, "timestamp": ms_from_iso(timestamp)}
        entry_id = self._new_id()
        kept = first_kept_entry_id if first_kept_entry_id is not None else entry_id
        entry = make.compaction_entry(
            entry_id, self._leaf, timestamp, summary, kept, tokens_before, details, usage, from_hook, system
        )
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Append extension state (never sent to a model)."""
        return self._append(make.custom_entry(self._new_id(), self._leaf, iso_now(), custom_type, data))

    def append_session_info(self, name: str) -> str:
        """Name the session: newlines become spaces, then the name is trimmed; ``""`` clears it."""
        clean = js_trim(_collapse_newlines(name))
        return self._append(make.session_info_entry(self._new_id(), self._leaf, iso_now(), clean))

    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | builtins.list[dict[str, Any]],
        display: bool,
        details: Any = None,
    ) -> str:
        """Append an extension message that reaches the model as a user message (``details`` never does)."""
        entry = make.custom_message_entry(
            self._new_id(), self._leaf, iso_now(), custom_type, content, display, details
        )
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        """Replace (``{"content": ...}``) or omit (``None``) an earlier entry's content in the model context.

        The target must be on the active branch and be a user, assistant or toolResult message or a
        custom_message. A string replacing an assistant or toolResult content becomes one text block.
        """
        content = replacement.get("content") if isinstance(replacement, dict) else None
        if replacement is not None and not isinstance(content, str | list):
            raise SessionError("a context edit replacement must be None or {'content': <string or list>}")
        target = self._index.lookup(target_id)
        entry = self._index.parse(target) if target is not None else None
        if entry is None:
            raise SessionError(f"Entry {target_id} not found")
        if not any(item.get("id") == target_id for item in self.get_branch()):
            raise SessionError(f"Entry {target_id} is not on the active branch")
        role = _editable_role(entry)
        if role is None:
            raise SessionError(f"Entry {target_id} does not contribute editable model content")
        if replacement is not None and role in ("assistant", "toolResult") and isinstance(content, str):
            replacement = {"content": [{"type": "text", "text": content}]}
        entry = make.context_edit_entry(self._new_id(), self._leaf, iso_now(), target_id, replacement)
        return self._append(entry)

    def append_label_change(self, target_id: str, label: str | None = None) -> str:
        """Set (or with ``None``/``""`` clear) the label of an entry; the latest label entry wins."""
        target = self._index.lookup(target_id)
        if target is None or self._index.parse(target) is None:
            raise SessionError(f"Entry {target_id} not found")
        entry = make.label_entry(self._new_id(), self._leaf, iso_now(), target_id, label)
        entry_id = self._append(entry)
        self._index.index_label(entry)
        return entry_id

    # ------------------------------------------------------------------ reading

    def is_persisted(self) -> bool:
        return self._persist

    def is_read_only(self) -> bool:
        return self._read_only

    def get_cwd(self) -> str:
        return self._cwd

    def get_session_dir(self) -> str:
        return str(self._session_dir) if self._session_dir is not None else ""

    def uses_default_session_dir(self) -> bool:
        from tau.session.listing import uses_default_dir

        return self._session_dir is not None and uses_default_dir(self._session_dir, self._cwd)

    def get_session_id(self) -> str:
        return self._header.get("id", "")

    def get_session_file(self) -> str | None:
        return str(self._file) if self._file is not None else None

    def get_header(self) -> Entry | None:
        """The header line (``{"type":"session","version","id","timestamp","cwd",...}``)."""
        return self._header or None

    def get_entry_count(self) -> int:
        """Number of entries (distinct ids), without parsing or copying them."""
        return len(self._index.by_id)

    def get_entries(self) -> builtins.list[Entry]:
        """Every entry in file order, header excluded (parses the whole file once)."""
        self._index.parse_all()
        return [record.entry for record in self._index.entry_records()]  # type: ignore[misc]

    def get_leaf_id(self) -> str | None:
        return self._leaf

    def get_leaf_entry(self) -> Entry | None:
        return self.get_entry(self._leaf)

    def get_entry(self, entry_id: Any) -> Entry | None:
        record = self._index.lookup(entry_id)
        return self._index.parse(record) if record is not None else None

    def get_children(self, parent_id: str) -> builtins.list[Entry]:
        """Direct children of ``parent_id``, in file order."""
        chosen = [record for record in self._index.by_id.values() if record.parent_id == parent_id]
        return [entry for entry in self._index.parse_all(chosen) if entry.get("parentId") == parent_id]

    def get_label(self, entry_id: str) -> str | None:
        return self._index.labels.get(entry_id)

    def get_session_name(self) -> str | None:
        """The name of the latest ``session_info`` entry in file order (``None`` when cleared or never set)."""
        for record in reversed(self._index.records):
            if record.kind != "session_info":
                continue
            entry = self._index.parse(record)
            if entry is None:
                continue
            name = entry.get("name")
            return (js_trim(name) if isinstance(name, str) else None) or None
        return None

    @property
    def problems(self) -> builtins.list[Problem]:
        """``(line, message)`` for every line skipped and every broken link (missing parent, cycle,
        repeated id). Reading it parses and checks the whole file once."""
        return self._index.all_problems()

    def get_branch(self, from_id: str | None = None) -> builtins.list[Entry]:
        """The entries from the root to ``from_id`` (default: the leaf), all types, root first.

        A missing parent ends the walk (that entry is a root); a parentId cycle ends it too.
        """
        return self._index.branch(self._leaf if from_id is None else from_id)

    def _context_branch(self, leaf_id: Any) -> builtins.list[Entry]:
        if leaf_id is _CURRENT_LEAF:
            leaf_id = self._leaf
        if leaf_id is None:
            return []
        if self.get_entry(leaf_id) is None:
            entries = self._index.entry_records()  # pi falls back to the last entry
            if not entries:
                return []
            leaf_id = entries[-1].id
        return self.get_branch(leaf_id)

    def build_context_entries(self, leaf_id: Any = _CURRENT_LEAF) -> builtins.list[Entry]:
        """The entries that reach the model at ``leaf_id`` (default: the leaf; ``None``: none)."""
        return projection.build_context_entries(self._context_branch(leaf_id))

    def build_session_projection(self, leaf_id: Any = _CURRENT_LEAF) -> dict[str, Any]:
        """``{"entries": [{"sourceEntry", "messages"}], "messages", "thinkingLevel", "model"}`` at ``leaf_id``."""
        return projection.build_session_projection(self._context_branch(leaf_id))

    def build_session_context(self, leaf_id: Any = _CURRENT_LEAF) -> dict[str, Any]:
        """``{"messages", "thinkingLevel", "model"}`` at ``leaf_id``: what the model is sent."""
        return projection.build_session_context(self._context_branch(leaf_id))

    def get_tree(self) -> builtins.list[dict[str, Any]]:
        """The session as a forest of ``{"entry", "children", "label"?, "labelTimestamp"?}`` nodes.

        Roots are entries whose parent is ``null``, missing, or themselves; children are sorted by
        timestamp (stable). Entries caught in a parentId cycle are reachable from no root.
        """
        from tau.session.tree import build_tree

        return build_tree(self.get_entries(), self._index.labels, self._index.label_times)

    # ------------------------------------------------------------------ branching

    def branch(self, branch_from_id: str) -> None:
        """Move the leaf to ``branch_from_id`` (nothing is written): the next append starts a branch there."""
        if self.get_entry(branch_from_id) is None:
            raise SessionError(f"Entry {branch_from_id} not found")
        self._leaf = branch_from_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry: the next append is a new root."""
        self._leaf = None

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Move the leaf to ``branch_from_id`` and append a ``branch_summary`` of the branch left behind
        (``fromId`` = the old leaf, or ``"root"``)."""
        if branch_from_id is not None and self.get_entry(branch_from_id) is None:
            raise SessionError(f"Entry {branch_from_id} not found")
        from_id = self._leaf if self._leaf is not None else "root"
        self._leaf = branch_from_id
        entry = make.branch_summary_entry(
            self._new_id(), branch_from_id, iso_now(), from_id, summary, details, usage, from_hook
        )
        return self._append(entry)

    def create_branched_session(self, leaf_id: str) -> str | None:
        """Turn this manager into a new session holding only the root→``leaf_id`` path (labels re-created
        at its end, header ``parentSession`` = the old file). Returns the new file path, if persisted."""
        self._refuse_if_unsaved("fork the session")
        path = self.get_branch(leaf_id)
        if not path:
            raise SessionError(f"Entry {leaf_id} not found")
        records = branch_records(self._index, path)
        previous_file = self.get_session_file()
        self._close_writer()
        self._unsaved = []
        session_id = uuidv7()
        timestamp = iso_now()
        self._header = make.header(session_id, timestamp, self._cwd, previous_file if self._persist else None)
        self._header_raw = None
        self._index = EntryIndex(records)  # lines in memory
        self._leaf = self._index.reindex()
        self._flushed = False
        if not self._persist or self._session_dir is None:
            return None
        self._file = self._session_dir / session_file_name(timestamp, session_id)
        if self._has_conversation():
            make_private_dirs(self._file.parent)
            data, lines = self._file_bytes()
            self._writer = SessionWriter.create(self._file, data)
            self._flushed = True
            self._place(lines)
        return str(self._file)


def _collapse_newlines(text: str) -> str:
    return _NEWLINES.sub(" ", text)


def _editable_role(entry: Entry) -> str | None:
    if entry.get("type") == "custom_message":
        return "custom"
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, dict):
        role = message.get("role")
        if isinstance(role, str) and role in make.EDITABLE_ROLES:
            return role
    return None
