"""Benchmark: ``tau --version`` wall time (the CLI imports nothing heavy before it knows it must).

Target: <= 100 ms (median of >= 5 runs after a warm-up, a fresh interpreter each run).

Usage: ``.venv/bin/python bench/startup.py [--runs N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 100.0


def once(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def _env() -> dict[str, str]:
    """The environment of a measured run: bytecode caching on (as installed), in a cache of its own."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "tau-bench-pycache")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    env = _env()
    command = [sys.executable, "-m", "tau", "--version"]
    bare = [sys.executable, "-c", "pass"]
    once(command, env)  # warm-up: the OS file cache and the bytecode cache
    times = [once(command, env) for _ in range(max(5, args.runs))]
    floor = statistics.median(once(bare, env) for _ in range(5))
    median = statistics.median(times)
    verdict = "ok" if median <= TARGET_MS else "MISSED"
    print(
        f"tau --version: median {median:.0f} ms (min {min(times):.0f}, max {max(times):.0f}; "
        f"bare interpreter {floor:.0f} ms)  target <= {TARGET_MS:.0f} ms  {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
