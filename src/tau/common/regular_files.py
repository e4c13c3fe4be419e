"""Opening tau's own files (session files, archived objects, ledgers) without blocking or following links.

A named pipe planted where tau expects one of its files would block ``open()`` until a writer
came (for good); a device would be read without end; a symbolic link would send the read or the
write elsewhere. :func:`open_regular` opens with ``O_NONBLOCK`` (a pipe opens at once instead of
waiting) and ``O_NOFOLLOW`` (a link at the last component is refused), then checks with ``fstat``
that what it opened is a regular file; anything else is closed again and refused with
:class:`NotRegularFileError`, which names the file and what it is. ``O_NONBLOCK`` is cleared on the
descriptor it returns (regular files ignore it anyway). Directories above the file are followed as
given: a session folder that is itself a link stays usable.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["NotRegularFileError", "file_kind", "open_regular", "read_all", "read_regular"]

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in words (``"a named pipe"``, ``"a regular file"``)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


class NotRegularFileError(OSError):
    """tau refused to open one of its files: it is a link, a pipe, a device, a directory, ...

    ``path`` is the name given, ``kind`` what it is (:func:`file_kind`); ``str()`` says both.
    """

    def __init__(self, path: str, kind: str) -> None:
        code = errno.ELOOP if kind == "a symbolic link" else errno.EINVAL
        super().__init__(code, f"{path} is {kind}, not a regular file; tau does not open it")
        self.path = path
        self.kind = kind
        self.message = f"{path} is {kind}, not a regular file; tau does not open it"

    def __str__(self) -> str:
        return self.message


def _kind_at(path: str | os.PathLike[str], dir_fd: int | None) -> str | None:
    try:
        info = os.lstat(path, dir_fd=dir_fd) if dir_fd is not None else os.lstat(path)
    except OSError:
        return None
    return None if stat.S_ISREG(info.st_mode) else file_kind(info.st_mode)


def open_regular(
    path: str | os.PathLike[str],
    flags: int = os.O_RDONLY,
    mode: int = 0o600,
    *,
    dir_fd: int | None = None,
    follow: bool = False,
) -> int:
    """``os.open(path, flags)`` of a regular file only: never blocks, never follows a link at ``path``.

    ``follow=True`` follows a link at ``path`` (a configuration file a dotfiles manager links in);
    what it leads to must still be a regular file.

    Raises:
        NotRegularFileError: ``path`` is a link, a pipe, a device, a socket or a directory.
        OSError: as ``os.open`` (``FileNotFoundError``, ``PermissionError``, ...).
    """
    name = os.fspath(path)
    nofollow = 0 if follow else _NOFOLLOW
    if not _NOFOLLOW and not follow:  # Windows: refuse a link as the flag would
        kind = _kind_at(name, dir_fd)
        if kind == "a symbolic link":
            raise NotRegularFileError(name, kind)
    try:
        fd = os.open(name, flags | _NONBLOCK | nofollow | _CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        # ELOOP: a link (O_NOFOLLOW); ENXIO: a pipe with no reader or a socket (write, non-blocking);
        # EISDIR: a directory opened for writing.
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):
            kind = _kind_at(name, dir_fd)
            if kind is not None:
                raise NotRegularFileError(name, kind) from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(name, file_kind(info.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: str | os.PathLike[str], *, dir_fd: int | None = None, limit: int | None = None, follow: bool = False
) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them), opened by :func:`open_regular`."""
    fd = open_regular(path, dir_fd=dir_fd, follow=follow)
    try:
        return read_all(fd, limit)
    finally:
        os.close(fd)


def read_all(fd: int, limit: int | None = None) -> bytes:
    """What is left to read on ``fd`` (at most ``limit`` bytes)."""
    parts: list[bytes] = []
    left = limit if limit is not None else -1
    while left != 0:
        chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
        if not chunk:
            break
        parts.append(chunk)
        if left > 0:
            left -= len(chunk)
    return b"".join(parts)
