"""A benchmark task: the repository it starts from, the prompts, and the policy that plays the model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Task", "write_files"]


@dataclass(frozen=True)
class Task:
    """``setup(repo)`` writes the files; ``decide(view)`` answers agent requests; ``facts(text)`` lists
    what a summary of ``text`` keeps (the model's own notes survive a compaction through it)."""

    name: str
    description: str
    prompts: tuple[str, ...]
    setup: Callable[[Path], None]
    decide: Callable[[Any], dict[str, Any]]
    facts: Callable[[str], list[str]]


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
