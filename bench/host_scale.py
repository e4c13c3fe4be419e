"""Benchmark: the host at scale, 1k to 50k entries, side by side with a real pi where one is installed.

For each session size (the generated session of ``bench/session_open.py`` with that many entries):

1. **open + context**: open the file and build its context, in process (pi: ``SessionManager.open``
   + ``buildSessionContext`` through its SDK);
2. **per request** and **between turns**: the host's own work before a provider call and at the
   turn boundary, every bundled extension loaded (``bench/host_overhead.py``'s ``measure``; pi:
   ``convertToLlm`` of the agent's messages, its per-request work without extensions; pi has no
   public between-turn equivalent);
3. **resume + 1 prompt** and **resume + 20 tool calls**: a whole process (``tau --session FILE -p``
   with the faux model; pi: ``$PI_BIN -ne -e <faux extension> --session FILE -p``), each run on a
   fresh copy of the session file, tau and pi runs interleaved; wall time, CPU time and peak RSS.

Configuration: tau with every bundled extension on (the default profile plus Online Context Compact
and the Evidence-Preserving Reducer), pi with ``-ne`` and a faux extension this script writes;
automatic compaction off for both. Medians of ``--runs`` runs (at least 5) after a warm-up; the
load average is printed with the figures (wall times on a shared machine are noisy: compare the
CPU times and the ratios of one run).

Usage: ``.venv/bin/python bench/host_scale.py [--sizes 1000,5000,10000,50000] [--runs N]
[--skip open|request|prompt|tools] [--json]``
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

SIZES = (1_000, 5_000, 10_000, 50_000)
TOOL_CALLS = 20
TARGETS = {
    "open + context @10k": "<= 60 ms",
    "per request @10k": "<= 5 ms",
    "between turns @10k": "<= 5 ms",
    "resume + 20 tools @10k": "<= 0.8x pi",
    "resume + 1 prompt @50k": "<= 1.0x pi",
}
TAU_SETTINGS = {
    "compaction": {"enabled": False},
    "sol": {"onlineContextCompact": True, "evidencePreservingReducer": True},
}
PI_SETTINGS = {"compaction": {"enabled": False}}
_PI_FAUX_EXTENSION = """\
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

