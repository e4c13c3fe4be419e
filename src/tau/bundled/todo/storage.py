"""Evidence that session entries are committed: complete, exact lines of the session file on disk.

:class:`SessionFile` reads the session file by path, read-only, in bounded chunks. It indexes every
complete (LF-terminated) line by entry id and compares in-memory entries with their lines:

- a line up to 1 MiB is compared with the entry's ``JSON.stringify`` bytes, and when those differ
  (another writer's formatting), parsed and compared value by value (``true`` is not ``1``);
- a larger line is never parsed: its SHA-256 must equal that of the entry's canonical bytes
  (an LF or CRLF line end).

The cache holds the file identity ``(st_dev, st_ino)``, the verified length and the SHA-256 of the
last 4 KiB before it. While those match, only the bytes after the verified length are read; entry
objects already found equal to their line are not compared again. Anything else (another inode, a
shorter file, other tail bytes) drops the cache and the whole file is verified again.

This is evidence of readable, complete records, not an fsync or a durability guarantee.

Errors (raised by the checks, both :class:`~tau.bundled.todo_state.TodoError`)::

    StorageUnavailable   code storage_unavailable: ``todo storage unavailable: <reason>; repair and reload``
    NoConversation       code no_conversation: the session has no persisted conversation yet
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tau.bundled.todo.lines import Line, LineIndex
from tau.bundled.todo.results import unavailable_text
from tau.bundled.todo_state import TodoError
from tau.common import jsjson
from tau.common.regular_files import open_regular
from tau.extension import entry_message

__all__ = ["CHUNK", "MAX_PARSED", "TAIL", "NoConversation", "SessionFile", "StorageUnavailable", "same_json"]

CHUNK = 1 << 20  # bytes per read
MAX_PARSED = 1 << 20  # longer lines are compared byte for byte, never parsed
TAIL = 4096  # bytes before the verified length whose hash must still match


class StorageUnavailable(TodoError):
    """The session file cannot vouch for the checklist; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__("storage_unavailable", unavailable_text(reason))
        self.reason = reason


class NoConversation(TodoError):
    """A file-backed session without a persisted user/assistant message."""

    def __init__(self) -> None:
        super().__init__(
            "no_conversation", "send a message first: file-backed todo needs a persisted conversation"
        )


def same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are equal as JSON (``True`` is not ``1``; ``1`` is ``1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_json(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same_json, a, b))
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    return type(a) is type(b) and a == b


