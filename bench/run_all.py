"""All of tau's benchmarks in one run, with pi's figures beside them when a real pi is installed.

Measured in this run, each a median of at least 5 runs after a warm-up (decisions.md "Benchmarks"):

1. **startup**: ``tau --version`` in a fresh interpreter (pi: ``$PI_BIN --version``);
2. **faux turn**: one ``tau -p`` turn with the scripted faux model, session file included (pi:
   ``$PI_BIN -p`` with a faux provider registered by a small extension this script writes);
3. **open + context**: open the 10,000-entry session of ``bench/session_open.py`` and build its model
   context (pi: ``SessionManager.open`` + ``buildSessionContext`` through its SDK);
4. **host overhead per request** on that session, all bundled extensions loaded
   (``bench/host_overhead.py``; pi: ``buildSessionContext`` + ``convertToLlm`` of the open session,
   the closest public equivalent);
5. **savings replay** of the real pi sessions (``bench/savings_replay.py``): tau's cost as a
   ratio of stock pi's on the same files (pi's column is the baseline itself, 1.00x).

Each figure is printed with its target and the ratio to it, and, with pi, the ratio tau/pi.
pi is used when ``PI_BIN`` names its command and ``PI_SDK_DIR`` its installed packages (the
``node_modules`` directory holding ``@earendil-works/pi-coding-agent``); see ``bench/README.md``.

Usage: ``.venv/bin/python bench/run_all.py [--runs N] [--skip NAME ...]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

TARGETS_MS = {"startup": 100.0, "faux turn": 300.0, "open + context": 70.0, "host overhead": 20.0}
SAVINGS_GOAL = 0.50
_PI_FAUX_EXTENSION = """\
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";

