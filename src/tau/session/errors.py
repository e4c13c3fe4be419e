"""Errors of the session store.

::

    ValueError
    └── SessionError          a session file or entry cannot be used as asked (message names it and the fix)
        ├── NotASessionError  the file exists but is not a pi/tau session (first JSON line is no header)
        ├── SessionLockedError another tau process is appending to the file (``holder_pid`` names it)
        └── SessionWriteError the file could not be written (full disk, read-only): the session is no
                              longer being saved; the entries not written are kept in memory
    FileExistsError (OSError)
    └── SessionFileExistsError a new session's file was created by another process first
"""

from __future__ import annotations

import errno

__all__ = [
    "NotASessionError",
    "SessionError",
    "SessionFileExistsError",
    "SessionLockedError",
    "SessionWriteError",
]


class SessionError(ValueError):
    """A session file or entry cannot be used as asked.

    A ``ValueError`` (a bad value from the user: a path, an id), so the modes' start-up boundary, which
    reports ``ValueError`` as one line on stderr and exit 1, reports ``tau --session FILE`` on a locked
    file or a file that is not a session the same way instead of with a traceback.
    """


class NotASessionError(SessionError):
    """The file is not a session file: refused without touching it."""


class SessionLockedError(SessionError):
    """Another tau process holds the write lock of the session file."""

    def __init__(self, message: str, holder_pid: int | None = None) -> None:
        super().__init__(message)
        self.holder_pid = holder_pid


class SessionFileExistsError(FileExistsError):
    """A session file tau was about to create exists already: another process created it first.

    Two sessions started on one path (``tau --session new.jsonl`` twice at once): the first to write
    creates the file, the second gets this error instead of a bare ``EEXIST``, and writes nothing
    there (pi 1.6 creates the file the same exclusive way and fails with the bare ``EEXIST``). An
    ``OSError``, like any other failure to write the session.
    """

    def __init__(self, path: str) -> None:
        self.message = (
            f"cannot create session file {path!r}: another process created it first (two sessions "
            "started on the same path); nothing of this session was written to it. Start this session "
            "again with another --session path, or without one for a new file"
        )
        super().__init__(errno.EEXIST, self.message, path)

    def __str__(self) -> str:
        return self.message


class SessionWriteError(SessionError):
    """Writing the session file failed (a full disk, a read-only file or file system).

    The entries that could not be written stay in memory, in order (``unsaved`` counts them), and
    the session manager writes them with the next append, or :meth:`SessionManager.save_unsaved`,
    once the file can be written again. ``entry_id`` is the id of the entry whose append failed
    (it is in the session, unsaved). ``refusing`` names an action refused because of the unsaved
    entries (the message then says so).
    """

    def __init__(self, path: str, cause: OSError, unsaved: int, *, refusing: str | None = None) -> None:
        reason = cause.strerror or str(cause) or type(cause).__name__
        if refusing is None:
            entries = "1 entry is" if unsaved == 1 else f"{unsaved} entries are"
            message = (
                f"cannot write session file {path!r}: {reason}. The session is no longer being saved: "
                f"{entries} kept in memory and written once the file can be written again "
                "(free disk space or make the file writable)."
            )
        else:
            entries = "1 entry" if unsaved == 1 else f"{unsaved} entries"
            message = (
                f"cannot {refusing}: session file {path!r} still cannot be written ({reason}), so the "
                f"session is not being saved and {entries} wait in memory. Free disk space or make the "
                "file writable, then try again."
            )
        super().__init__(message)
        self.path = path
        self.cause = cause
        self.unsaved = unsaved
        self.entry_id: str | None = None
