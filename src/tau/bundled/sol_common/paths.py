"""Where the context-economy archives live: ``<sessionDir>/sol/<sessionId>/`` (decisions.md).

A session without a directory (``--no-session``, in-memory) gets one private temporary directory
per session id, ``<tmp>/sol-<sessionId>-<random>/``, shared by every mechanism of this process
and kept after shutdown (extensions.md §5.2). Archives are never deleted automatically.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass

__all__ = ["RuntimeRoot", "SolPathError", "runtime_root"]

_SAFE_SESSION_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$", re.IGNORECASE)
_temporary_roots: dict[str, str] = {}


class SolPathError(ValueError):
    """A session whose id cannot name a directory safely."""


@dataclass(frozen=True)
class RuntimeRoot:
    """A runtime root as a trusted base directory plus the parts below it that tau creates.

    Attributes:
        base: A directory that is taken as it is (the session dir, or the private temp dir).
        parts: Directories below ``base`` that must never be links (``("sol", <id>)`` or ``()``).
    """

    base: str
    parts: tuple[str, ...]

    @property
    def path(self) -> str:
        return os.path.join(self.base, *self.parts)


def runtime_root(session_dir: str | None, session_id: str) -> RuntimeRoot:
    """The runtime root of a session; raises :class:`SolPathError` for an unsafe session id."""
    if not _SAFE_SESSION_ID.match(session_id or ""):
        raise SolPathError("SoL-Pi requires a safe session id")
    if session_dir:
        return RuntimeRoot(session_dir, ("sol", session_id))
    root = _temporary_roots.get(session_id)
    if root is None or not os.path.isdir(root):
        root = tempfile.mkdtemp(prefix=f"sol-{session_id}-")
        _temporary_roots[session_id] = root
    return RuntimeRoot(root, ())
