"""``tau batch TASKS.jsonl --out DIR``: many headless sessions at once, on this machine or on Ray.

Each task is one session of the same runtime as ``tau -p`` (through the SDK), in its own directory;
its session file lands in ``DIR/sessions/<id>.jsonl`` and its result line in ``DIR/results.jsonl``.
A rerun with the same ``--out`` skips the tasks whose result is ``ok``. See ``docs/batch.md``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

__all__ = ["build_parser", "main", "run_batch"]

PROG = "tau batch"
STATUSES = ("ok", "error", "timeout", "cancelled")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run the tasks of TASKS.jsonl (one JSON object per line) as headless tau sessions, several "
        "at once, and write their session files and one result line per task under --out. A rerun with the "
        "same --out skips the tasks whose result is ok. See docs/batch.md.",
    )
    parser.add_argument("tasks", metavar="TASKS.jsonl", help="the tasks, one JSON object per line")
    parser.add_argument("--out", required=True, metavar="DIR", help="where sessions/ and results.jsonl go")
    parser.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help="tasks at a time (default: the CPU count; Ray: the cluster's)",
    )
    parser.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="where tasks run (default: local)"
    )
    parser.add_argument(
        "--ray-address", metavar="ADDR", help="join this Ray cluster (default: start a local Ray)"
    )
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar on stderr"
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def main(argv: list[str]) -> int:
    """Run ``tau batch``; 0 when every task is ``ok``, 1 when one is not, 2 for bad input, 130 on Ctrl+C."""
    from tau.modes.batch.tasks import TaskFileError, load_tasks

    args = build_parser().parse_args(argv)
    if args.ray_address and args.backend != "ray":
        print(f"{PROG}: --ray-address needs --backend ray", file=sys.stderr)
        return 2
    try:
        tasks = load_tasks(args.tasks)
    except TaskFileError as exc:
        print("\n".join(f"{PROG}: {problem}" for problem in exc.problems), file=sys.stderr)
        print(f"{PROG}: nothing was run", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: cannot read {args.tasks!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    # Ctrl+C is handled here, not left to Python's default: a process started in the background of a
    # script inherits SIGINT ignored and would then never cancel (print mode handles it the same way).
    previous = {signum: signal.signal(signum, _interrupt) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        return run_batch(
            tasks,
            Path(args.out),
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            progress=args.progress,
        )
    except RuntimeError as exc:  # the backend could not start (no Ray, a cluster that cannot be joined)
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGINT and SIGTERM cancel: sessions aborted and saved


def run_batch(
    tasks: list[Any],
    out: Path,
    *,
    workers: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    progress: bool | None = None,
) -> int:
    """Run ``tasks`` into ``out``; the exit code of ``tau batch`` (see :func:`main`)."""
    from tau.common.paths import make_private_dirs
    from tau.modes.batch.report import BatchReport
    from tau.modes.batch.results import ResultStore, set_aside

    out = Path(out).resolve()  # tasks run in directories of their own: every path they get is absolute
    store = ResultStore(out, [task.id for task in tasks])
    todo = [task for task in tasks if not store.finished(task.id)]
    out.mkdir(parents=True, exist_ok=True)
    make_private_dirs(out / "sessions")  # session files hold whole tool outputs: 0700, files 0600
    for task in todo:  # a rerun starts each task fresh; the previous attempt is kept beside it
        set_aside(out / "sessions" / f"{task.id}.jsonl")
        set_aside(out / "work" / task.id)
    report = BatchReport(len(tasks), skipped=len(tasks) - len(todo), enabled=progress)

    def done(task: Any, payload: dict[str, Any]) -> None:
        store.record(payload["result"])
        report.add(payload["result"], payload.get("warnings") or [])

    interrupted = False
    try:
        if not todo:
            pass
        elif backend == "ray":
            from tau.modes.batch.ray_backend import run_ray
            from tau.modes.batch.watchdog import guard

            with guard():  # a killed driver's Ray node processes and task commands are stopped
                run_ray(todo, out, workers, ray_address, done)
        else:
            from tau.modes.batch.local import run_local
            from tau.modes.batch.watchdog import guard

            with guard():  # a killed driver's workers, resource tracker and task commands are stopped
                run_local(todo, out, workers or os.cpu_count() or 1, done)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        report.close(store.path)
    if interrupted:
        return 130
    return 0 if all(store.finished(task.id) for task in tasks) else 1
