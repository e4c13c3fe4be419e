"""The content-addressed object store: ``<root>/observation-pack/objects/<sha256>.txt`` (extensions.md §5.4).

An object is named by the SHA-256 of its bytes, so identical outputs (the same command run again and
again, under many observation ids) are one object; an observation id finds its object through the
content hash it was stored with (remembered, on the branch, or in the ledger). Objects of archives
written before this layout, named ``<obs_id>.txt``, are still read.

Safety rules (SoL-Pi's), kept by :mod:`tau.bundled.sol_common.private_dirs` for every archive under
``sol/``: directories 0700 and files 0600; the runtime-root parts tau creates (``sol``,
``sol/<session>``) and the objects directory are never links, and each is checked again after it is
opened; every later step works relative to the opened directory, so a directory swapped underneath
cannot redirect a write. An object is written to a private temporary name and published with ``link``
(which never replaces an existing file): readers never see partial bytes, and an existing object is
verified (regular file, size, SHA-256) instead of being overwritten.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator

from tau.bundled.obspack.wire import LEDGER_FILE, OBJECTS_DIR, PACK_DIR
from tau.bundled.sol_common import RuntimeRoot
from tau.bundled.sol_common.private_dirs import (
    NotRegularFileError,
    PrivatePathError,
    guard_no_follow,
    open_no_follow,
    private_directory,
    publish_file,
    remove_special,
    write_all,
)
from tau.common.lazy_regex import lazy_pattern
from tau.common.regular_files import file_kind

__all__ = ["ObservationStore", "StoreError", "guard_no_follow", "sha256_fd"]

_CHUNK = 1024 * 1024

# A store failure the model or the log can read; ``code`` is the errno name when there is one.
StoreError = PrivatePathError


_HASH = lazy_pattern(r"[0-9a-f]{64}")


def object_name(content_hash: str) -> str:
    """The file name of the object with this SHA-256 (a hex digest, checked: it names a file)."""
    if not _HASH.fullmatch(content_hash):
        raise StoreError(f"not a SHA-256 content hash: {content_hash[:80]!r}")
    return f"{content_hash}.txt"


def sha256_fd(fd: int) -> str:
    """The SHA-256 of the whole file open at ``fd`` (read with ``pread``: the offset is untouched)."""
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, _CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


class ObservationStore:
    """The objects and the ledger of one runtime root."""

    def __init__(self, root: RuntimeRoot) -> None:
        self.root = root

    @property
    def objects_path(self) -> str:
        return os.path.join(self.root.path, PACK_DIR, OBJECTS_DIR)

    def object_path(self, content_hash: str) -> str:
        return os.path.join(self.objects_path, object_name(content_hash))

    @property
    def ledger_path(self) -> str:
        return os.path.join(self.root.path, PACK_DIR, LEDGER_FILE)

    def _directory(
        self, parts: tuple[str, ...], create: bool, obs_id: str = ""
    ) -> contextlib.AbstractContextManager[int]:
        """The opened directory ``root/parts``, each level opened below the previous one."""
        return private_directory(
            self.root,
            parts,
            create=create,
            label=lambda walked: f"Observation directory is not a regular directory for {obs_id or walked}",
        )

    def objects_dir(self, create: bool, obs_id: str = "") -> contextlib.AbstractContextManager[int]:
        return self._directory((PACK_DIR, OBJECTS_DIR), create, obs_id)

    def pack_dir(self, create: bool) -> contextlib.AbstractContextManager[int]:
        return self._directory((PACK_DIR,), create)

    # -- objects -------------------------------------------------------------------------------

    def ensure_stored(self, obs_id: str, data: bytes, content_hash: str) -> None:
        """Publish ``data`` (whose SHA-256 is ``content_hash``) as its object, or verify the object
        already there (never overwrite it). ``obs_id`` names the observation in errors."""
        name = object_name(content_hash)
        with self.objects_dir(True, obs_id) as directory:
            if publish_file(directory, name, data):
                return
            # A pipe, socket or device in the object's place counts as missing: stored again.
            if remove_special(directory, name) and publish_file(directory, name, data):
                return
            self._verify(directory, name, obs_id, len(data), content_hash)

    def _verify(self, directory: int, name: str, obs_id: str, size: int, content_hash: str) -> None:
        try:
            fd = open_no_follow(name, os.O_RDONLY, dir_fd=directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP or isinstance(exc, StoreError | NotRegularFileError):
                raise StoreError(
                    f"Content-addressed observation is not a regular file for {obs_id}", "ELOOP"
                ) from exc
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StoreError(f"Content-addressed observation is not a regular file for {obs_id}")
            if info.st_size != size:
                raise StoreError(f"Content-addressed observation size mismatch for {obs_id}")
            if sha256_fd(fd) != content_hash:
                raise StoreError(f"Content-addressed observation hash mismatch for {obs_id}")
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def open_object(self, obs_id: str, content_hash: str | None = None) -> Iterator[tuple[int, int]]:
        """``(fd, size)`` of the object of ``obs_id`` for reading: the one named by ``content_hash``,
        else one an older archive stored under the observation id.

        Raises:
            FileNotFoundError: the object (or its directory) does not exist, or a named pipe, a
                socket or a device is in its place (never opened: it counts as missing).
            StoreError: the path is a symbolic link (``ELOOP``) or a directory.
        """
        with self.objects_dir(False, obs_id) as directory:
            name = f"{obs_id}.txt"
            if content_hash is not None:
                try:
                    info = os.lstat(object_name(content_hash), dir_fd=directory)
                    name = object_name(content_hash)
                except FileNotFoundError:
                    info = os.lstat(name, dir_fd=directory)
            else:
                info = os.lstat(name, dir_fd=directory)
            if stat.S_ISLNK(info.st_mode):
                raise StoreError(f"Stored observation is a symbolic link: {obs_id}", "ELOOP")
            if stat.S_ISDIR(info.st_mode):
                raise StoreError(f"Stored observation is not a regular file: {obs_id}")
            if not stat.S_ISREG(info.st_mode):
                raise FileNotFoundError(
                    errno.ENOENT,
                    f"Stored observation is {file_kind(info.st_mode)}, not a regular file: {obs_id}",
                )
            try:
                fd = open_no_follow(name, os.O_RDONLY, dir_fd=directory)
            except NotRegularFileError as exc:  # swapped since the lstat
                raise StoreError(f"Stored observation changed while open: {obs_id}") from exc
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise StoreError(f"Stored observation is a symbolic link: {obs_id}", "ELOOP") from exc
                raise
            try:
                opened = os.fstat(fd)
                if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
                    info.st_dev,
                    info.st_ino,
                ):
                    raise StoreError(f"Stored observation changed while open: {obs_id}")
                yield fd, opened.st_size
            finally:
                os.close(fd)

    # -- ledger --------------------------------------------------------------------------------

    def read_ledger(self) -> bytes:
        """The ledger's bytes (``b""`` when there is none yet)."""
        try:
            with self.pack_dir(False) as directory:
                fd = open_no_follow(LEDGER_FILE, os.O_RDONLY, dir_fd=directory)
        except FileNotFoundError:
            return b""
        try:
            parts = []
            while chunk := os.read(fd, _CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        finally:
            os.close(fd)

    def append_ledger(self, data: bytes) -> None:
        """Append ``data`` (whole JSON lines) to the ledger with one write."""
        if not data:
            return
        with self.pack_dir(True) as directory:
            fd = open_no_follow(LEDGER_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600, dir_fd=directory)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