export default function (pi) {
  const faux = fauxProvider();
  faux.setResponses(Array.from({ length: 64 }, () => fauxAssistantMessage("hello from faux")));
  pi.registerProvider(faux.provider);
}
"""
_PI_OPEN = """\
const [sdk, file, runs] = process.argv.slice(2);
const { SessionManager, convertToLlm } = await import(`${sdk}/@earendil-works/pi-coding-agent/dist/index.js`);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const open = [], request = [];
for (let i = 0; i <= Number(runs); i++) {
  let t = performance.now();
  const session = SessionManager.open(file);
  session.buildSessionContext();
  const opened = performance.now() - t;
  t = performance.now();
  convertToLlm(session.buildSessionContext().messages);
  const built = performance.now() - t;
  if (i > 0) { open.push(opened); request.push(built); }
}
console.log(JSON.stringify({ open: median(open), request: median(request) }));
"""


def _median_ms(work: Callable[[], None], runs: int) -> float:
    work()  # warm-up
    times = []
    for _ in range(max(5, runs)):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _env(agent_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "tau-bench-pycache")
    env["TAU_AGENT_DIR"] = str(agent_dir)
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {done.returncode}: {done.stderr.strip()[:300]}")


class Bench:
    """The measurements, tau's and (when installed) pi's, in one temp directory."""

    def __init__(self, work: Path, runs: int) -> None:
        self.work, self.runs = work, runs
        self.pi_bin = os.environ.get("PI_BIN")
        self.pi_sdk = os.environ.get("PI_SDK_DIR")
        self.session = work / "bench-10k.jsonl"

    # -- tau -------------------------------------------------------------------------------------

    def tau_startup(self) -> float:
        env = _env(self.work / "agent")
        return _median_ms(lambda: _run([sys.executable, "-m", "tau", "--version"], self.work, env), self.runs)

    def tau_faux_turn(self) -> float:
        script = self.work / "script.json"
        script.write_text(json.dumps([{"text": "hello from faux"}] * 64))
        env = _env(self.work / "agent")
        command = [
            sys.executable,
            "-m",
            "tau",
            "-p",
            "--model",
            "faux/faux-1",
            "--faux-script",
            str(script),
            "hi",
        ]
        return _median_ms(lambda: _run(command, self.work, env), self.runs)

    def _ensure_session(self) -> Path:
        if not self.session.exists():
            from session_open import generate

            generate(self.session)
        return self.session

    def tau_open(self) -> float:
        from tau.session import SessionManager

        path = self._ensure_session()

        def once() -> None:
            manager = SessionManager.open(path, read_only=True)
            manager.build_session_context()
            manager.close()

        return _median_ms(once, self.runs)

    def tau_host_overhead(self) -> float:
        from host_overhead import measure

        os.environ.setdefault("TAU_AGENT_DIR", str(self.work / "agent"))
        copy = self.work / "overhead.jsonl"
        copy.write_bytes(self._ensure_session().read_bytes())
        times = asyncio.run(measure(copy, max(5, self.runs), True))[0]
        return statistics.median(times)

    # -- pi --------------------------------------------------------------------------------------

    def _pi_env(self, **extra: str) -> dict[str, str]:
        # pi 1.6 needs Node >= 22.19: the npm package ``node@22`` puts one beside PI_BIN.
        beside = str(Path(self.pi_bin).absolute().parent) if self.pi_bin else ""
        path = os.pathsep.join(part for part in (beside, os.environ.get("PATH", "")) if part)
        return {**os.environ, "PATH": path, **extra}

    def pi_startup(self) -> float | None:
        if not self.pi_bin:
            return None
        return _median_ms(lambda: _run([self.pi_bin, "--version"], self.work, self._pi_env()), self.runs)

    def pi_faux_turn(self) -> float | None:
        if not self.pi_bin:
            return None
        extension = self.work / "pi-faux-ext.ts"
        extension.write_text(_PI_FAUX_EXTENSION)
        env = self._pi_env(PI_CODING_AGENT_DIR=str(self.work / "pi-agent"))
        command = [self.pi_bin, "-ne", "-e", str(extension), "--model", "faux/faux-1", "-p", "hi"]
        return _median_ms(lambda: _run(command, self.work, env), self.runs)

    def _pi_open(self) -> dict[str, float] | None:
        if not self.pi_sdk:
            return None
        script = self.work / "pi-open.mjs"
        script.write_text(_PI_OPEN)
        copy = self.work / "pi-open.jsonl"
        copy.write_bytes(self._ensure_session().read_bytes())
        env = self._pi_env()
        node = shutil.which("node", path=env["PATH"]) or "node"
        done = subprocess.run(
            [node, str(script), str(Path(self.pi_sdk).resolve()), str(copy), str(max(5, self.runs))],
            capture_output=True,
            text=True,
            env=env,
        )
        if done.returncode != 0:
            raise RuntimeError(f"node exited {done.returncode}: {done.stderr.strip()[:300]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def pi_open(self) -> float | None:
        figures = self._pi_open()
        return None if figures is None else figures["open"]

    def pi_host_overhead(self) -> float | None:
        figures = self._pi_open()
        return None if figures is None else figures["request"]


def _cell(value: float | None, unit: str = "ms") -> str:
    return "n/a" if value is None else f"{value:.1f} {unit}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def _attempt(work: Callable[[], float | None]) -> tuple[float | None, str]:
    try:
        return work(), ""
    except Exception as exc:  # a bench that cannot run is reported, the others go on
        return None, f"failed: {exc}"


def speed_rows(bench: Bench, skip: set[str]) -> None:
    rows = [
        ("startup", bench.tau_startup, bench.pi_startup),
        ("faux turn", bench.tau_faux_turn, bench.pi_faux_turn),
        ("open + context", bench.tau_open, bench.pi_open),
        ("host overhead", bench.tau_host_overhead, bench.pi_host_overhead),
    ]
    print(f"{'figure':22} {'tau':>10} {'target':>10} {'tau/target':>10} {'pi':>10} {'tau/pi':>8}")
    for name, tau_work, pi_work in rows:
        if name in skip:
            continue
        tau, tau_note = _attempt(tau_work)
        pi, pi_note = _attempt(pi_work)
        target = TARGETS_MS[name]
        line = (
            f"{name:22} {_cell(tau):>10} {_cell(target):>10} {_ratio(tau, target):>10} "
            f"{_cell(pi):>10} {_ratio(tau, pi):>8}"
        )
        notes = "; ".join(f"{who} {note}" for who, note in (("tau", tau_note), ("pi", pi_note)) if note)
        print(f"{line}  {notes}" if notes else line, flush=True)


def savings_rows() -> None:
    from savings_replay import fixture_files, measure

    files = fixture_files()
    if not files:
        print("savings replay: no fixtures (set TAU_FIXTURES)")
        return
    print(
        f"\n{'savings replay':30} {'profile':8} {'tau input/pi':>12} {'tau total/pi':>12} {'+summaries':>10} {'pi':>6}"
    )
    for path in files:
        for profile in ("default", "full"):
            row = measure(path, profile)
            verdict = ""
            if profile == "full" and row["input"] is not None:
                verdict = (
                    "goal ok"
                    if row["input"] <= SAVINGS_GOAL
                    else f"goal MISSED by {row['input'] - SAVINGS_GOAL:.2f}x"
                )
            print(
                f"{path.name:30} {profile:8} {_fmt(row['input']):>12} {_fmt(row['total']):>12} "
                f"{_fmt(row['withSummaries']):>10} {'1.00x':>6}  {row['seconds']:.1f} s  {verdict}",
                flush=True,
            )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[*TARGETS_MS, "savings"],
        help="leave a figure out (repeatable)",
    )
    args = parser.parse_args()
    pi = "pi: " + (
        f"{os.environ['PI_BIN']}" if os.environ.get("PI_BIN") else "not configured (set PI_BIN, PI_SDK_DIR)"
    )
    print(f"tau benchmarks, medians of {max(5, args.runs)} runs after a warm-up; {pi}\n")
    with tempfile.TemporaryDirectory() as tmp:
        speed_rows(Bench(Path(tmp), args.runs), set(args.skip))
    if "savings" not in args.skip:
        savings_rows()
    return 0


if __name__ == "__main__":
    sys.exit(main())
