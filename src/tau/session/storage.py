"""How a session lives in its file: opening and loading it, migration and whole-file rewrites, the
file created at the first conversation message, appends, and the entries a failed write left unsaved.

:class:`FileStorage` is a mixin of :class:`~tau.session.manager.SessionManager`, which holds the
state it works on (``_file``, ``_writer``, ``_header``, ``_index``, ``_leaf``, ``_unsaved``, ...) and
the session-level API built on it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from tau.common.paths import make_private_dirs
from tau.common.regular_files import file_kind
from tau.session import jsonl
from tau.session.errors import NotASessionError, SessionError, SessionWriteError
from tau.session.index import EntryIndex
from tau.session.lock import SessionWriter
from tau.session.migrate import migrate, needs_migration
from tau.session.paths import resolve_path
from tau.session.records import LineReader, Loaded, Record, load

__all__ = ["FileStorage", "make_line"]

Entry = dict[str, Any]


class FileStorage:
    """The file side of a session manager (see the module docstring)."""

    # state the manager sets up in its ``__init__``, where it may also be empty
    _cwd: str
    _persist: bool
    _read_only: bool
    _file: Path | None
    _writer: SessionWriter | None
    _flushed: bool
    _unsaved: list[Record]
    _write_error: OSError | None
    _header: Entry
    _header_raw: bytes | None
    _index: EntryIndex
    _leaf: Any
    _line_count: int

    # the session-level operations the file side needs, defined by the manager
    def new_session(self, *, id: str | None = None, parent_session: str | None = None) -> str | None:
        raise NotImplementedError

    def _has_conversation(self) -> bool:
        raise NotImplementedError

    def _open_file(self, path: Path, *, use_header_cwd: bool) -> None:
        self._close_writer()
        self._file = path
        _refuse_unless_regular(path)
        if not path.exists():
            if self._read_only:
                raise SessionError(f"no session file at {str(path)!r}; check the path")
            self.new_session()
            self._file = path  # the explicit path wins over a generated name
            return
        if not self._read_only:
            self._writer = _open_writer(path)  # lock before reading: nobody else appends meanwhile
        try:
            reader = LineReader(path)
            # A writable session is a run's: its branch is built at once (for a linear session, every
            # entry), so every line is parsed now; read-only uses may need only a few entries.
            loaded = load(reader.fd, path, parse_all=not self._read_only)
            if loaded is None:
                reader.close()
                self._initialize_empty_file(path)
                return
            if use_header_cwd and isinstance(loaded.header.get("cwd"), str):
                self._cwd = str(resolve_path(loaded.header["cwd"]))
            self._adopt(loaded, reader)
        except BaseException:
            self._close_writer()
            raise

    def _initialize_empty_file(self, path: Path) -> None:
        if self._read_only:
            raise NotASessionError(f"{str(path)!r} is empty: not a session file yet")
        self.new_session()  # (closes the writer of the empty file)
        self._file = path
        self._writer = _open_writer(path)
        self._rewrite_file()
        self._flushed = True

    def _adopt(self, loaded: Loaded, reader: LineReader) -> None:
        self._header, self._header_raw = loaded.header, loaded.header_raw
        self._index = EntryIndex(loaded.records, reader, loaded.problems)
        self._unsaved = []
        self._line_count = loaded.line_count
        migrated = self._migrate()
        self._leaf = self._index.reindex()
        self._settle_leaf()
        self._flushed = True
        if self._read_only:
            return
        if migrated:
            self._rewrite_file()
        elif loaded.unterminated and self._writer is not None:
            self._writer.append(b"\n")  # the next entry starts on a fresh line
            self._line_count += 1

    def _migrate(self) -> bool:
        if not needs_migration(self._header):
            return False
        entries = self._index.parse_all()
        changed = migrate(self._header, entries)
        self._header_raw = None
        for position in changed:  # the records that failed to parse were dropped: positions agree
            record, entry = self._index.records[position], entries[position]
            record.offset = -1  # changed: written as pi serializes it
            record.kind, record.id, record.parent_id = entry.get("type"), entry.get("id"), entry.get("parentId")
        return True

    def _rewrite_file(self) -> None:
        """Write header and entries to a new file that replaces the session file (migration, empty file)."""
        if not self._persist or self._file is None or self._read_only:
            return
        if self._writer is None and self._file.exists():
            raise SessionError(f"cannot rewrite {str(self._file)!r}: the file is not writable")
        if self._writer is not None:  # the lock is held: no other tau is rewriting this file now
            _remove_stale_temporaries(self._file)
        temporary = self._file.with_name(f"{_temporary_prefix(self._file)}{os.getpid()}.tmp")
        data, lines = self._file_bytes()
        writer = SessionWriter.create(temporary, data)
        try:
            os.chmod(temporary, self._file.stat().st_mode & 0o777)
            os.replace(temporary, self._file)  # the lock moves with the new file's inode
        except BaseException:
            writer.close()
            temporary.unlink(missing_ok=True)
            raise
        self._close_writer()
        writer.path = self._file
        self._writer = writer
        self._place(lines)

    def _file_bytes(self) -> tuple[bytes, list[bytes]]:
        """The whole file (header and entries) and its entry lines."""
        lines = self._index.line_bytes(self._index.records)
        return b"\n".join([self._header_bytes(), *lines]) + b"\n", lines

    def _place(self, lines: list[bytes]) -> None:
        """After the file was written from ``lines``: records learn their line numbers and offsets in it."""
        assert self._file is not None  # only a written file is placed
        self._unsaved = []  # the whole file was just written
        offset = len(self._header_bytes()) + 1
        for number, (record, line) in enumerate(zip(self._index.records, lines, strict=True), start=2):
            record.line, record.offset, record.size, record.raw = number, offset, len(line), None
            offset += len(line) + 1
        self._line_count = len(lines) + 1
        if self._index.reader is not None:
            self._index.reader.close()
        self._index.reader = LineReader(self._file)

    def _header_bytes(self) -> bytes:
        if self._header_raw is None:
            self._header_raw = make_line(self._header)
        return self._header_raw

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _settle_leaf(self) -> None:
        """On load the leaf is the last entry that parses: check the last lines until one does."""
        while self._leaf is not None:
            record = self._index.by_id.get(self._leaf)
            if record is None or self._index.parse(record) is not None:
                return
            self._leaf = self._index.last_id  # that line was dropped: the one before it is the last

    def _write(self, record: Record) -> None:
        if not self._persist or self._file is None:
            return
        if self._flushed:
            self._unsaved.append(record)
            self._write_unsaved()
        elif self._has_conversation():
            self._create_file()

    def _write_unsaved(self) -> None:
        """Append every unsaved entry, in order, in one write (the writer leaves no partial line)."""
        assert self._file is not None
        data = b"".join(jsonl.encode(record.entry) + b"\n" for record in self._unsaved)
        try:
            if self._writer is None:
                self._writer = SessionWriter.open(self._file)
            self._writer.append(data)
        except OSError as exc:
            self._write_error = exc
            raise SessionWriteError(str(self._file), exc, len(self._unsaved)) from exc
        self._write_error = None
        for record in self._unsaved:
            self._line_count += 1
            record.line = self._line_count
        self._unsaved = []

    def _create_file(self) -> None:
        """The first write: header and every entry so far, in a new file (nothing is left on failure)."""
        assert self._file is not None
        try:
            make_private_dirs(self._file.parent)  # a new session folder is 0700
            data, lines = self._file_bytes()
            self._writer = SessionWriter.create(self._file, data)
        except FileExistsError:
            raise  # another writer took the new file's name: not a disk that is full
        except OSError as exc:
            self._write_error = exc
            raise SessionWriteError(str(self._file), exc, len(self._index.records)) from exc
        self._write_error = None
        self._flushed = True
        self._place(lines)

    @property
    def unsaved_count(self) -> int:
        """How many entries are in the session but not in its file, because writing it failed."""
        if not self._persist or self._file is None:
            return 0
        if self._flushed:
            return len(self._unsaved)
        return len(self._index.records) if self._has_conversation() else 0

    def save_unsaved(self) -> None:
        """Write the entries a failed write left in memory; raises :class:`SessionWriteError` if the
        file still cannot be written. Does nothing when everything is saved."""
        if self.unsaved_count == 0:
            return
        if self._flushed:
            self._write_unsaved()
        else:
            self._create_file()

    def _refuse_if_unsaved(self, action: str) -> None:
        """Leaving a session that has unsaved entries would lose them without a word."""
        count = self.unsaved_count
        if count:
            cause = self._write_error or OSError("the last write failed")
            raise SessionWriteError(str(self._file), cause, count, refusing=action)


def _temporary_prefix(file: Path) -> str:
    return f".{file.name}.tau-"


def _remove_stale_temporaries(file: Path) -> None:
    """Delete what a rewrite killed before its rename left beside ``file`` (``.<name>.tau-<pid>.tmp``).

    Called under the file's write lock, so no live tau is rewriting it; a temporary whose process
    still runs is kept anyway (a filesystem without locks).
    """
    prefix = _temporary_prefix(file)
    try:
        names = os.listdir(file.parent)
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) : -len(".tmp")] if name.startswith(prefix) and name.endswith(".tmp") else ""
        if pid.isdigit() and (int(pid) == os.getpid() or not _process_exists(int(pid))):
            with contextlib.suppress(OSError):
                os.unlink(file.parent / name)


def _process_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except PermissionError:
        return True  # it does, and belongs to someone else
    except (ProcessLookupError, OverflowError):
        return False
    return True


def _refuse_unless_regular(path: Path) -> None:
    """A session file is a regular file: a directory, a link, a pipe or a device is refused by name.

    (The opens that follow refuse them too, without blocking; this says it in the session's words.)
    """
    try:
        info = os.lstat(path)
    except OSError:
        return  # absent (a new session), or its directory cannot be read: the open reports it
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISDIR(info.st_mode):
        raise SessionError(f"{str(path)!r} is a directory; pass the path of a .jsonl session file")
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        raise SessionError(
            f"{str(path)!r} is a symbolic link (to {target!r}); tau opens session files only as regular "
            "files, never through a link: pass the path of the file itself"
        )
    raise SessionError(
        f"{str(path)!r} is {file_kind(info.st_mode)}, not a session file; tau does not open it: "
        "pass the path of a .jsonl session file"
    )


def _open_writer(path: Path) -> SessionWriter | None:
    """The locked writer of an existing file, or ``None`` when the file cannot be written at all.

    pi opens a file it may not write and fails only when it appends; so does tau (the next append
    tries again and raises).
    """
    try:
        return SessionWriter.open(path)
    except PermissionError:
        return None
    except OSError as exc:
        if exc.errno == errno.EROFS:
            return None
        raise


def make_line(entry: Entry) -> bytes:
    """The line pi writes for ``entry`` (no LF)."""
    return jsonl.encode(entry)
