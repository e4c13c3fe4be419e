"""File-system errors worded as Node words them, because the model reads pi's texts verbatim.

Node: ``ENOENT: no such file or directory, access '/tmp/proj/nope.txt'``; Python:
``[Errno 2] No such file or directory: '/tmp/proj/nope.txt'``. Tools translate at the point of the
system call, so the message names the call pi's tool made.
"""

from __future__ import annotations

import errno

__all__ = ["FileSystemError", "fs_error"]

# libuv's descriptions (uv_strerror) for the codes a file tool meets.
_DESCRIPTIONS = {
    "ENOENT": "no such file or directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EISDIR": "illegal operation on a directory",
    "ENOTDIR": "not a directory",
    "EEXIST": "file already exists",
    "ELOOP": "too many symbolic links encountered",
    "ENAMETOOLONG": "name too long",
    "EROFS": "read-only file system",
    "ENOSPC": "no space left on device",
    "EMFILE": "too many open files",
    "EBUSY": "resource busy or locked",
    "EINVAL": "invalid argument",
    "EIO": "i/o error",
    "ETXTBSY": "text file is busy",
    "EXDEV": "cross-device link not permitted",
}


class FileSystemError(Exception):
    """A failed file-system call; ``str()`` is Node's message and ``code`` its error code."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def fs_error(exc: OSError, syscall: str, path: str | None = None) -> FileSystemError:
    """``exc`` as Node reports it: ``CODE: description, syscall 'path'`` (no path for ``read``)."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    description = _DESCRIPTIONS.get(code) or (exc.strerror or code).lower()
    where = syscall if path is None else f"{syscall} '{path}'"
    return FileSystemError(f"{code}: {description}, {where}", code)
