"""Where tau keeps its files: the agent dir and the per-cwd session dir."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["agent_dir", "encode_cwd", "project_config_dir"]


def agent_dir() -> Path:
    """``$TAU_AGENT_DIR``, or ``~/.tau/agent`` (pi's ``~/.pi/agent``)."""
    override = os.environ.get("TAU_AGENT_DIR")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".tau" / "agent"


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """``--<cwd>--``: the resolved cwd, one leading separator dropped, ``/``, ``\\`` and ``:`` as ``-``."""
    text = str(Path(cwd).resolve())
    if text[:1] in ("/", "\\"):
        text = text[1:]
    for ch in ("/", "\\", ":"):
        text = text.replace(ch, "-")
    return f"--{text}--"


def project_config_dir(cwd: str | os.PathLike[str]) -> Path:
    """``<cwd>/.tau``: project settings, extensions and kill switches (pi's ``.pi``)."""
    return Path(cwd) / ".tau"
