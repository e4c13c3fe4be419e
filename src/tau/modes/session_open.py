"""Which session file a run opens, and in which directory it runs (pi 1.6's ``createSessionManager``).

``--fork`` copies a session into a new one of this directory; ``--session PATH|ID`` opens one;
``-c`` the newest of this directory; ``--session-id ID`` this directory's session with that id (made
when there is none); else a new session. A session runs in the directory its header names, as in pi
(:func:`tau.modes.runtime.open_runtime` reads that directory's settings, trust and context files).

Two cases need the user, as in pi: an id that only another directory's sessions match (pi asks
whether to fork it into this directory: ``Fork this session into current directory? [y/N]``), and a
session whose directory no longer exists (continue here, fork here, or cancel). The command line
asks them through :class:`StartupQuestions`; without one (the SDK), the session found elsewhere
opens in its own directory, as a path would, and a session whose directory is gone runs in ``cwd``
(``continue_when_gone``, as pi's ``createAgentSession``); other callers without questions get
:class:`MissingSessionCwdError`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "MissingSessionCwdError",
    "SessionNotOpened",
    "StartupQuestions",
    "missing_cwd_message",
    "open_session_file",
]


class SessionNotOpened(RuntimeError):
    """The user declined (no fork, cancel): the run ends with exit status 0 after its message (if any)."""

    def __init__(self, message: str = "Aborted.") -> None:
        super().__init__(message)


class MissingSessionCwdError(ValueError):
    """The session's working directory is gone and nobody can be asked what to do."""


class StartupQuestions(Protocol):
    """How the command line asks the user before a session starts."""

    def fork_from_other_directory(self, session_cwd: str, value: str, path: str) -> bool:
        """``--session ID`` matched only a session of ``session_cwd``: fork it into this directory?

        ``False`` ends the run (:class:`SessionNotOpened`). May raise ``ValueError`` when it cannot
        ask (the message says what to run instead)."""
        ...

    def missing_cwd(self, session_cwd: str, session_file: str, cwd: str) -> str | None:
        """The session's directory is gone: ``"continue"`` (here), ``"fork"`` (here), or ``None`` (cancel)."""
        ...


def missing_cwd_message(session_cwd: str, session_file: str, cwd: str) -> str:
    """pi 1.6's error for a session whose working directory no longer exists."""
    return (
        f"Stored session working directory does not exist: {session_cwd}\n"
        f"Session file: {session_file}\nCurrent working directory: {cwd}"
    )


def open_session_file(
    options: Any,
    cwd: str,
    session_dir: str | None,
    warnings: list[str],
    questions: StartupQuestions | None = None,
    *,
    continue_when_gone: bool = False,
) -> Any:
    """The :class:`~tau.session.manager.SessionManager` the run's options name (``cwd``: where tau was started).

    ``continue_when_gone``: a session whose directory is gone runs in ``cwd`` without asking (the SDK:
    pi 1.6 checks the directory only when its command line starts, ``createAgentSessionRuntime``; its
    ``createAgentSession`` runs where it is told, so a batch task's session continues after its scratch
    directory is gone).

    Raises ``ValueError`` for a bad option or a session that cannot be found, and
    :class:`SessionNotOpened` when the user chose not to go on.
    """
    from tau.session.ids import check_session_id
    from tau.session.manager import SessionManager

    if options.session_id is not None:
        check_session_id(options.session_id)
    if options.no_session:
        return SessionManager.in_memory(cwd, id=options.session_id)
    if options.fork:
        if options.session_id and SessionManager.find_by_id(cwd, options.session_id, session_dir):
            raise ValueError(f"Session already exists with id '{options.session_id}'")
        source = _resolve(options.fork, cwd, session_dir).path
        return SessionManager.fork_from(source, cwd, session_dir, id=options.session_id)
    if options.session:
        found = _resolve(options.session, cwd, session_dir)
        if found.other_directory and questions is not None:
            # pi 1.6: an id only another directory's sessions match is offered as a fork into this one.
            if not questions.fork_from_other_directory(found.other_directory, options.session, found.path):
                raise SessionNotOpened()
            return SessionManager.fork_from(found.path, cwd, session_dir)
        # A new file is a session of this run's cwd; an existing one keeps the cwd its header names.
        exists = os.path.exists(found.path)
        manager = SessionManager.open(found.path, session_dir, cwd_override=None if exists else cwd)
        if continue_when_gone and exists and not os.path.isdir(manager.get_cwd() or cwd):
            manager.close()
            return SessionManager.open(found.path, session_dir, cwd_override=cwd)
        return _where_it_ran(manager, cwd, session_dir, questions)
    if options.continue_:
        return SessionManager.continue_recent(cwd, session_dir)
    if options.session_id is not None:
        # pi 1.6: this directory's session with that id is reopened, else created (and said so).
        existing = SessionManager.find_by_id(cwd, options.session_id, session_dir)
        if existing:
            return SessionManager.open(existing, session_dir)
        warnings.append(
            f"No project session found with id '{options.session_id}'; creating a new session with that id."
        )
    return SessionManager.create(cwd, session_dir, id=options.session_id)


def _resolve(value: str, cwd: str, session_dir: str | None) -> Any:
    """A session path, id or unique id prefix (:func:`tau.session.lookup.resolve_session`)."""
    from tau.session.lookup import resolve_session

    return resolve_session(value, cwd, session_dir)


def _where_it_ran(manager: Any, cwd: str, session_dir: str | None, questions: StartupQuestions | None) -> Any:
    """``manager`` when its working directory exists; else what the user chose (pi 1.6's startup check)."""
    from tau.session.manager import SessionManager

    session_cwd = manager.get_cwd()
    session_file = manager.get_session_file()
    if not session_file or not session_cwd or os.path.isdir(session_cwd):
        return manager
    if questions is None:
        manager.close()
        raise MissingSessionCwdError(missing_cwd_message(session_cwd, session_file, cwd))
    choice = questions.missing_cwd(session_cwd, session_file, cwd)
    manager.close()
    if choice == "continue":  # not stored: asked again next time, as in pi
        return SessionManager.open(session_file, session_dir, cwd_override=cwd)
    if choice == "fork":
        return SessionManager.fork_from(session_file, cwd, session_dir)
    raise SessionNotOpened("")


def anchored(value: Any, base: str) -> Any:
    """A relative command-line path that exists under ``base`` (where tau was started) made absolute,
    so it still names the same file when the session runs in another directory; anything else as is."""
    if not isinstance(value, str | os.PathLike):
        return value
    text = os.fspath(value)
    if not text or os.path.isabs(text) or "\n" in text or len(text) >= 4096:
        return value
    candidate = Path(base, os.path.expanduser(text))
    try:
        return str(candidate.resolve()) if candidate.exists() else value
    except OSError:
        return value
