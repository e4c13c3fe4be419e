"""Where tau keeps its files: the agent dir and a project's ``.tau`` dir."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["agent_dir", "git_root", "make_private_dirs", "project_config_dir", "resolve_path"]


def resolve_path(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> Path:
    """``~`` expanded, made absolute and normalized, symlinks kept (Node's ``path.resolve``)."""
    text = os.path.expanduser(os.fspath(path))
    if not os.path.isabs(text):
        text = os.path.join(os.fspath(base) if base is not None else os.getcwd(), text)
    return Path(os.path.normpath(text))


def agent_dir() -> Path:
    """``$TAU_AGENT_DIR``, or ``~/.tau/agent`` (pi's ``~/.pi/agent``)."""
    configured = os.environ.get("TAU_AGENT_DIR")
    if configured:
        return resolve_path(configured)
    return Path.home() / ".tau" / "agent"


def project_config_dir(cwd: str | os.PathLike[str]) -> Path:
    """``<cwd>/.tau``: project settings, extensions and kill switches (pi's ``.pi``)."""
    return Path(cwd) / ".tau"


def git_root(start: str | os.PathLike[str]) -> str | None:
    """The nearest folder from ``start`` up that holds a ``.git`` (a repository's folder, or the file of
    a linked worktree or submodule), or ``None`` outside any repository."""
    current = os.fspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """Create the directory ``path`` and its missing parents, each 0700 (only its owner may list or
    enter it: session folders hold whole tool outputs). Directories that exist keep their mode."""
    missing: list[Path] = []
    current = Path(path)
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another process; its mode is what it is
