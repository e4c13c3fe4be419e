"""The writer of a session file: an append-only file descriptor under an advisory lock.

pi does not lock. tau takes ``flock(LOCK_EX | LOCK_NB)`` on the session file itself while it writes,
so a second tau writer fails at once with the holder's pid instead of interleaving lines, and the lock
dies with the process (no stale lock files after a crash). Readers never lock: a file that pi or
another tau is writing always opens read-only.
"""

from __future__ import annotations

import errno
import os
import weakref
from pathlib import Path

from tau.common.regular_files import open_regular
from tau.session.errors import SessionFileExistsError, SessionLockedError

try:
    import fcntl
except ImportError:  # Windows: no flock; tau writes without the lock there, as pi always does
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionWriter", "lock_holder_pid"]

_PROC_LOCKS = Path("/proc/locks")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NO_LOCKING = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}


def lock_holder_pid(fd: int) -> int | None:
    """The pid holding a ``flock`` on the file behind ``fd`` (Linux ``/proc/locks``), if it can be told."""
    try:
        stat = os.fstat(fd)
        table = _PROC_LOCKS.read_text()
    except OSError:
        return None
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5] == device and fields[4].isdigit():
            return int(fields[4])
    return None


class SessionWriter:
    """Appends whole lines to one session file while holding its lock.

    Every ``append`` is one ``write`` of complete lines, done before it returns. If it fails, the
    file is cut back to its previous length (best effort) so that no partial line is left behind.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    @classmethod
    def create(cls, path: Path, data: bytes) -> SessionWriter:
        """Create ``path`` exclusively, lock it, and write ``data``.

        Raises:
            SessionFileExistsError: ``path`` exists (another process created it first).
        """
        try:
            # 0600: a session holds whole tool outputs (environment dumps, logs with credentials);
            # pi leaves it to the umask (0644 as a rule). A rewrite keeps the old file's mode.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _CLOEXEC, 0o600)
        except FileExistsError as exc:
            raise SessionFileExistsError(str(path)) from exc
        writer = cls._locked(path, fd)
        try:
            writer.append(data)
        except BaseException:
            writer.close()
            try:
                os.unlink(path)
            except OSError:
                pass
            raise
        return writer

    @classmethod
    def open(cls, path: Path) -> SessionWriter:
        """Open the existing ``path`` for appending and lock it; ``SessionLockedError`` if tau holds it."""
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND)  # a regular file only: no pipe, no link
        return cls._locked(path, fd)

    @classmethod
    def _locked(cls, path: Path, fd: int) -> SessionWriter:
        if fcntl is None:
            return cls(path, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in _NO_LOCKING:
                return cls(path, fd)  # a filesystem without flock: write unlocked, as pi always does
            holder = lock_holder_pid(fd) if exc.errno in (errno.EAGAIN, errno.EACCES) else None
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            who = f"tau process {holder}" if holder is not None else "another tau process"
            raise SessionLockedError(
                f"session file {str(path)!r} is being written by {who}; "
                "close that session first, or open this one read-only",
                holder,
            ) from exc
        return cls(path, fd)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def append(self, data: bytes) -> None:
        """Write ``data`` (complete LF-terminated lines) at the end of the file before returning."""
        before = os.fstat(self._fd).st_size
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except BaseException:
            try:
                os.ftruncate(self._fd, before)
            except OSError:
                pass
            raise

    def close(self) -> None:
        """Release the lock and close the file (idempotent)."""
        self._finalizer()
