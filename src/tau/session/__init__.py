"""Session store: pi-compatible JSONL session trees and their projection to model messages.

The public surface: :class:`SessionManager` (open, create, append, navigate, project), the errors,
:class:`SessionInfo` for listings, and the path helpers.

The names below are imported on first use: a run that lists no sessions never loads the listing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from tau.session.errors import NotASessionError, SessionError, SessionLockedError
    from tau.session.listing import SessionInfo
    from tau.session.manager import SessionManager
    from tau.session.migrate import CURRENT_VERSION
    from tau.session.paths import agent_dir, default_session_dir

_EXPORTS: dict[str, str] = {
    "CURRENT_VERSION": "tau.session.migrate",
    "NotASessionError": "tau.session.errors",
    "SessionError": "tau.session.errors",
    "SessionInfo": "tau.session.listing",
    "SessionLockedError": "tau.session.errors",
    "SessionManager": "tau.session.manager",
    "agent_dir": "tau.session.paths",
    "default_session_dir": "tau.session.paths",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tau.session' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
