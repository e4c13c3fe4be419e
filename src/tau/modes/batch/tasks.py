"""``TASKS.jsonl`` for ``tau batch``: one task per line, every problem found (with its line) before anything runs."""

from __future__ import annotations

import json
import math
import re
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["KEYS", "Task", "TaskFileError", "load_tasks"]

KEYS = ("id", "prompt", "cwd", "setup", "model", "thinking", "settings", "timeout_s", "faux_script")
# A task id names its files (sessions/<id>.jsonl, work/<id>/): no separators, no leading dot.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class TaskFileError(ValueError):
    """A tasks file that cannot run; :attr:`problems` has one ``FILE:LINE: what`` line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Task:
    """One line of the tasks file, checked.

    Attributes:
        id: Names the task's session file and result line.
        prompts: Run one after the other in one session.
        cwd: An existing directory to work in (absolute), or ``None``: a fresh one is made.
        setup: A shell command run in the fresh directory first (``None``: none).
        model, thinking: As ``--model`` / ``--thinking`` (``None``: the user's defaults).
        settings: Merged over the user's settings for this task.
        timeout_s: The whole task's limit in seconds, setup included (``None``: none).
        faux_script: The faux model's script (an absolute path or a list of steps).
        line: Where the task is in the file.
    """

    id: str
    prompts: list[str]
    cwd: str | None = None
    setup: str | None = None
    model: str | None = None
    thinking: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    faux_script: Any = None
    line: int = 0


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of ``path``. Raises :class:`TaskFileError` listing every bad line, or ``OSError``."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        found: list[str] = []
        task = _task(raw, number, path.parent, found)
        if task is not None:
            first = seen.setdefault(task.id.casefold(), number)
            if first != number:
                found.append(f"id {task.id!r} is also the id of line {first}")
        problems += [f"{where}: {problem}" for problem in found]
        if task is not None and not found:
            tasks.append(task)
    if not problems and not tasks:
        problems.append(f"{path}: no tasks (one JSON object per line)")
    if problems:
        raise TaskFileError(problems)
    return tasks


def _task(raw: str, number: int, base: Path, problems: list[str]) -> Task | None:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        problems.append(f"not JSON ({exc.msg} at column {exc.colno})")
        return None
    if not isinstance(data, dict):
        problems.append(f"a task is a JSON object, got {type(data).__name__}")
        return None
    unknown = [key for key in data if key not in KEYS]
    if unknown:
        problems.append(
            f"unknown key{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))} (known: {', '.join(KEYS)})"
        )
    task_id = data.get("id")
    if not isinstance(task_id, str) or not _ID.fullmatch(task_id):
        problems.append(
            f"id must be letters, digits, '.', '_' or '-' (not starting with '.', '_' or '-', at most 128), got {task_id!r}"
        )
    prompts = _prompts(data.get("prompt"), problems)
    if "cwd" in data and "setup" in data:
        problems.append(
            'give "cwd" (a directory to work in) or "setup" (a command that prepares a fresh one), not both'
        )
    cwd = _string(data, "cwd", problems)
    timeout = data.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        problems.append(f"timeout_s must be a positive number of seconds, got {timeout!r}")
    task = Task(
        id=task_id if isinstance(task_id, str) else "",
        prompts=prompts,
        cwd=str((base / cwd).resolve()) if cwd else None,
        setup=_string(data, "setup", problems),
        model=_string(data, "model", problems),
        thinking=_thinking(data.get("thinking"), problems),
        settings=_settings(data.get("settings"), problems),
        timeout_s=float(timeout)
        if isinstance(timeout, int | float) and not isinstance(timeout, bool)
        else None,
        faux_script=_faux_script(data.get("faux_script"), base, problems),
        line=number,
    )
    return task


def _prompts(value: Any, problems: list[str]) -> list[str]:
    prompts = [value] if isinstance(value, str) else value
    if (
        not isinstance(prompts, list)
        or not prompts
        or not all(isinstance(text, str) and text.strip() for text in prompts)
    ):
        problems.append(f"prompt must be a non-empty string or a non-empty list of them, got {value!r}")
        return []
    return list(prompts)


def _string(data: dict[str, Any], key: str, problems: list[str]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{key} must be a non-empty string, got {value!r}")
        return None
    return value


def _thinking(value: Any, problems: list[str]) -> str | None:
    from tau.llm.registry import THINKING_LEVELS

    if value is not None and value not in THINKING_LEVELS:
        problems.append(f"thinking must be one of {', '.join(THINKING_LEVELS)}, got {value!r}")
        return None
    return value


def _settings(value: Any, problems: list[str]) -> dict[str, Any]:
    from tau.agent.settings_schema import check_settings

    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"settings must be a JSON object, got {value!r}")
        return {}
    checked, found = check_settings(value, "settings", {})
    problems += [problem.split("; ")[0] for problem in found]  # the fallback wording fits a file, not a task
    return checked


def _faux_script(value: Any, base: Path, problems: list[str]) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return str((base / value).resolve())
    if isinstance(value, list) and all(isinstance(step, dict) for step in value):
        return value
    problems.append(f"faux_script must be a script file or a list of steps, got {value!r}")
    return None
