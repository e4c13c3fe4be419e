"""Private, no-follow directories and files under a runtime root: every archive writer under ``sol/``.

The rules every context-economy archive follows (the reducer's, ObservationPack's):

- The trusted base (the session dir; a temp dir for a session without one) is opened as it is: an agent
  dir or session dir that is itself a symbolic link stays allowed.
- Every directory below it (``sol``, ``sol/<sessionId>``, then the mechanism's own) is opened relative
  to the one above with ``O_NOFOLLOW | O_DIRECTORY``, so a link at any of them is refused instead of
  followed, and checked again after it is opened (the name must still be the opened directory): a
  directory swapped underneath cannot redirect a write. Directories are created 0700.
- Files are created 0600, exclusively and without following links; :func:`publish_file` writes a
  private temporary name and publishes it with ``link`` (which never replaces a file), so a reader or
  a crash never leaves partial bytes under the final name.
- Files are opened without blocking and without following a link (:func:`open_no_follow`, through
  :func:`tau.common.regular_files.open_regular`): a named pipe, a device or a socket in place of a
  file is refused at once (``NotRegularFileError``) instead of blocking ``open()`` or being read
  without end. :func:`remove_special` takes such a thing away where an object belongs, so that an
  object in its place is stored again, as a deleted one is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator

from tau.bundled.sol_common.paths import RuntimeRoot
from tau.common.paths import make_private_dirs
from tau.common.regular_files import NotRegularFileError, open_regular

__all__ = [
    "NotRegularFileError",
    "PrivatePathError",
    "guard_no_follow",
    "open_no_follow",
    "private_directory",
    "publish_file",
    "remove_special",
    "write_all",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class PrivatePathError(OSError):
    """A path under the runtime root that tau refuses (a link, not a directory, changed while open).

    ``code`` is the errno name (``ELOOP``, ``ENOTDIR``) when there is one; ``str()`` is the message.
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(errno.__dict__.get(code or "", 0) or None, message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


def runtime_dir_message(path: str) -> str:
    """The refusal of ``sol`` or ``sol/<sessionId>`` (or a mechanism's directory without its own label)."""
    return (
        f"SoL runtime directory is not a regular directory: {path} (a symbolic link or another kind of "
        "file; tau never writes through it: replace it with a real directory)"
    )


def guard_no_follow(path: str, *, dir_fd: int | None = None) -> None:
    """Where ``O_NOFOLLOW`` does not exist (Windows): refuse a symlink as the flag would (``ELOOP``).

    An absent path passes (the open that follows reports it); other errors propagate.
    """
    try:
        info = os.lstat(path, dir_fd=dir_fd) if dir_fd is not None else os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise PrivatePathError(f"Refusing to follow a symbolic link: {path}", "ELOOP")


def open_no_follow(name: str, flags: int, mode: int = 0o600, *, dir_fd: int) -> int:
    """``os.open`` of ``name`` in ``dir_fd`` that never follows a link at ``name`` and never blocks.

    A directory is opened with ``O_DIRECTORY`` in ``flags``; anything else must be a regular file
    (``NotRegularFileError`` otherwise, an ``OSError``: a link gives ``ELOOP``).
    """
    if not _NOFOLLOW:
        guard_no_follow(name, dir_fd=dir_fd)
    if _DIRECTORY and flags & _DIRECTORY:
        return os.open(name, flags | _NOFOLLOW, mode, dir_fd=dir_fd)
    return open_regular(name, flags, mode, dir_fd=dir_fd)


def remove_special(directory: int, name: str) -> bool:
    """Remove ``name`` from ``directory`` when it is a named pipe, a socket or a device.

    Where tau keeps a regular file such a thing is never tau's own; it is taken away (the name
    only: ``unlink`` never follows it) so the file can be stored again. A link or a directory is
    left in place (refused by whoever opens it). Returns whether something was removed.
    """
    try:
        info = os.lstat(name, dir_fd=directory)
    except FileNotFoundError:
        return False
    mode = info.st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        return False
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=directory)
    return True


def _open_child_dir(parent: int, name: str, create: bool, label: str) -> int:
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=parent)
    try:
        fd = open_no_follow(name, os.O_RDONLY | _DIRECTORY, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) or isinstance(exc, PrivatePathError):
            raise PrivatePathError(label, "ENOTDIR") from exc
        raise
    opened, current = os.fstat(fd), os.lstat(name, dir_fd=parent)
    if not stat.S_ISDIR(current.st_mode) or (opened.st_dev, opened.st_ino) != (
        current.st_dev,
        current.st_ino,
    ):
        os.close(fd)
        raise PrivatePathError(f"{label} (changed while open)", "ENOTDIR")
    return fd


def _open_base(root: RuntimeRoot, create: bool) -> int:
    base = root.base
    if create:
        make_private_dirs(base)  # the session dir itself, 0700 as the session store creates it
    return os.open(base, os.O_RDONLY | _DIRECTORY)


@contextlib.contextmanager
def private_directory(
    root: RuntimeRoot,
    parts: tuple[str, ...],
    *,
    create: bool,
    label: Callable[[str], str] | None = None,
) -> Iterator[int]:
    """The opened directory ``root/parts`` (a file descriptor), each level opened below the last.

    Args:
        root: The runtime root; its ``parts`` (``sol``, ``<sessionId>``) come first.
        parts: The mechanism's directories below the runtime root.
        create: Create missing directories (0700); without it a missing one raises
            ``FileNotFoundError``.
        label: The refusal message for a directory of ``parts`` (given its path); the runtime
            directories always get :func:`runtime_dir_message`.

    Raises:
        PrivatePathError: a directory on the way is a link or not a directory, or changed while open.
    """
    fd = _open_base(root, create)
    try:
        walked = root.base
        for index, name in enumerate((*root.parts, *parts)):
            walked = os.path.join(walked, name)
            message = runtime_dir_message(walked)
            if label is not None and index >= len(root.parts):
                message = label(walked)
            child = _open_child_dir(fd, name, create, message)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def publish_file(directory: int, name: str, data: bytes) -> bool:
    """Publish ``data`` as ``name`` in ``directory`` (0600, whole or not at all).

    Returns ``True`` when this call published it, ``False`` when something named ``name`` already
    exists (never replaced: the caller verifies it).
    """
    temporary = f".{name}.{os.urandom(6).hex()}.tmp"  # what secrets.token_hex(6) reads, without its imports
    fd = open_no_follow(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=directory)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.link(temporary, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
    return True
