"""Benchmark: a long RPC session, 1,000 prompts through ``tau --mode rpc`` beside real pi 1.6.

Each prompt makes three model requests and two tool calls (``bash``: ``echo <n>; seq 1 150``, then
``echo second; seq 151 300``, about 700 bytes of output each, then an answer), so by prompt 600 the
context holds about 3,600 messages; both programs compact when their context reaches the threshold
(the faux model's window is 128k tokens for both; pi reaches it every ~200 prompts),
with the same scripted model (``rpc_soak_faux.py`` for tau, ``_PI_FAUX`` below for pi) answering the
summary requests too. A prompt's time is from writing its ``prompt`` command to reading its
``agent_settled`` event (tool runs and any compaction included). The programs run side by side and
take their prompts in turn (prompt 1 of each, then prompt 2 of each, …), so every window of every
program is measured under the same load. The table gives the median of every 50 prompts, per
program, and which windows held a compaction.

Programs: ``tau`` (the default profile: todo, todo-loop, Action Fusion, ObservationPack), ``tau -ne``
(no extensions, as pi runs), ``tau-base`` (with ``--baseline CHECKOUT``: the default profile run from
that checkout's ``src``, for a before/after in one run), ``pi`` (``pi --offline -ne -e <faux extension>``, when ``pi`` is on PATH
or ``PI_BIN`` names it; skipped otherwise). Issue 33's target: tau's median of every window at most
pi's worst window median.

Usage: ``PATH=/work/pi-run/node_modules/.bin:$PATH .venv/bin/python bench/rpc_soak.py
[--prompts 1000] [--window 50] [--programs tau,tau-ne,pi] [--baseline CHECKOUT] [--json] [--profile FILE]``
(``--profile`` runs tau under cProfile and writes the stats to FILE.tau and FILE.tau-ne).
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT / "bench"))

from rpc_soak_faux import SPEC  # noqa: E402

_PI_FAUX = """\
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

const SUMMARY = "## Goal\\nAnswer the soak's prompts.\\n\\n## Progress\\n- every prompt answered so far\\n";
let calls = 0;

function text(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\\n");
}

function isSummary(messages) {
  const system = messages.find((m) => m.role === "system");
  const firstUser = messages.find((m) => m.role === "user");
  return (system ? JSON.stringify(system) : "").includes("summarization assistant")
    || text(firstUser?.content ?? "").startsWith("<conversation>");
}

function call(command) {
  return fauxAssistantMessage([fauxToolCall("bash", { command }, { id: `call_${++calls}` })], { stopReason: "toolUse" });
}

function respond(context) {
  const messages = context.messages;
  if (isSummary(messages)) return fauxAssistantMessage(SUMMARY);
  const last = messages[messages.length - 1];
  if (last.role !== "toolResult") return call(`echo ${text(last.content).trim()}; seq 1 150`);
  let results = 0;
  for (let i = messages.length - 1; i >= 0 && messages[i].role !== "user"; i--) {
    if (messages[i].role === "toolResult") results++;
  }
  if (results < 2) return call("echo second; seq 151 300");
  return fauxAssistantMessage("done");
}

