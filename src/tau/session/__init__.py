"""Session store: pi-compatible JSONL session trees and their projection to model messages.

The public surface: :class:`SessionManager` (open, create, append, navigate, project), the errors,
:class:`SessionInfo` for listings, and the path helpers.

The names below are imported on first use: a run that lists no sessions never loads the listing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.session.errors import (
        NotASessionError,
        SessionError,
        SessionFileExistsError,
        SessionLockedError,
        SessionWriteError,
    )
    from tau.session.listing import SessionInfo
    from tau.session.manager import SessionManager
    from tau.session.migrate import CURRENT_VERSION
    from tau.session.paths import agent_dir, default_session_dir

_EXPORTS: dict[str, str] = {
    "CURRENT_VERSION": "tau.session.migrate",
    "NotASessionError": "tau.session.errors",
    "SessionError": "tau.session.errors",
    "SessionFileExistsError": "tau.session.errors",
    "SessionInfo": "tau.session.listing",
    "SessionLockedError": "tau.session.errors",
    "SessionWriteError": "tau.session.errors",
    "SessionManager": "tau.session.manager",
    "agent_dir": "tau.session.paths",
    "default_session_dir": "tau.session.paths",
}

__all__ = [
    "CURRENT_VERSION",
    "NotASessionError",
    "SessionError",
    "SessionFileExistsError",
    "SessionInfo",
    "SessionLockedError",
    "SessionManager",
    "SessionWriteError",
    "agent_dir",
    "default_session_dir",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
