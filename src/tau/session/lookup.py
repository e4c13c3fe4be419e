"""A session named on the command line: a path, an id, or the start of an id (``--session``, ``--fork``,
``tau session info ID``).

As pi 1.6: something with a path separator or ending in ``.jsonl`` is a path; otherwise an exact id
of this directory's sessions, then an id prefix among them, then the same over every directory.
Unlike pi, which takes the newest match, a prefix that several sessions share is an error that lists
them: ids are time-ordered, so sessions started minutes apart share their first characters, and
appending to the wrong one is worse than asking for more of the id.
"""

from __future__ import annotations

import os
from pathlib import Path

from tau.common.dataclass import dataclass

__all__ = ["AmbiguousSessionError", "Found", "NoSessionError", "resolve_session"]

SHOWN_CANDIDATES = 10


class NoSessionError(ValueError):
    """Nothing matches."""


class AmbiguousSessionError(ValueError):
    """An id prefix that several sessions share; the message lists them."""


@dataclass(frozen=True)
class Found:
    """Where the session is, and whether it belongs to another directory than the one asked from."""

    path: str
    other_directory: str | None = None


def looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def resolve_session(value: str, cwd: str, session_dir: str | None = None) -> Found:
    """The session ``value`` names. Raises :class:`NoSessionError` or :class:`AmbiguousSessionError`."""
    if looks_like_path(value):
        return Found(str(Path(cwd, os.path.expanduser(value)).resolve()))
    # An id (or its prefix) is looked up in the listings.
    from tau.session.listing import find_by_id, list_all_sessions, list_sessions

    exact = find_by_id(cwd, value, session_dir)
    if exact:
        return Found(exact)
    local = list_sessions(cwd, session_dir)
    matches = [info for info in local if info.id.startswith(value)]
    if not matches:
        everywhere = list_all_sessions(session_dir)
        matches = [info for info in everywhere if info.id == value] or [
            info for info in everywhere if info.id.startswith(value)
        ]
    if not matches:
        raise NoSessionError(
            f"No session found matching '{value}' (use a file path, or an id from `tau session list`)"
        )
    if len({info.path for info in matches}) > 1:
        lines = [f"Session id '{value}' matches {len(matches)} sessions; give more of the id:"]
        for info in matches[:SHOWN_CANDIDATES]:
            text = info.name or info.first_message or "(no messages)"
            where = "" if _same(info.cwd, cwd) else f"  [{info.cwd}]"
            first = text.splitlines()[0] if text.strip() else ""
            shown = first if len(first) <= 60 else first[:59] + "…"
            lines.append(f"  {info.id}  {info.modified:%Y-%m-%d %H:%M}  {shown}{where}")
        if len(matches) > SHOWN_CANDIDATES:
            lines.append(f"  … and {len(matches) - SHOWN_CANDIDATES} more (tau session list --all)")
        raise AmbiguousSessionError("\n".join(lines))
    match = matches[0]
    return Found(match.path, None if not match.cwd or _same(match.cwd, cwd) else match.cwd)


def _same(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b