export default function (pi) {
  const calls = Number(process.env.PI_FAUX_TOOL_CALLS ?? "0");
  const steps = [];
  for (let i = 0; i < calls; i++) {
    steps.push(fauxAssistantMessage([fauxToolCall("bash", { command: "true" })], { stopReason: "toolUse" }));
  }
  steps.push(fauxAssistantMessage("done"));
  const faux = fauxProvider();
  faux.setResponses(steps);
  pi.registerProvider(faux.provider);
}
"""
_PI_IN_PROCESS = """\
const [sdk, file, runs] = process.argv.slice(2);
const { SessionManager, convertToLlm } = await import(`${sdk}/@earendil-works/pi-coding-agent/dist/index.js`);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const open = [], request = [];
for (let i = 0; i <= Number(runs); i++) {
  const t = performance.now();
  SessionManager.open(file).buildSessionContext();
  if (i > 0) open.push(performance.now() - t);
}
const session = SessionManager.open(file);
const messages = session.buildSessionContext().messages;
for (let i = 0; i <= Number(runs); i++) {
  const now = Date.now();
  const added = [
    { role: "user", content: [{ type: "text", text: `q${i}` }], timestamp: now },
    { role: "assistant", content: [{ type: "text", text: `a${i}` }], api: "faux", provider: "faux", model: "faux-1",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
               cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop", timestamp: now },
    { role: "user", content: [{ type: "text", text: "next" }], timestamp: now },
  ];
  for (const message of added) { session.appendMessage(message); messages.push(message); }
  const t = performance.now();
  convertToLlm([...messages]);
  if (i > 0) request.push(performance.now() - t);
}
console.log(JSON.stringify({ open: median(open), request: median(request) }));
"""


# -- the measured pieces, each in a fresh process ----------------------------------------------------


def _child_in_process(path: Path, runs: int) -> dict[str, float]:
    """In this (fresh) interpreter: open + context, then the per-request and between-turn overhead."""
    from host_overhead import measure
    from tau.session import SessionManager

    def once() -> None:
        manager = SessionManager.open(path, read_only=True)
        manager.build_session_context()
        manager.close()

    once()
    opened = []
    for _ in range(runs):
        started = time.perf_counter()
        once()
        opened.append((time.perf_counter() - started) * 1000)
    copy = path.with_suffix(".overhead.jsonl")
    shutil.copyfile(path, copy)
    cpu: list[float] = []
    requests, between, _, _ = asyncio.run(measure(copy, runs, True, cpu))
    copy.unlink()
    return {
        "open": statistics.median(opened),
        "request": statistics.median(requests),
        "request_cpu": statistics.median(cpu),
        "between": statistics.median(between),
    }


class Scale:
    """The runs of one size, tau's and (when installed) pi's, in one work directory."""

    def __init__(self, work: Path, runs: int) -> None:
        self.work, self.runs = work, runs
        self.pi_bin = os.environ.get("PI_BIN")
        self.pi_sdk = os.environ.get("PI_SDK_DIR")
        self.project = work / "proj"
        self.project.mkdir(exist_ok=True)
        self.tau_agent = work / "tau-agent"
        self.tau_agent.mkdir(exist_ok=True)
        (self.tau_agent / "settings.json").write_text(json.dumps(TAU_SETTINGS))
        self.pi_agent = work / "pi-agent"
        self.pi_agent.mkdir(exist_ok=True)
        (self.pi_agent / "settings.json").write_text(json.dumps(PI_SETTINGS))
        (work / "pi-faux.ts").write_text(_PI_FAUX_EXTENSION)
        (work / "pi-in-process.mjs").write_text(_PI_IN_PROCESS)
        for name, calls in (("one", 0), ("tools", TOOL_CALLS)):
            steps = [{"bash": "true"}] * calls + [{"text": "done"}]
            (work / f"faux-{name}.json").write_text(json.dumps(steps))

    def session(self, entries: int) -> Path:
        path = self.work / f"session-{entries}.jsonl"
        if not path.exists():
            # In a child process, so this one's peak memory stays small.
            code = (
                "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
                "from session_open import generate; generate(Path(sys.argv[2]), entries=int(sys.argv[3]), "
                "cwd=sys.argv[4])"
            )
            subprocess.check_call(
                [sys.executable, "-c", code, str(ROOT / "bench"), str(path), str(entries), str(self.project)],
                env=self._tau_env(),
            )
        return path

    # -- environments ------------------------------------------------------------------------------

    def _tau_env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(ROOT / "src")
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "tau-bench-pycache")
        env["TAU_AGENT_DIR"] = str(self.tau_agent)
        return env

    def _pi_env(self, calls: int = 0) -> dict[str, str]:
        # pi 1.6 needs Node >= 22.19: the npm package ``node@22`` puts one beside PI_BIN.
        bin_dir = str(Path(self.pi_bin).absolute().parent) if self.pi_bin else ""
        path = os.pathsep.join(part for part in (bin_dir, os.environ.get("PATH", "")) if part)
        return {
            **os.environ,
            "PATH": path,
            "PI_CODING_AGENT_DIR": str(self.pi_agent),
            "PI_OFFLINE": "1",
            "PI_FAUX_TOOL_CALLS": str(calls),
        }

    # -- in process --------------------------------------------------------------------------------

    def tau_in_process(self, entries: int) -> dict[str, float]:
        out = subprocess.check_output(
            [sys.executable, __file__, "--child", str(self.session(entries)), "--runs", str(self.runs)],
            env=self._tau_env(),
            text=True,
        )
        return json.loads(out.strip().splitlines()[-1])

    def pi_in_process(self, entries: int) -> dict[str, float] | None:
        if not self.pi_sdk:
            return None
        copy = self.work / "pi-in-process.jsonl"
        shutil.copyfile(self.session(entries), copy)
        env = self._pi_env()
        node = shutil.which("node", path=env["PATH"]) or "node"
        sdk = str(Path(self.pi_sdk).resolve())
        script = str(self.work / "pi-in-process.mjs")
        out = subprocess.run(
            [node, script, sdk, str(copy), str(self.runs)], env=env, capture_output=True, text=True
        )
        if out.returncode != 0:
            raise RuntimeError(f"node exited {out.returncode}: {out.stderr.strip()[:300]}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    # -- whole processes ---------------------------------------------------------------------------

    def tau_command(self, path: Path, calls: int) -> tuple[list[str], dict[str, str]]:
        script = self.work / ("faux-tools.json" if calls else "faux-one.json")
        command = [sys.executable, "-m", "tau", "--session", str(path), "-p", "--model", "faux/faux-1"]
        return [*command, "--faux-script", str(script), "hi"], self._tau_env()

    def pi_command(self, path: Path, calls: int) -> tuple[list[str], dict[str, str]]:
        extension = str(self.work / "pi-faux.ts")
        command = [str(self.pi_bin), "-ne", "-e", extension, "--model", "faux/faux-1", "--session", str(path)]
        return [*command, "-p", "hi"], self._pi_env(calls)

    def process(self, entries: int, calls: int) -> dict[str, dict[str, float] | None]:
        """Interleaved tau / pi runs of one resume (warm-up first); medians of wall, CPU and peak RSS."""
        sides = {"tau": self.tau_command}
        if self.pi_bin:
            sides["pi"] = self.pi_command
        samples: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
        for index in range(self.runs + 1):
            for side, build in sides.items():
                copy = self.work / f"run-{side}.jsonl"
                shutil.copyfile(self.session(entries), copy)
                command, env = build(copy, calls)
                figures = _timed_process(command, env, self.project)
                if index:
                    samples[side].append(figures)
        result: dict[str, dict[str, float] | None] = {"tau": None, "pi": None}
        for side, rows in samples.items():
            wall, cpu, rss = (statistics.median(column) for column in zip(*rows, strict=True))
            result[side] = {"wall": wall, "cpu": cpu, "rss": rss}
        return result


def _timed_process(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # wait4 gives this child's own rusage (RUSAGE_CHILDREN would add up every child so far).
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    child.stdout.close()  # type: ignore[union-attr]
    child.stderr.close()  # type: ignore[union-attr]
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0 or b"done" not in out:
        raise RuntimeError(f"{command[0]} exited {child.returncode}: {err.decode(errors='replace')[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


# -- report ------------------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    scale = Scale(work, max(5, args.runs))
    skip = set(args.skip)
    results: dict[str, Any] = {"load": [_load()], "sizes": {}}
    pi_label = scale.pi_bin or "not configured (set PI_BIN, PI_SDK_DIR)"
    print(f"host at scale, medians of {scale.runs} runs after a warm-up; pi: {pi_label}; {_load()}")
    for entries in args.sizes:
        row: dict[str, Any] = {}
        results["sizes"][entries] = row
        size_mb = scale.session(entries).stat().st_size / 1e6
        print(f"\n{entries:,} entries ({size_mb:.1f} MB)", flush=True)
        if "open" not in skip or "request" not in skip:
            tau, pi = scale.tau_in_process(entries), _attempt(lambda size=entries: scale.pi_in_process(size))
            row["in_process"] = {"tau": tau, "pi": pi}
            print(f"  {'':24} {'tau':>10} {'pi':>10} {'tau/pi':>8}")
            for key, label in (
                ("open", "open + context"),
                ("request", "per request"),
                ("request_cpu", "per request (CPU)"),
                ("between", "between turns"),
            ):
                theirs = pi.get(key.replace("_cpu", "")) if isinstance(pi, dict) else None
                print(f"  {label:24} {_ms(tau[key]):>10} {_ms(theirs):>10} {_ratio(tau[key], theirs):>8}")
        for name, calls in (("prompt", 0), ("tools", TOOL_CALLS)):
            if name in skip:
                continue
            label = "resume + 1 prompt" if not calls else f"resume + {calls} tool calls"
            figures = scale.process(entries, calls)
            row[name] = figures
            tau, pi = figures["tau"], figures["pi"]
            print(f"  {label:24} {'tau':>10} {'pi':>10} {'tau/pi':>8}")
            for key, unit in (("wall", _s), ("cpu", _s), ("rss", None)):
                mine = tau[key] if tau else None
                theirs = pi[key] if pi else None
                if unit is None:
                    cells = ("n/a" if v is None else f"{v:.0f} MiB" for v in (mine, theirs))
                    left, right = cells
                else:
                    left, right = unit(mine), unit(theirs)
                print(f"    {key:22} {left:>10} {right:>10} {_ratio(mine, theirs):>8}", flush=True)
    results["load"].append(_load())
    _growth(results["sizes"])
    print(f"\ntargets: {'; '.join(f'{k} {v}' for k, v in TARGETS.items())}")
    print(f"measured at: {results['load'][0]} -> {results['load'][1]}")
    return results


def _growth(sizes: dict[int, dict[str, Any]]) -> None:
    """Whole-process growth from 10k to 50k entries, next to linear (5.00x)."""
    if 10_000 not in sizes or 50_000 not in sizes:
        return
    for name in ("prompt", "tools"):
        small, large = sizes[10_000].get(name), sizes[50_000].get(name)
        if not small or not large:
            continue
        for side in ("tau", "pi"):
            if small[side] and large[side]:
                wall = large[side]["wall"] / small[side]["wall"]
                cpu = large[side]["cpu"] / small[side]["cpu"]
                print(f"growth 10k -> 50k, {name:6} {side}: wall {wall:.2f}x, cpu {cpu:.2f}x (linear: 5.00x)")


def _attempt(work: Any) -> Any:
    try:
        return work()
    except Exception as exc:  # pi's side failing is reported; tau's figures stand
        print(f"  pi failed: {exc}")
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda text: [int(part) for part in text.split(",")], default=SIZES)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip", action="append", default=[], choices=["open", "request", "prompt", "tools"])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object at the end")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child_in_process(args.child, max(5, args.runs))))
        return 0
    with tempfile.TemporaryDirectory(prefix="tau-scale-") as tmp:
        results = run(args, Path(tmp))
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