export default function (pi) {
  const faux = fauxProvider({ api: "faux", provider: "faux" });
  faux.setResponses(Array.from({ length: 20000 }, () => respond));
  pi.registerProvider(faux.provider);
}
"""

TIMEOUT_S = 300.0  # one prompt; a hung program fails the run rather than the machine


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


class Program:
    """One program's soak: its command line and environment in a scratch directory of its own."""

    def __init__(
        self, name: str, work: Path, pi_bin: str | None, profile: str | None, baseline: str | None = None
    ) -> None:
        self.name = name
        self.work = work / name
        (self.work / "proj").mkdir(parents=True)
        (self.work / "agent").mkdir()
        env = {key: value for key, value in os.environ.items() if not key.startswith(("TAU_", "PI_"))}
        env["HOME"] = str(self.work)
        if name == "pi":
            assert pi_bin is not None
            extension = self.work / "faux.ts"
            extension.write_text(_PI_FAUX)
            bin_dir = str(Path(pi_bin).absolute().parent)  # pi 1.6 needs the Node beside it
            env["PATH"] = os.pathsep.join((bin_dir, env.get("PATH", "")))
            env["PI_CODING_AGENT_DIR"] = str(self.work / "agent")
            self.argv = [pi_bin, "--offline", "-ne", "-e", str(extension), "--model", "faux/faux-1"]
        else:
            script = self.work / "script.json"
            script.write_text(json.dumps([{"factory": SPEC}]))
            env["TAU_AGENT_DIR"] = str(self.work / "agent")
            env["PYTHONPATH"] = (
                str(Path(baseline) / "src") if name == "tau-base" and baseline else str(ROOT / "src")
            )
            python = [sys.executable]
            if profile:
                python += ["-m", "cProfile", "-o", f"{profile}.{name}"]
            self.argv = [
                *python,
                "-m",
                "tau",
                "--offline",
                "--model",
                "faux/faux-1",
                "--faux-script",
                str(script),
            ]
            if name == "tau-ne":
                self.argv.append("-ne")
        self.argv += ["--session-dir", str(self.work / "sessions"), "--mode", "rpc"]
        self.env = env

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.argv,
            cwd=self.work / "proj",
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.times: list[float] = []
        self.compactions: list[int] = []

    def prompt(self, number: int) -> None:
        """Send prompt ``number`` and wait for its ``agent_settled``; its time is recorded."""
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        started = time.perf_counter()
        process.stdin.write(json.dumps({"type": "prompt", "message": str(number)}) + "\n")
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} ended at prompt {number}")
            if '"type":"compaction_end"' in line:
                self.compactions.append(number)
            elif '"type":"agent_settled"' in line:
                break
            elif '"success":false' in line:
                raise RuntimeError(f"{self.name}: {line.strip()[:300]}")
            if time.perf_counter() - started > TIMEOUT_S:
                raise RuntimeError(f"{self.name}: prompt {number} took over {TIMEOUT_S:g} s")
        self.times.append((time.perf_counter() - started) * 1000)

    def stop(self) -> dict[str, Any]:
        process = self.process
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return {"times_ms": self.times, "compactions": self.compactions}


def windows(times: list[float], size: int) -> list[float]:
    return [_median(times[start : start + size]) for start in range(0, len(times), size)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--programs", default="tau,tau-ne,pi")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", metavar="FILE", help="run tau under cProfile, stats to FILE.<program>")
    parser.add_argument(
        "--baseline",
        metavar="CHECKOUT",
        help="also run program tau-base: the default profile from another checkout's src (before/after in one run)",
    )
    args = parser.parse_args()
    pi_bin = os.environ.get("PI_BIN") or shutil.which("pi")
    names = [name for name in args.programs.split(",") if name]
    if args.baseline and "tau-base" not in names:
        names.insert(1, "tau-base")
    if "pi" in names and pi_bin is None:
        print("pi not found (put it on PATH or set PI_BIN): pi is skipped", file=sys.stderr)
        names.remove("pi")
    work = Path(tempfile.mkdtemp(prefix="tau-rpc-soak-"))
    programs = [Program(name, work, pi_bin, args.profile, args.baseline) for name in names]
    results: dict[str, dict[str, Any]] = {}
    try:
        for program in programs:
            program.start()
        # Interleaved, one prompt of each program in turn: a shared machine's load changes over
        # the run, and each window of every program is measured under the same conditions.
        for number in range(1, args.prompts + 1):
            for program in programs:
                program.prompt(number)
            if number % 100 == 0:
                print(f"{number} prompts…", file=sys.stderr, flush=True)
    finally:
        for program in programs:
            results[program.name] = program.stop()
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table = {name: windows(result["times_ms"], args.window) for name, result in results.items()}
    if args.json:
        print(json.dumps({"window": args.window, "load": load, "results": results, "windows": table}))
        return 0
    print(f"rpc soak: {args.prompts} prompts, median ms per prompt of each {args.window} (load {load:.1f})")
    print("prompts     " + "".join(f"{name:>12}" for name in table))
    for index in range(max(len(rows) for rows in table.values())):
        first = index * args.window + 1
        label = f"{first}-{first + args.window - 1}"
        cells = []
        for name, rows in table.items():
            marks = (
                "*" if any(first <= n < first + args.window for n in results[name]["compactions"]) else " "
            )
            cells.append(f"{rows[index]:>11.1f}{marks}" if index < len(rows) else " " * 12)
        print(f"{label:<12}" + "".join(cells))
    print("(* a compaction in that window)")
    for name, result in results.items():
        print(
            f"{name}: compactions at prompts {result['compactions'] or 'none'}; worst window {max(table[name]):.1f} ms"
        )
    if "pi" in table:
        bound = max(table["pi"])
        for name in (n for n in table if n != "pi"):
            worst = max(table[name])
            verdict = "met" if worst <= bound else f"missed by {worst - bound:.1f} ms"
            print(f"target ({name}): every window <= pi's worst window, {bound:.1f} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
