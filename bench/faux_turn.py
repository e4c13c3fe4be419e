"""Benchmark: one faux turn end to end, ``tau -p --model faux/faux-1 --faux-script FILE hello``.

A fresh process per run: interpreter start, imports, settings, the session file, one request to the
scripted model, the printed answer. Target: <= 300 ms wall (median of >= 5 runs after a warm-up).

Usage: ``.venv/bin/python bench/faux_turn.py [--runs N] [--no-session]``
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
TARGET_MS = 300.0


def once(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or done.stdout != "hello from faux\n":
        raise SystemExit(f"tau failed ({done.returncode}): {done.stdout!r} {done.stderr!r}")
    return elapsed


def _env() -> dict[str, str]:
    """The environment of a measured run: bytecode caching on (as installed), in a cache of its own."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "tau-bench-pycache")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--no-session", action="store_true", help="keep the session in memory")
    parser.add_argument("--no-extensions", action="store_true", help="-ne: without the bundled extensions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        script = work / "script.json"
        script.write_text(json.dumps([{"text": "hello from faux"}]))
        env = {**_env(), "TAU_AGENT_DIR": str(work / "agent")}
        command = [sys.executable, "-m", "tau", "-p", "--model", "faux/faux-1", "--faux-script", str(script)]
        if args.no_session:
            command.append("--no-session")
        if args.no_extensions:
            command.append("-ne")
        command.append("hello")
        once(command, work, env)  # warm-up
        times = [once(command, work, env) for _ in range(max(5, args.runs))]
    median = statistics.median(times)
    verdict = "ok" if median <= TARGET_MS else "MISSED"
    label = "tau -p" + (" --no-session" if args.no_session else "") + (" -ne" if args.no_extensions else "")
    print(
        f"one faux turn ({label}): median {median:.0f} ms (min {min(times):.0f}, max {max(times):.0f})  "
        f"target <= {TARGET_MS:.0f} ms  {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
