"""The reducer's archive: every reduced log, content-addressed (extensions.md §5.5).

``<runtime root>/evidence-preserving-reducer/objects/<sha[0:2]>/<sha>.txt``, written through
:mod:`tau.bundled.sol_common.private_dirs` like every archive under ``sol/``: directories 0700, files
0600, no link followed anywhere below the session dir, a log published whole or not at all, no file
opened that is not a regular one (a named pipe in a log's place counts as missing). A file
that exists with other bytes is an integrity failure: the receipt would point the model at evidence
that is not the log, so it is raised, never passed over. A directory tau refuses (a link) raises
:class:`~tau.bundled.sol_common.private_dirs.PrivatePathError`, an ``OSError`` the reducer falls back on.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat

from tau.bundled.reducer.config import utf8
from tau.bundled.reducer.wire import ARCHIVE_DIR
from tau.bundled.sol_common import RuntimeRoot
from tau.bundled.sol_common.private_dirs import (
    open_no_follow,
    private_directory,
    publish_file,
    remove_special,
)
from tau.common.dataclass import dataclass

__all__ = ["ARCHIVE_DIR", "Archive", "ArchiveIntegrityError", "ArchiveObject", "line_count"]


class ArchiveIntegrityError(RuntimeError):
    """An archived log whose bytes are not the log its name promises."""


@dataclass(frozen=True)
class ArchiveObject:
    """One archived log: its hash, UTF-8 size, line count and absolute path."""

    hash: str
    bytes: int
    lines: int
    path: str


def line_count(text: str) -> int:
    """Newlines, plus one when the text does not end with a newline (``""`` has 0 lines)."""
    newlines = text.count("\n")
    return newlines if not text or text.endswith("\n") else newlines + 1


def _integrity_error(path: str) -> ArchiveIntegrityError:
    return ArchiveIntegrityError(f"Reducer archive integrity failure: {path}")


class Archive:
    """The ``objects`` tree of the reducer under one runtime root."""

    def __init__(self, root: RuntimeRoot) -> None:
        self.root = root

    def path_of(self, digest: str) -> str:
        return os.path.join(self.root.path, ARCHIVE_DIR, "objects", digest[:2], f"{digest}.txt")

    def _directory(self, digest: str, create: bool) -> contextlib.AbstractContextManager[int]:
        return private_directory(self.root, (ARCHIVE_DIR, "objects", digest[:2]), create=create)

    def store(self, body: str) -> ArchiveObject:
        """Archive ``body`` (or find it already archived).

        Raises:
            ArchiveIntegrityError: a file of that name holds other bytes.
            OSError: the archive cannot be written (a refused link, a full disk, permissions).
        """
        data = utf8(body)
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_of(digest)
        name = f"{digest}.txt"
        with self._directory(digest, True) as directory:
            published = publish_file(directory, name, data)
            # A pipe, socket or device in the log's place counts as missing: archived again.
            if not published and remove_special(directory, name):
                published = publish_file(directory, name, data)
            if not published:
                self._verify_in(directory, path, data)
        return ArchiveObject(digest, len(data), line_count(body), os.path.abspath(path))

    def _verify_in(self, directory: int, path: str, data: bytes) -> None:
        try:
            fd = open_no_follow(os.path.basename(path), os.O_RDONLY, dir_fd=directory)
        except OSError as exc:
            raise _integrity_error(path) from exc
        with os.fdopen(fd, "rb") as handle:
            same = stat.S_ISREG(os.fstat(fd).st_mode) and handle.read(len(data) + 1) == data
        if not same:
            raise _integrity_error(path)

    def recheck(self, archived: ArchiveObject, body: str) -> None:
        """Before reusing a cached receipt: the archived file must still hold ``body``.

        Raises:
            ArchiveIntegrityError: the file is gone or holds other bytes.
            OSError: a directory on the way is now refused (a link).
        """
        try:
            with self._directory(archived.hash, False) as directory:
                self._verify_in(directory, archived.path, utf8(body))
        except FileNotFoundError as exc:
            raise _integrity_error(archived.path) from exc
