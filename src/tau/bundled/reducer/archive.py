"""The reducer's archive: every reduced log, content-addressed (extensions.md §5.5).

``<root>/evidence-preserving-reducer/objects/<sha[0:2]>/<sha>.txt``, directories 0700, files 0600,
created exclusively. A file that exists with other bytes is an integrity failure: the receipt would
point the model at evidence that is not the log, so it is raised, never passed over.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from tau.bundled.reducer.config import utf8

__all__ = ["Archive", "ArchiveIntegrityError", "ArchiveObject", "line_count"]


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


def _private_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        raise ArchiveIntegrityError(f"Reducer archive integrity failure: {path}")


class Archive:
    """The ``objects`` tree under ``store_root``."""

    def __init__(self, store_root: str) -> None:
        self.store_root = store_root

    def path_of(self, digest: str) -> str:
        return os.path.join(self.store_root, "objects", digest[:2], f"{digest}.txt")

    def store(self, body: str) -> ArchiveObject:
        """Archive ``body`` (or find it already archived); raises :class:`ArchiveIntegrityError`."""
        data = utf8(body)
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_of(digest)
        _private_dir(self.store_root)
        _private_dir(os.path.dirname(os.path.dirname(path)))
        _private_dir(os.path.dirname(path))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            self.verify(path, data)
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        return ArchiveObject(digest, len(data), line_count(body), os.path.abspath(path))

    def verify(self, path: str, data: bytes) -> None:
        """Raise unless ``path`` is a regular file holding exactly ``data``."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise ArchiveIntegrityError(f"Reducer archive integrity failure: {path}") from exc
        with os.fdopen(fd, "rb") as handle:
            same = handle.read(len(data) + 1) == data
        if not same:
            raise ArchiveIntegrityError(f"Reducer archive integrity failure: {path}")

    def recheck(self, archived: ArchiveObject, body: str) -> None:
        """Before reusing a cached receipt: the archived file must still hold ``body``."""
        self.verify(archived.path, utf8(body))
