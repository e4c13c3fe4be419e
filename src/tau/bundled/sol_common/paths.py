"""Where the context-economy archives live: ``<sessionDir>/sol/<sessionId>/`` (decisions.md).

A session without a directory (``--no-session``, in-memory) gets one private temporary directory
per session id, ``<tmp>/sol-<sessionId>-<random>/``, shared by every mechanism of this process
and kept after shutdown (extensions.md §5.2). Archives are never deleted automatically.
"""

from __future__ import annotations

import os
import re

from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = ["RuntimeRoot", "SolPathError", "runtime_root"]

_SAFE_SESSION_ID = lazy_pattern(r"^[a-z0-9][a-z0-9._-]*$", re.IGNORECASE)
_temporary_roots: dict[str, str] = {}


class SolPathError(ValueError):
    """A session whose id cannot name a directory safely."""


@dataclass(frozen=True)
class RuntimeRoot:
    """A runtime root as a trusted base directory plus the parts below it that tau creates.

    Attributes:
        session_dir: The session dir (``""`` for a session without one).
        session_id: The session id (already checked to be safe).
        parts: Directories below the base that must never be links (``("sol", <id>)`` or ``()``).
    """

    session_dir: str
    session_id: str
    parts: tuple[str, ...]

    @property
    def key(self) -> str:
        """Names the root without creating anything (a session without a dir gets ``memory:<id>``)."""
        return (
            os.path.join(self.session_dir, *self.parts) if self.session_dir else f"memory:{self.session_id}"
        )

    @property
    def base(self) -> str:
        """The trusted base directory; a session without a dir gets its private temp dir here, once."""
        if self.session_dir:
            return self.session_dir
        root = _temporary_roots.get(self.session_id)
        if root is None or not os.path.isdir(root):
            import tempfile  # a session without a dir only: tempfile (random, shutil) is slow to import

            root = tempfile.mkdtemp(prefix=f"sol-{self.session_id}-")
            _temporary_roots[self.session_id] = root
        return root

    @property
    def path(self) -> str:
        return os.path.join(self.base, *self.parts)


def runtime_root(session_dir: str | None, session_id: str) -> RuntimeRoot:
    """The runtime root of a session; raises :class:`SolPathError` for an unsafe session id.

    Nothing is created here: a session without a dir gets its temp dir when something is stored.
    """
    if not _SAFE_SESSION_ID.match(session_id or ""):
        raise SolPathError("SoL-Pi requires a safe session id")
    if session_dir:
        return RuntimeRoot(session_dir, session_id, ("sol", session_id))
    return RuntimeRoot("", session_id, ())
