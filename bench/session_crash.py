"""Crash test: a writer killed with SIGKILL at random moments never loses an entry whose append returned.

A forked child opens a session file for writing and appends entries (some of them large, so that a
kill can land inside a write); after each ``append_*`` call returns it reports the entry id over a
pipe. The parent kills it after a random delay, then checks that the file loads and holds every
reported entry with an intact parent chain, and starts the next child on the same file (which must
repair a cut last line and go on). ``tests/session/test_crash.py`` runs this with a few hundred
kills; run it here for more.

Usage: ``.venv/bin/python bench/session_crash.py [--kills N] [--seed S] [--per-file K]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from tau.session import SessionManager, jsonl  # noqa: E402


@dataclass
class CrashStats:
    kills: int = 0
    files: int = 0
    reported: int = 0
    cut_lines: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def _tear(path: Path, rnd: random.Random) -> None:
    """Simulate dying inside a write: half of an entry line, then wait for the kill."""
    line = jsonl.encode({"type": "message", "id": "deadbeef", "parentId": None, "message": {"role": "user"}})
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, line[: rnd.randint(1, len(line) - 1)])
    time.sleep(60)


def _child(path: Path, report: int, seed: int) -> None:
    """Append forever, reporting each returned append; never returns (the parent kills it)."""
    rnd = random.Random(seed)
    tear_after = rnd.randint(0, 8) if rnd.random() < 0.3 else -1
    try:
        manager = SessionManager.open(path)
        for count in itertools.count():
            if count == tear_after:
                _tear(path, rnd)
            size = rnd.choice((8, 64, 512, 4096, 65536, 262144))
            text = "x" * rnd.randint(1, size)
            if rnd.random() < 0.2:
                entry_id = manager.append_custom_entry("crash", {"blob": text})
            else:
                entry_id = manager.append_message({"role": "user", "content": text, "timestamp": 1})
            os.write(report, entry_id.encode() + b"\n")
    finally:
        os._exit(1)


def _reported(read_end: int) -> list[str]:
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    return [line.decode() for line in data.split(b"\n")[:-1]]


def _check(path: Path, reported: list[str], seed: int, kill: int) -> str | None:
    try:
        manager = SessionManager.open(path, read_only=True)
    except Exception as exc:  # the point of the test: the file must always load
        return f"seed {seed}, kill {kill}: the file does not load: {exc!r}"
    entries = manager.get_entries()
    ids = [entry["id"] for entry in entries]
    missing = sorted(set(reported) - set(ids))
    if missing:
        return f"seed {seed}, kill {kill}: appends that returned are missing: {missing[:5]}"
    known: set[str] = set()
    for entry in entries:
        if entry["parentId"] is not None and entry["parentId"] not in known:
            return f"seed {seed}, kill {kill}: entry {entry['id']} points at a missing parent"
        known.add(entry["id"])
    last_line = len(path.read_bytes().split(b"\n"))
    stray = [problem for problem in manager.problems if problem[0] < last_line - 1]
    if any("cut short" not in message and "not valid JSON" not in message for _, message in stray):
        return f"seed {seed}, kill {kill}: unexpected problems {stray}"
    return None


def run_crashes(
    directory: Path, kills: int, seed: int, per_file: int = 25, max_delay: float = 0.03
) -> CrashStats:
    """Kill ``kills`` writers (``per_file`` per session file) at moments drawn from ``seed``."""
    rnd = random.Random(seed)
    stats = CrashStats()
    started = time.perf_counter()
    path = directory / "crash-0.jsonl"
    all_reported: list[str] = []
    for kill in range(kills):
        if kill % per_file == 0:
            path = directory / f"crash-{kill // per_file}.jsonl"
            with SessionManager.open(path) as first:  # a session the children extend
                all_reported = [first.append_message({"role": "user", "content": "start", "timestamp": 1})]
            stats.files += 1
        read_end, write_end = os.pipe()
        child_seed = rnd.getrandbits(32)
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(path, write_end, child_seed)
        os.close(write_end)
        time.sleep(rnd.uniform(0, max_delay))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        reported = _reported(read_end)
        os.close(read_end)
        stats.kills += 1
        stats.reported += len(reported)
        all_reported += reported
        if not path.read_bytes().endswith(b"\n"):
            stats.cut_lines += 1
        failure = _check(path, all_reported, seed, kill)
        if failure:
            stats.failures.append(failure)
            break
    stats.seconds = time.perf_counter() - started
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=random.randrange(2**32))
    parser.add_argument("--per-file", type=int, default=50)
    args = parser.parse_args()
    print(f"seed {args.seed}")
    with tempfile.TemporaryDirectory(prefix="tau-crash-") as directory:
        stats = run_crashes(Path(directory), args.kills, args.seed, args.per_file)
    print("\n".join(summary(stats, args.kills)))
    sys.exit(1 if stats.failures else 0)


def summary(stats: CrashStats, requested: int) -> list[str]:
    """The lines the run ends with: "all were found" only when nothing was lost."""
    head = (
        f"{stats.kills} of {requested} kills over {stats.files} files in {stats.seconds:.1f} s: "
        f"{stats.reported} appends returned"
    )
    if stats.failures:
        return [f"{head}; stopped at the first loss", *(f"FAILED: {failure}" for failure in stats.failures)]
    return [f"{head} and all were found; {stats.cut_lines} kills left a cut last line"]


if __name__ == "__main__":
    main()
