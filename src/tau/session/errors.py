"""Errors of the session store.

::

    ValueError
    └── SessionError          a session file or entry cannot be used as asked (message names it and the fix)
        ├── NotASessionError  the file exists but is not a pi/tau session (first JSON line is no header)
        └── SessionLockedError another tau process is appending to the file (``holder_pid`` names it)
    FileExistsError (OSError)
    └── SessionFileExistsError a new session's file was created by another process first
"""

from __future__ import annotations

import errno

__all__ = ["NotASessionError", "SessionError", "SessionFileExistsError", "SessionLockedError"]


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
