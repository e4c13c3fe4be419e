"""Benchmark: ``tau batch`` throughput (tasks per minute) with 1 and 2 workers, local vs Ray, and the
per-task overhead of each backend over a plain ``tau -p`` of the same task.

A task is one faux session of the default profile (bundled extensions on) with a bash call and a
reply, so the figures are tau's own cost, not a model's. Each batch figure is the median of
``--runs`` batches of ``--tasks`` tasks (after a warm-up batch); ``tau -p`` is the median of
``--runs`` runs after a warm-up. The overhead per task is ``wall / tasks × workers − tau -p``: the
time a worker spends on a task beyond what ``tau -p`` takes for it (a negative figure: the batch is
cheaper, no interpreter start per task). Ray's start (a local Ray on 127.0.0.1, started once,
as ``tau batch --backend ray`` does) is printed apart; its batches run on that Ray.

No target (issue 20 asks for the figures). Usage:
``.venv/bin/python bench/batch.py [--tasks N] [--runs N] [--skip-ray]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _task(number: int) -> dict:
    steps = [{"bash": f"echo task {number} > out.txt"}, {"text": f"done {number}"}]
    return {"id": f"t{number}", "prompt": "write out.txt", "model": "faux/faux-1", "faux_script": steps}


def plain_print(work: Path, runs: int) -> float:
    """Median seconds of one ``tau -p`` of a task (a fresh process each time, session file written)."""
    script = work / "script.json"
    script.write_text(json.dumps(_task(0)["faux_script"]))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TAU_AGENT_DIR": str(work / "agent")}
    faux = ["--model", "faux/faux-1", "--faux-script", str(script)]
    command = [sys.executable, "-m", "tau", "-p", *faux, "go"]
    times = []
    for index in range(runs + 1):
        folder = work / f"plain{index}"
        folder.mkdir()
        started = time.perf_counter()
        subprocess.run(
            command, cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def batch_seconds(work: Path, tasks: int, workers: int, backend: str, runs: int) -> float:
    """Median wall seconds of ``tau batch`` over ``tasks`` faux tasks (in this process)."""
    from tau.modes.batch import run_batch
    from tau.modes.batch.tasks import load_tasks

    path = work / "tasks.jsonl"
    path.write_text("".join(json.dumps(_task(n)) + "\n" for n in range(tasks)))
    times = []
    for index in range(runs + 1):
        out = work / f"{backend}-{workers}-{index}"
        started = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            code = run_batch(load_tasks(path), out, workers=workers, backend=backend, progress=False)
        times.append(time.perf_counter() - started)
        if code != 0:
            raise SystemExit(f"batch failed ({backend}, {workers} workers): see {out / 'results.jsonl'}")
    return statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-ray", action="store_true", help="local backend only")
    args = parser.parse_args()
    runs = max(1, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["TAU_AGENT_DIR"] = str(work / "agent")
        plain = plain_print(work, runs)
        print(f"plain tau -p of one task: {plain * 1000:.0f} ms (median of {runs})")
        rows = [("local", workers) for workers in (1, 2)]
        if not args.skip_ray:
            from tau.modes.batch.ray_backend import start_local_ray, stop_local_ray

            started = time.perf_counter()
            start_local_ray(num_cpus=2)
            print(f"local Ray start: {time.perf_counter() - started:.1f} s (once; not in the figures below)")
            rows += [("ray", workers) for workers in (1, 2)]
        try:
            for backend, workers in rows:
                wall = batch_seconds(work, args.tasks, workers, backend, runs)
                per_task = wall / args.tasks * workers
                print(
                    f"{backend:5} {workers} worker{'s' if workers > 1 else ' '}: {args.tasks / wall * 60:6.1f} tasks/min  "
                    f"{per_task * 1000:5.0f} ms per task per worker  overhead over tau -p {(per_task - plain) * 1000:+5.0f} ms "
                    f"({per_task / plain:.2f}x)"
                )
        finally:
            if not args.skip_ray:
                stop_local_ray()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
