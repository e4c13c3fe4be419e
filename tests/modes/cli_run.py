"""Running ``tau`` as a program (:mod:`tau_process`) in the CLI tests, and reading what it wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tau_process import run_tau


def tau(
    args: list[str], cwd: Path, *, stdin: str | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """``tau ARGS`` in ``cwd``, stdin empty unless given, output captured as text."""
    return run_tau(args, cwd=cwd, env=env, stdin=stdin, timeout=timeout)


def faux(tmp_path: Path, steps: list[dict[str, Any]], name: str = "script.json") -> list[str]:
    """The flags of the scripted model answering ``steps``."""
    path = tmp_path / name
    path.write_text(json.dumps(steps))
    return ["--model", "faux/faux-1", "--faux-script", str(path)]


def session_files(agent_dir: Path) -> list[Path]:
    return sorted(agent_dir.glob("sessions/**/*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def messages(path: Path) -> list[dict[str, Any]]:
    return [r["message"] for r in records(path) if r.get("type") == "message"]
