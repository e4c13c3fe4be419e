"""Errors of the session store.

::

    ValueError
    └── SessionError          a session file or entry cannot be used as asked (message names it and the fix)
        ├── NotASessionError  the file exists but is not a pi/tau session (first JSON line is no header)
        └── SessionLockedError another tau process is appending to the file (``holder_pid`` names it)
"""

from __future__ import annotations

__all__ = ["NotASessionError", "SessionError", "SessionLockedError"]


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
