"""Where the external programs of the search tools are: ripgrep for ``grep``.

pi 1.6 downloads ``rg`` into its agent dir on first use; tau never downloads anything. It depends
on the ``ripgrep`` wheel from PyPI, which installs the real ``rg`` binary into the environment's
scripts directory. The binary is looked for there first (the wheel's own record of where it put
it, then the running interpreter's scripts directory), then on ``PATH``.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

__all__ = ["RIPGREP_MISSING", "find_ripgrep"]

RIPGREP_MISSING = (
    "ripgrep (rg) is not available: tau runs the rg binary of the `ripgrep` Python package. "
    "Reinstall tau (or run `pip install 'ripgrep>=14.1,<15'`), or put rg on PATH."
)

_EXE = ".exe" if sys.platform == "win32" else ""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _from_wheel() -> Path | None:
    """The ``rg`` the ``ripgrep`` distribution recorded in its RECORD file, if it is installed."""
    from importlib import metadata

    try:
        distribution = metadata.distribution("ripgrep")
    except metadata.PackageNotFoundError:
        return None
    for entry in distribution.files or ():
        if entry.name == f"rg{_EXE}":
            located = Path(str(distribution.locate_file(entry))).resolve()
            if _executable(located):
                return located
    return None


def _from_scripts_dir() -> Path | None:
    """``rg`` beside the running interpreter's console scripts (a venv's ``bin``)."""
    import sysconfig

    candidates = [
        Path(sysconfig.get_path("scripts")) / f"rg{_EXE}",
        Path(sys.executable).parent / f"rg{_EXE}",
    ]
    return next((path for path in candidates if _executable(path)), None)


@cache
def find_ripgrep() -> str | None:
    """The ``rg`` binary to run: the ``ripgrep`` wheel's, else one on ``PATH``; ``None`` if there is none."""
    found = _from_wheel() or _from_scripts_dir()
    if found is not None:
        return str(found)
    import shutil

    return shutil.which("rg")
