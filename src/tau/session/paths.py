"""Where sessions live: the agent dir, the per-cwd session dir and session file names (pi-host §2.1)."""

from __future__ import annotations

import os
from pathlib import Path

from tau.common.lazy_regex import lazy_pattern
from tau.common.paths import agent_dir, resolve_path

__all__ = ["agent_dir", "default_session_dir", "resolve_path", "session_file_name", "sessions_root"]

_LEADING_SEPARATOR = lazy_pattern(r"^[/\\]")
_SEPARATORS = lazy_pattern(r"[/\\:]")


def sessions_root(agent: Path | None = None) -> Path:
    """``<agentDir>/sessions``."""
    return (agent or agent_dir()) / "sessions"


def default_session_dir(cwd: str | os.PathLike[str], agent: Path | None = None) -> Path:
    """``<agentDir>/sessions/--<cwd with separators and ':' as '-'>--`` (not created here)."""
    resolved = str(resolve_path(cwd))
    encoded = _SEPARATORS.sub("-", _LEADING_SEPARATOR.sub("", resolved))
    return sessions_root(resolve_path(agent) if agent else None) / f"--{encoded}--"


def session_file_name(timestamp: str, session_id: str) -> str:
    """``2026-11-29T23-42-14-169Z_<id>.jsonl`` from the header's ISO timestamp and the session id."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
