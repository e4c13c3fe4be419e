"""``DIR/results.jsonl``: one line per task, rewritten whole (atomically) each time a task finishes.

A rerun reads it first: tasks whose line says ``ok`` are skipped, the others run again. Lines of
ids the tasks file no longer has are kept, after the others.

``DIR/finished/<id>.json`` holds a task's result from the moment the task ended (written by the
process that ran it, or by the driver as the result arrives) until the driver has recorded it in
``results.jsonl``. A driver killed in between loses nothing: the next run records what it finds
there, so a task that finished is not run again.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tau.modes.batch.worker import RESULT_KEYS

__all__ = ["FINISHED_DIR", "ResultStore", "set_aside", "write_finished"]

FINISHED_DIR = "finished"


class ResultStore:
    """The result lines of one output directory, in tasks-file order."""

    def __init__(self, out: Path, order: list[str]) -> None:
        self.path = out / "results.jsonl"
        self.finished_dir = out / FINISHED_DIR
        self.order = order
        self.results: dict[str, dict[str, Any]] = self._read()
        self._adopt_finished()

    def _adopt_finished(self) -> None:
        """Record the results a killed driver received (or its tasks wrote) but never recorded."""
        try:
            names = sorted(os.listdir(self.finished_dir))
        except FileNotFoundError:
            return
        adopted = []
        for name in names:
            path = self.finished_dir / name
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                print(f"tau batch: {path}: not a result; left as it is", file=sys.stderr)
                continue
            if not isinstance(record, dict) or record.get("id") != name[: -len(".json")]:
                print(f"tau batch: {path}: not a result; left as it is", file=sys.stderr)
                continue
            self.results[record["id"]] = {key: record.get(key) for key in RESULT_KEYS}
            adopted.append(path)
        if adopted:
            self.write()
            for path in adopted:
                path.unlink(missing_ok=True)

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        found: dict[str, dict[str, Any]] = {}
        # JSON lines end at "\n" only: a result's text may hold U+2028 or U+0085 unescaped, which
        # str.splitlines() would split on (and the task would run again).
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                print(f"tau batch: {self.path}:{number}: not JSON; the line is dropped", file=sys.stderr)
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                found[record["id"]] = record
        return found

    def finished(self, task_id: str) -> bool:
        """Whether ``task_id`` already ran to an ``ok`` result (a rerun skips it)."""
        return (self.results.get(task_id) or {}).get("status") == "ok"

    def record(self, result: dict[str, Any]) -> None:
        """Keep ``result`` (its keys in the documented order) and rewrite the file; the task's
        ``finished/`` record, now recorded, goes."""
        self.results[result["id"]] = {key: result.get(key) for key in RESULT_KEYS}
        self.write()
        (self.finished_dir / f"{result['id']}.json").unlink(missing_ok=True)

    def write(self) -> None:
        known = [self.results[task_id] for task_id in self.order if task_id in self.results]
        others = [record for task_id, record in self.results.items() if task_id not in set(self.order)]
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in [*known, *others])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, self.path)  # a reader never sees half a file


def set_aside(path: Path) -> Path | None:
    """Rename a previous attempt's ``path`` (a session file or a work directory) out of the way.

    ``sessions/t1.jsonl`` becomes ``sessions/t1.attempt-1.jsonl``, ``work/t1`` becomes
    ``work/t1.attempt-1``: a rerun starts fresh and loses nothing. Returns the new path, if any.
    """
    if not path.exists() and not path.is_symlink():
        return None
    suffix = path.suffix if path.is_file() else ""
    stem = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    number = 1
    while True:
        target = path.with_name(f"{stem}.attempt-{number}{suffix}")
        if not target.exists() and not target.is_symlink():
            os.rename(path, target)
            return target
        number += 1


def write_finished(directory: Path, result: dict[str, Any]) -> None:
    """Write ``directory/<id>.json`` with ``result`` (whole or not at all): the task has finished."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result['id']}.json"
    temporary = directory / f".{path.name}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(result, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
