"""What the session picker does to a session file: delete it, or name it (pi 1.6's Ctrl+D and Ctrl+R).

pi moves the file to the trash with the ``trash`` command when it is installed and unlinks it
otherwise; so does tau. Deleting is the one destructive act of the picker, so tau refuses anything
but a session file of the sessions folder it listed: a link, another kind of file, a file elsewhere,
a file whose first line is not a session header, the session open in this process, or one another
tau process is writing (its lock). Naming appends pi's ``session_info`` entry (``name``) through the
session store, so the file stays one pi opens.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from tau.session.errors import SessionError
from tau.session.listing import read_header
from tau.session.lock import lock_holder_pid
from tau.session.manager import SessionManager

try:
    import fcntl
except ImportError:  # Windows: no flock; nothing to ask
    fcntl = None  # type: ignore[assignment]

__all__ = ["TRASHED", "UNLINKED", "delete_session_file", "rename_session_file"]

TRASHED, UNLINKED = "trash", "unlink"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_TRASH_TIMEOUT = 60.0  # seconds; a trash command that hangs must not hang the terminal for ever


def _inside(path: Path, folders: Iterable[str | os.PathLike[str]]) -> bool:
    """``path`` lies in one of ``folders`` or in a folder directly inside one (``sessions/<cwd>/``)."""
    for folder in folders:
        if not os.fspath(folder):
            continue  # "" would be the current directory
        root = Path(os.path.realpath(folder))
        if path.parent == root or path.parent.parent == root:
            return True
    return False


def _checked(
    path: str | os.PathLike[str], folders: Sequence[str | os.PathLike[str]], open_file: str | None
) -> Path:
    """The file to delete, with every link in its folders resolved; raises when it must not be deleted."""
    given = Path(os.path.abspath(path))
    try:
        info = os.lstat(given)
    except FileNotFoundError:
        raise SessionError(f"{given} no longer exists") from None
    if stat.S_ISLNK(info.st_mode):
        raise SessionError(f"{given} is a symbolic link, not a session file; nothing was deleted")
    if not stat.S_ISREG(info.st_mode):
        raise SessionError(f"{given} is not a regular file; nothing was deleted")
    real = Path(os.path.realpath(given.parent)) / given.name
    if real.suffix != ".jsonl" or not _inside(real, folders):
        shown = ", ".join(str(folder) for folder in folders) or "(none)"
        raise SessionError(f"{given} is not a session file of {shown}; nothing was deleted")
    if read_header(real) is None:
        raise SessionError(f"{given} does not start with a session header; nothing was deleted")
    if open_file:
        with contextlib.suppress(OSError):
            if os.path.samefile(real, open_file):
                raise SessionError("Cannot delete the currently active session")
    return real


def _trash(command: Sequence[str], path: Path) -> bool:
    """Run the trash command on ``path``; True when the file is gone afterwards."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [*command, "--", str(path)] if path.name.startswith("-") else [*command, str(path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TRASH_TIMEOUT,
            check=False,
        )
    return not os.path.lexists(path)


def delete_session_file(
    path: str | os.PathLike[str],
    *,
    folders: Sequence[str | os.PathLike[str]],
    open_file: str | None = None,
    trash: Sequence[str] | None = None,
) -> str:
    """Delete the session file ``path``: to the trash when a ``trash`` command exists, else for good.

    Args:
        path: The session file.
        folders: The sessions folders it may be in (directly, or in a folder directly inside one).
        open_file: The session file open in this process: never deleted.
        trash: The trash command (default: ``trash`` on ``PATH``, as pi; ``()``: none, unlink).

    Returns:
        :data:`TRASHED` or :data:`UNLINKED`.

    Raises:
        SessionError: the file must not be deleted (the message says why), or could not be.
    """
    real = _checked(path, folders, open_file)
    command = list(trash) if trash is not None else [found] if (found := shutil.which("trash")) else []
    try:
        fd = os.open(real, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SessionError(f"{real}: {exc.strerror or exc}") from exc
    try:
        if fcntl is not None:
            try:  # held while the file goes, so no tau starts writing it meanwhile
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    holder = lock_holder_pid(fd)
                    who = f"tau process {holder}" if holder is not None else "another tau process"
                    raise SessionError(f"the session is open in {who}; nothing was deleted") from exc
        if not os.path.samestat(os.fstat(fd), os.lstat(real)):
            raise SessionError(f"{real} changed while it was being deleted; nothing was deleted")
        if command and _trash(command, real):
            return TRASHED
        try:
            os.unlink(real)
        except FileNotFoundError:
            return UNLINKED
        except OSError as exc:
            raise SessionError(exc.strerror or str(exc)) from exc
        return UNLINKED
    finally:
        os.close(fd)


def rename_session_file(path: str | os.PathLike[str], name: str) -> str:
    """Name the session in ``path``: pi's ``session_info`` entry appended to its file; the name stored.

    Raises:
        SessionError: the name is empty, the file is not a session, or another tau process writes it.
    """
    if not " ".join(name.split()):
        raise SessionError("a session name cannot be empty")
    if read_header(Path(path)) is None:  # opening a missing file would make a new session there
        raise SessionError(f"{path} is not a session file (gone, a link, or no session header)")
    with SessionManager.open(path) as manager:
        manager.append_session_info(name)
        return manager.get_session_name() or ""