class SessionFile:
    """Verification of one session file (by path), with the incremental cache described above."""

    def __init__(
        self, path: str | os.PathLike[str], *, chunk: int = CHUNK, max_parsed: int = MAX_PARSED
    ) -> None:
        self.path = Path(path)
        self.chunk = chunk
        self.max_parsed = max_parsed
        self.bytes_read = 0  # for tests and benchmarks: what verification cost
        self._identity: tuple[int, int] | None = None
        self._length = 0
        self._tail_hash = b""
        self._index = LineIndex(chunk, max_parsed)
        self._confirmed: dict[str, Any] = {}  # id -> the entry object found equal to its line
        self._confirmed_header: Any = None
        self._anchors: dict[str, tuple[Any, bool]] = {}  # id -> (entry, conversation) of verified paths
        self._generation = 0  # counts cache drops

    def forget(self) -> None:
        """Drop the cache: the next check reads the whole file."""
        self._identity = None
        self._length = 0
        self._tail_hash = b""
        self._index = LineIndex(self.chunk, self.max_parsed)
        self._confirmed = {}
        self._confirmed_header = None
        self._anchors = {}
        self._generation += 1

    # ------------------------------------------------------------------------------------- checks

    def check_branch(self, header: Any, branch: list[dict[str, Any]]) -> None:
        """Before an append: the file exists with ``header`` as its first line, the branch has a
        persisted conversation, and every entry of ``branch`` (root first) is an exact committed line.

        Raises :class:`NoConversation` or :class:`StorageUnavailable`.
        """
        self._check_path(header, lambda: _newest_first(branch))

    def check_chain(
        self, header: Any, leaf: dict[str, Any] | None, get_entry: Callable[[str], dict[str, Any] | None]
    ) -> None:
        """:meth:`check_branch` for the branch that ends at ``leaf``, walked through ``get_entry``.

        The walk stops at the first entry whose whole ancestry an earlier check verified (the same
        entry object, while the file cache holds), so a check costs what was appended since.
        """
        self._check_path(header, lambda: _walk_up(leaf, get_entry))

    def _check_path(self, header: Any, walk: Callable[[], Iterator[dict[str, Any]]]) -> None:
        fresh, flags = self._fresh(walk())
        if not flags[-1]:
            raise NoConversation()
        with self._open() as fd:
            generation = self._generation
            self._sync(fd, fresh)
            if generation != self._generation:  # the cache was dropped, and its anchors with it
                fresh, flags = self._fresh(walk())
            self._check_header(fd, header)
            for entry in fresh:
                if not self._matches(fd, entry):
                    raise StorageUnavailable(self._why_not(entry))
        for entry, flag in zip(fresh, flags, strict=False):
            self._anchors[entry["id"]] = (entry, flag)

    def _fresh(self, newest_first: Iterator[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[bool]]:
        """The entries up to the nearest verified anchor, root side first, and for each whether a
        conversation message is at or above it (the last flag: for the whole branch)."""
        fresh: list[dict[str, Any]] = []
        conversation = False
        for entry in newest_first:
            entry_id = entry.get("id") if isinstance(entry, dict) else None
            anchor = self._anchors.get(entry_id) if isinstance(entry_id, str) else None
            if anchor is not None and anchor[0] is entry:
                conversation = anchor[1]
                break
            fresh.append(entry)
        fresh.reverse()
        flags = []
        for entry in fresh:
            conversation = conversation or _is_conversation(entry)
            flags.append(conversation)
        return fresh, flags or [conversation]

    def check_entry(self, entry: dict[str, Any]) -> None:
        """After an append: ``entry`` (id, data and metadata) is an exact, complete line of the file."""
        with self._open() as fd:
            self._sync(fd, [entry])
            if not self._matches(fd, entry):
                raise StorageUnavailable(self._why_not(entry))

    def committed(self, entries: Iterable[dict[str, Any]]) -> list[bool]:
        """For each entry, whether it is an exact complete line of the file (raises when unreadable)."""
        entries = list(entries)
        with self._open() as fd:
            self._sync(fd, entries)
            return [self._matches(fd, entry) for entry in entries]

    def check_header(self, header: Any) -> None:
        """The file exists, is readable and starts with ``header``."""
        with self._open() as fd:
            self._sync(fd)
            self._check_header(fd, header)

    def _why_not(self, entry: dict[str, Any]) -> str:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or not self._index.get(entry_id):
            return f"entry {entry_id!r} is not a complete line of {self.path.name} (uncommitted; reopen the session)"
        return f"entry {entry_id!r} differs from its line in {self.path.name}"

    def _check_header(self, fd: int, header: Any) -> None:
        if header is not None and self._confirmed_header is header:
            return
        line = self._index.header
        if line is None:
            raise StorageUnavailable(f"{self.path.name} has no session header line")
        try:
            found = jsjson.loads(self._read_line(fd, line))
        except ValueError:
            found = None
        if not same_json(found, header):
            raise StorageUnavailable(f"the session header of {self.path.name} does not match this session")
        self._confirmed_header = header

    # ------------------------------------------------------------------------------------ reading

    def _open(self) -> _Descriptor:
        try:
            return _Descriptor(open_regular(self.path))  # no pipe, no link: never blocks
        except FileNotFoundError:
            raise StorageUnavailable(f"the session file {str(self.path)!r} is missing") from None
        except OSError as exc:
            raise StorageUnavailable(
                f"the session file {str(self.path)!r} cannot be read ({exc.strerror})"
            ) from None

    def _pread(self, fd: int, size: int, offset: int) -> bytes:
        data = os.pread(fd, size, offset)
        self.bytes_read += len(data)
        return data

    def _sync(self, fd: int, wanted: Iterable[dict[str, Any]] = ()) -> None:
        """Bring the index up to the last complete line, reusing the cache when the file still has it.

        Lines of ``wanted`` entries met on the way are compared at once.
        """
        info = os.fstat(fd)
        identity = (info.st_dev, info.st_ino)
        if not (identity == self._identity and info.st_size >= self._length and self._tail_intact(fd)):
            if self._identity is not None:
                self.forget()
            self._identity = identity
        if info.st_size > self._length:
            wanted_by_id = {
                e["id"]: e for e in wanted if isinstance(e, dict) and isinstance(e.get("id"), str)
            }

            def compare_now(entry_id: str, raw: bytes | bytearray) -> None:  # no second read
                entry = wanted_by_id.get(entry_id)
                if (
                    entry is not None
                    and self._confirmed.get(entry_id) is not entry
                    and _raw_equals(raw, entry)
                ):
                    self._confirmed[entry_id] = entry

            self._length = self._index.scan(
                lambda size, offset: self._pread(fd, size, offset), self._length, info.st_size, compare_now
            )
            self._tail_hash = self._tail_digest(fd)

    def _tail_digest(self, fd: int) -> bytes:
        start = max(0, self._length - TAIL)
        return hashlib.sha256(self._pread(fd, self._length - start, start)).digest()

    def _tail_intact(self, fd: int) -> bool:
        return self._tail_digest(fd) == self._tail_hash

    def _read_line(self, fd: int, line: Line) -> bytes:
        return self._pread(fd, line.size, line.offset)

    # --------------------------------------------------------------------------------- comparing

    def _matches(self, fd: int, entry: dict[str, Any]) -> bool:
        entry_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(entry_id, str):
            return False
        if self._confirmed.get(entry_id) is entry:
            return True
        for line in self._index.get(entry_id):
            if self._line_equals(fd, line, entry):
                self._confirmed[entry_id] = entry
                return True
        return False

    def _line_equals(self, fd: int, line: Line, entry: dict[str, Any]) -> bool:
        if line.digest is not None:  # oversized: tau's canonical bytes, nothing else
            return line.digest == hashlib.sha256(jsjson.dumps(entry)).digest()
        return _raw_equals(self._read_line(fd, line), entry)


def _raw_equals(raw: bytes | bytearray, entry: dict[str, Any]) -> bool:
    try:
        if orjson.dumps(entry) == raw:  # the same bytes: the same JSON value (the common case)
            return True
    except (TypeError, orjson.JSONEncodeError):
        pass  # lone surrogates or huge integers: compare the parsed value
    try:
        return same_json(jsjson.loads(bytes(raw)), entry)
    except ValueError:
        return False


class _Descriptor:
    """A file descriptor closed on leaving the ``with`` block."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *exc_info: object) -> None:
        os.close(self.fd)


def _newest_first(branch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    if branch and branch[0].get("parentId") is not None:
        raise _disconnected(branch[0])
    return reversed(branch)


def _walk_up(
    leaf: dict[str, Any] | None, get_entry: Callable[[str], dict[str, Any] | None]
) -> Iterator[dict[str, Any]]:
    entry = leaf
    while entry is not None:
        yield entry
        parent = entry.get("parentId")
        if parent is None:
            return
        found = get_entry(parent)
        if found is None:
            raise _disconnected(entry)
        entry = found


def _disconnected(entry: dict[str, Any]) -> StorageUnavailable:
    return StorageUnavailable(
        f"the branch is disconnected: the parent {entry.get('parentId')!r} of entry {entry.get('id')!r} is missing"
    )


def _is_conversation(entry: dict[str, Any]) -> bool:
    message = entry_message(entry)
    return isinstance(message, dict) and message.get("role") in ("user", "assistant")
