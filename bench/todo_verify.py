"""Benchmark: a verified todo mutation on a 10,000-entry session reads only what it must.

Target (issue 6, CI machine class: 2 cores): <= 20 ms per verified mutation (median of >= 5 runs after a
warm-up): checking the branch against the file, appending the ``pi-todo:state`` entry and finding it
complete on disk. Between mutations a turn appends a user and an assistant message, as a real run does.
The first mutation of a process verifies the whole branch once (every ancestor, the whole file); it is
reported apart, as are the bytes each mutation reads.

Usage: ``.venv/bin/python bench/todo_verify.py [--runs N] [--keep FILE]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from session_open import generate  # noqa: E402
from tau.bundled.todo.store import Store  # noqa: E402
from tau.session import SessionManager  # noqa: E402

TARGET_MS = 20.0


def turn(manager: SessionManager, number: int) -> None:
    """What a turn adds between two todo calls: a user message and an assistant reply."""
    manager.append_message(
        {"role": "user", "content": [{"type": "text", "text": f"step {number}"}], "timestamp": 1}
    )
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "working on it"}],
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )


def mutate(store: Store, number: int) -> None:
    revision = store.state["revision"]
    if number % 2 == 0 or not store.state["tasks"]:
        reply = store.mutate({"action": "add", "baseRevision": revision, "title": f"task {number}"})
    else:
        task = store.state["tasks"][-1]
        patch = {"id": task["id"], "description": f"edited {number}"}
        reply = store.mutate({"action": "update", "baseRevision": revision, "updates": [patch]})
    if reply.is_error:
        raise SystemExit(f"mutation {number} failed: {reply.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--keep", type=Path, help="the generated 10,000-entry session (reused if present)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="tau-bench-todo-"))
    source = args.keep or workdir / "bench.jsonl"
    if not source.exists():
        generate(source)
    path = workdir / "timed.jsonl"
    shutil.copyfile(source, path)
    manager = SessionManager.open(path)
    try:
        store = Store(manager, manager.append_custom_entry)
        store.recover()
        turn(manager, 0)
        start = time.perf_counter()
        mutate(store, 0)  # warm-up: the first mutation verifies the whole branch
        first_ms = (time.perf_counter() - start) * 1000
        assert store._file is not None
        first_bytes = store._file.bytes_read
        times, reads = [], []
        for number in range(1, max(args.runs, 5) + 1):
            turn(manager, number)
            before = store._file.bytes_read
            start = time.perf_counter()
            mutate(store, number)
            times.append((time.perf_counter() - start) * 1000)
            reads.append(store._file.bytes_read - before)
        entries = manager.get_entry_count()
        size = path.stat().st_size
    finally:
        manager.close()
        shutil.rmtree(workdir, ignore_errors=True)
    median = statistics.median(times)
    print(f"session: {entries:,} entries, {size / 1e6:.2f} MB, {os.cpu_count()} cores")
    print(
        f"verified mutation    : median {median:6.2f} ms (max {max(times):.2f})   target <= {TARGET_MS:.0f} ms"
        f"   {'ok' if median <= TARGET_MS else 'MISSED'}"
    )
    print(f"bytes read / mutation: median {statistics.median(reads):,.0f} B (max {max(reads):,} B)")
    print(
        f"first mutation       : {first_ms:6.1f} ms, {first_bytes / 1e6:.2f} MB read (whole branch verified once)"
    )


if __name__ == "__main__":
    main()
