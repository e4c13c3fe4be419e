"""The demo's throwaway repository: a one-line bug, its test (plain Python, no pytest), a long log."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["make_repo"]

CALC = "def add(a, b):\n    return a - b\n"
TEST = (
    "from calc import add\n"
    "\n"
    'assert add(2, 3) == 5, f"add(2, 3) returned {add(2, 3)}, expected 5"\n'
    'print("test_calc: 1 passed")\n'
)
_LOG_LINES = 900


def build_log() -> str:
    """About 60 KB of build output: INFO lines, a WARNING every 37 lines, one ERROR (line 614)."""
    lines = []
    for n in range(_LOG_LINES):
        level = "ERROR" if n == 613 else "WARNING" if n % 37 == 5 else "INFO"
        module = (n * 7919) % 10_000
        lines.append(
            f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z {level:<7} build step {n:04d}: compiled module_{module:04d}.o"
        )
    return "\n".join(lines) + "\n"


def make_repo(directory: Path) -> bool:
    """Write the files into ``directory`` and commit them when git is there; returns whether it was."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "calc.py").write_text(CALC)
    (directory / "test_calc.py").write_text(TEST)
    (directory / "build.log").write_text(build_log())
    git = shutil.which("git")
    if git is None:
        return False
    identity = ["-c", "user.name=tau demo", "-c", "user.email=demo@tau.invalid", "-c", "commit.gpgsign=false"]
    try:
        for args in (["init", "-q"], ["add", "."], [*identity, "commit", "-q", "-m", "demo: a bug to fix"]):
            subprocess.run([git, *args], cwd=directory, check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return True
