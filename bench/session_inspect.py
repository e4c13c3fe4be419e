"""Benchmark: ``tau session check|info|context`` on pathological files, next to ordinary ones.

Issue 16: one fuzzed file took 21.7 s and 5.2 GB. Each pathological file below is measured next to an
ordinary session with as many lines and at least as many bytes (a chain of user messages), in fresh
processes (wall time, the median of ``--runs``; peak RSS of the child). Target: every command on a
pathological file within 3x the time and 3x the memory of the same command on its ordinary twin, so
no shape of input costs more than its size.

Usage: ``.venv/bin/python bench/session_inspect.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_TIME = 3.0
TARGET_MEMORY = 3.0
TS = "2026-11-29T23:42:14.169Z"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": TS, "cwd": "/tmp/proj"}
COMMANDS = (["check"], ["info"], ["context", "--pretty"])

# A small parent for each measured command: Linux carries a process's peak RSS across fork and exec,
# so the command runs as the child of a fresh interpreter, which reports its child's peak (KiB).
PARENT = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
sys.stderr.write("\\nRSS %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)
"""


def _line(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _message(n: int, parent: str | None, content: object) -> str:
    message = {"role": "user", "content": content, "timestamp": 1}
    return _line(
        {"type": "message", "id": f"{n:08x}", "parentId": parent, "timestamp": TS, "message": message}
    )


def ordinary(count: int, text: str = "hello") -> list[str]:
    """A chain of ``count`` user messages."""
    return [_line(HEADER)] + [_message(n, f"{n - 1:08x}" if n else None, text) for n in range(count)]


def edits(count: int) -> list[str]:
    """One message, then ``count`` chained context_edits of it (each used to walk its whole branch)."""
    lines = ordinary(1)
    for n in range(1, count + 1):
        edit = {"type": "context_edit", "id": f"{n:08x}", "parentId": f"{n - 1:08x}", "targetId": "00000000"}
        lines.append(_line({**edit, "timestamp": TS, "replacement": None}))
    return lines


def deep(size: int, depth: int = 1000) -> list[str]:
    """A message whose content holds a ``size``-character string nested ``depth`` levels deep."""
    nested = "[" * depth + json.dumps("x" * size) + "]" * depth
    return [_line(HEADER), _message(0, None, "hi")[:-2] + ',"extra":' + nested + "}}"]


def bad_lines(count: int) -> list[str]:
    return ordinary(1) + ['{"type":"message","id":' for _ in range(count)]


def huge_role(size: int) -> list[str]:
    return [*ordinary(1), _message(1, "00000000", "x").replace('"role":"user"', f'"role":"{"r" * size}"')]


def measure(path: Path, command: list[str], runs: int) -> tuple[float, int]:
    times, peaks = [], []
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PARENT, sys.executable, "-m", "tau", "session", *command, str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{command} on {path.name} exited {done.returncode}: {done.stderr[-400:]}")
        peaks.append(int(done.stderr.rsplit("RSS ", 1)[1]))
    return statistics.median(times), max(peaks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cases = {
        "20,000 chained context_edits": edits(20_000),
        "a 5 MB string nested 1,000 levels": deep(5_000_000),
        "200,000 malformed lines": bad_lines(200_000),
        "a 20 MB message role": huge_role(20_000_000),
    }
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        for name, lines in cases.items():
            path = Path(directory) / "case.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
            size = path.stat().st_size
            twin = Path(directory) / "twin.jsonl"
            count = len(lines) - 1  # as many entries, as many bytes (at least one short message each)
            twin.write_text("\n".join(ordinary(count, "w" * max(1, size // count - 130))) + "\n")
            print(f"{name} ({size / 1e6:.1f} MB; ordinary twin {twin.stat().st_size / 1e6:.1f} MB)")
            for command in COMMANDS:
                seconds, peak = measure(path, command, args.runs)
                base_seconds, base_peak = measure(twin, command, args.runs)
                time_ratio, memory_ratio = seconds / base_seconds, peak / base_peak
                ok = time_ratio <= TARGET_TIME and memory_ratio <= TARGET_MEMORY
                failed |= not ok
                print(
                    f"  {' '.join(command):16} {seconds:6.2f} s ({time_ratio:4.1f}x)  "
                    f"{peak / 1024:7.0f} MB ({memory_ratio:4.1f}x)  {'ok' if ok else 'OVER TARGET'}"
                )
    print(f"targets: <= {TARGET_TIME}x the time and <= {TARGET_MEMORY}x the memory of the ordinary twin")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
