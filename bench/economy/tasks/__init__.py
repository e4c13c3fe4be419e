"""The whole tasks of the economy benchmark, by name (see ``bench/README.md``, "Economy")."""

from __future__ import annotations

import importlib

from .base import Task

__all__ = ["NAMES", "Task", "load"]

NAMES = (
    "fix-the-tests",
    "read-and-refactor",
    "plan-marathon",
    "bash-explorer",
    "three-prompts",
    "failing-build",
    "debug-library",
    "six-prompts",
    "ci-jobs",
    "lockfile",
    "ctest-suite",
)


def load(name: str) -> Task:
    """The task called ``name``."""
    if name not in NAMES:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(NAMES)}")
    module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
    return module.TASK
