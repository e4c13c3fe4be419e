"""Session store: pi-compatible JSONL session trees and their projection to model messages.

The public surface: :class:`SessionManager` (open, create, append, navigate, project), the errors,
:class:`SessionInfo` for listings, and the path helpers.
"""

from tau.session.errors import NotASessionError, SessionError, SessionLockedError
from tau.session.listing import SessionInfo
from tau.session.manager import SessionManager
from tau.session.migrate import CURRENT_VERSION
from tau.session.paths import agent_dir, default_session_dir

__all__ = [
    "CURRENT_VERSION",
    "NotASessionError",
    "SessionError",
    "SessionInfo",
    "SessionLockedError",
    "SessionManager",
    "agent_dir",
    "default_session_dir",
]
