"""A benchmark task: the repository it starts from, the prompts, and the policy that plays the model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Task", "run_tests", "write_files"]


@dataclass(frozen=True)
class Task:
    """``setup(repo)`` writes the files; ``decide(view)`` answers agent requests; ``facts(text)`` lists
    what a summary of ``text`` keeps (the model's own notes survive a compaction through it);
    ``check(repo, answer)`` says whether the run finished its task, from the workspace after the run
    and the run's final answer (stdout): ``None`` when it did, else what is wrong."""

    name: str
    description: str
    prompts: tuple[str, ...]
    setup: Callable[[Path], None]
    decide: Callable[[Any], dict[str, Any]]
    facts: Callable[[str], list[str]]
    check: Callable[[Path, str], str | None]


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run_tests(repo: Path) -> str | None:
    """``python3 -m unittest`` in ``repo``: ``None`` when it passes, else its last line."""
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return f"the tests fail ({lines[-1] if lines else f'exit {done.returncode}'})"
