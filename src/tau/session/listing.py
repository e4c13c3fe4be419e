"""Finding sessions on disk: headers, the most recent session, ``SessionInfo`` lists (pi-host §2.7).

Discovery is best effort, as in pi: a file that cannot be read or has no header is not a session and
never stops the others from being found.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.jsstr import js_trim, ms_from_iso
from tau.common.regular_files import open_regular, read_all, read_regular
from tau.session import jsonl
from tau.session.messages import content_text
from tau.session.paths import default_session_dir, resolve_path, sessions_root

__all__ = [
    "SessionInfo",
    "find_by_id",
    "find_most_recent",
    "list_all_sessions",
    "list_sessions",
    "read_header",
    "uses_default_dir",
]

_HEADER_SCAN_LIMIT = 1024 * 1024
_NO_MESSAGES = "(no messages)"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SessionInfo:
    """One session file as the session pickers show it (pi's ``SessionInfo``)."""

    path: str
    id: str
    cwd: str  # "" for old sessions without one
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    all_messages_text: str


def _parse_or_none(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return jsonl.parse(raw)
    except ValueError:
        return None


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of ``path``: its first line that parses, if that is ``{"type":"session","id":<string>}``.

    Reads at most 1 MiB; ``None`` otherwise (also when the file cannot be read).
    """
    try:
        head = read_regular(path, limit=_HEADER_SCAN_LIMIT + 1)  # a pipe or a link: not a session
    except OSError:
        return None
    complete = len(head) <= _HEADER_SCAN_LIMIT
    lines = head.split(b"\n")
    if not complete:
        lines.pop()  # the last piece may be cut by the limit
    for raw in lines:
        value = _parse_or_none(raw)
        if value is None:
            continue
        if isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str):
            return value
        return None
    return None


def _same_path(left: str | os.PathLike[str], right: str | os.PathLike[str]) -> bool:
    return os.path.normcase(str(resolve_path(left))) == os.path.normcase(str(resolve_path(right)))


def uses_default_dir(directory: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> bool:
    """True when ``directory`` is ``cwd``'s default session dir."""
    return _same_path(directory, default_session_dir(cwd))


def _cwd_matches(header_cwd: Any, cwd: str | os.PathLike[str]) -> bool:
    return isinstance(header_cwd, str) and header_cwd != "" and _same_path(header_cwd, cwd)


def _jsonl_files(directory: Path) -> list[Path]:
    try:
        return [directory / name for name in os.listdir(directory) if name.endswith(".jsonl")]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("-inf")


def find_most_recent(
    directory: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None
) -> Path | None:
    """The most recently modified ``.jsonl`` in ``directory`` with a header (and, given ``cwd``, that cwd)."""
    files = sorted(_jsonl_files(resolve_path(directory)), key=_mtime, reverse=True)
    for path in files:
        header = read_header(path)
        if header is not None and (cwd is None or _cwd_matches(header.get("cwd"), cwd)):
            return path
    return None


def find_by_id(
    cwd: str | os.PathLike[str], session_id: str, session_dir: str | os.PathLike[str] | None = None
) -> str | None:
    """The path of the session whose header id is ``session_id``, reading headers only."""
    directory = resolve_path(session_dir) if session_dir is not None else default_session_dir(cwd)
    only_cwd = session_dir is not None and not uses_default_dir(directory, cwd)
    for path in _jsonl_files(directory):
        header = read_header(path)
        if header is None or header.get("id") != session_id:
            continue
        if only_cwd and not _cwd_matches(header.get("cwd"), cwd):
            continue
        return str(path)
    return None


def _datetime(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _iso_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return ms_from_iso(value)
    except (ValueError, OverflowError):
        return None


def session_info(path: Path) -> SessionInfo | None:
    """The :class:`SessionInfo` of one file, or ``None`` when it is not a session."""
    try:
        fd = open_regular(path)  # a pipe or a link in a session folder is no session
        try:
            stat = os.fstat(fd)
            data = read_all(fd)
        finally:
            os.close(fd)
    except OSError:
        return None
    header: dict[str, Any] | None = None
    name: str | None = None
    count = 0
    first = ""
    texts: list[str] = []
    last_activity: float | None = None  # ms; a file may hold a float timestamp
    for raw in data.split(b"\n"):
        value = _parse_or_none(raw)
        if not isinstance(value, dict):
            continue
        if header is None:
            if value.get("type") != "session" or not isinstance(value.get("id"), str):
                return None
            header = value
            continue
        kind = value.get("type")
        if kind == "session_info":
            raw_name = value.get("name")
            name = (js_trim(raw_name) if isinstance(raw_name, str) else "") or None
        if kind != "message":
            continue
        count += 1
        message = value.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        if "content" not in message:
            continue
        stamp = message.get("timestamp")
        activity = (
            stamp
            if isinstance(stamp, int | float) and not isinstance(stamp, bool)
            else _iso_ms(value.get("timestamp"))
        )
        if activity is not None:
            last_activity = max(last_activity or 0, activity)
        text = content_text(message.get("content"), " ")
        if not text:
            continue
        texts.append(text)
        if not first and message.get("role") == "user":
            first = text
    if header is None:
        return None
    created_ms = _iso_ms(header.get("timestamp"))
    if last_activity is not None and last_activity > 0:
        modified = _datetime(last_activity)
    elif created_ms is not None:
        modified = _datetime(created_ms)
    else:
        modified = _datetime(stat.st_mtime * 1000)
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=str(path),
        id=header["id"],
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=_datetime(created_ms) if created_ms is not None else modified,
        modified=modified,
        message_count=count,
        first_message=first or _NO_MESSAGES,
        all_messages_text=" ".join(texts),
    )


def _collect(files: list[Path], on_progress: Progress | None) -> list[SessionInfo]:
    found: list[SessionInfo] = []
    for done, path in enumerate(files, start=1):
        info = session_info(path)
        if info is not None:
            found.append(info)
        if on_progress is not None:
            on_progress(done, len(files))
    found.sort(key=lambda info: info.modified, reverse=True)  # stable: ties keep the file order
    return found


def list_sessions(
    cwd: str | os.PathLike[str],
    session_dir: str | os.PathLike[str] | None = None,
    on_progress: Progress | None = None,
) -> list[SessionInfo]:
    """Sessions of ``cwd`` (its default dir, or ``session_dir`` filtered by cwd), most recent first."""
    directory = resolve_path(session_dir) if session_dir is not None else default_session_dir(cwd)
    only_cwd = session_dir is not None and not uses_default_dir(directory, cwd)
    files = sorted(_jsonl_files(directory), key=lambda path: path.name, reverse=True)
    sessions = _collect(files, on_progress)
    return [info for info in sessions if not only_cwd or _cwd_matches(info.cwd, cwd)]


def list_all_sessions(
    session_dir: str | os.PathLike[str] | None = None, on_progress: Progress | None = None
) -> list[SessionInfo]:
    """Every session under ``<agentDir>/sessions/*/`` (or in ``session_dir``), most recent first."""
    if session_dir is not None:
        files = sorted(_jsonl_files(resolve_path(session_dir)), key=lambda path: path.name, reverse=True)
        return _collect(files, on_progress)
    root = sessions_root()
    try:
        folders = [root / name for name in os.listdir(root) if (root / name).is_dir()]
    except OSError:
        return []
    files = [path for folder in folders for path in _jsonl_files(folder)]
    files.sort(key=lambda path: (_mtime(path), path.name), reverse=True)
    return _collect(files, on_progress)
