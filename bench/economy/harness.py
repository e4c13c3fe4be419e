"""One benchmark run: a task with one profile, as a real ``tau -p`` in a throwaway git repository.

The run's cost is what the faux provider billed: every call it answered (agent requests and the
side requests of the reducer and of compaction) is a line of ``$TAU_FAUX_BILL`` with the usage it
reported, priced cache-aware in *cost units* (uncached input 1, cache read 0.1, cache write 1.25,
output 5 per token). ``tau savings --json`` on the run's session file must report the same total.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLAY = f"{HERE / 'play.py'}:respond"

READ, WRITE, OUTPUT = 0.1, 1.25, 5.0
REDUCER_PROMPT = "You are a lossless test/build output reducer."
# tau savings prices at a real model's rates; its output/input ratio is this benchmark's 5.
SAVINGS_PRICE = "anthropic/claude-sonnet-4-6"
SAVINGS_INPUT_PER_MILLION = 3.0

PROFILES: dict[str, dict[str, Any]] = {
    "none": {"args": ["--no-extensions"], "settings": {}},
    "todo": {
        "args": [],
        "settings": {
            "disabledExtensions": ["action-fusion", "observation-pack", "evidence-reducer", "online-compact"]
        },
    },
    "default": {"args": [], "settings": {}},
    "full": {
        "args": [],
        "settings": {"sol": {"evidencePreservingReducer": True, "onlineContextCompact": True}},
    },
}


def cost_units(usage: dict[str, Any]) -> float:
    """What one call costs: uncached input, cache reads and writes, output."""
    return (
        usage.get("input", 0)
        + READ * usage.get("cacheRead", 0)
        + WRITE * usage.get("cacheWrite", 0)
        + OUTPUT * usage.get("output", 0)
    )


@dataclass
class Bill:
    """The calls of one run, from the faux bill.

    A line is an agent request when its usage is the usage an assistant message of the session
    recorded; every other line is a side request (the reducer's calls, summaries). Session id and
    cache retention do not tell them apart: cache-friendly summaries share both with the agent.
    """

    lines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Bill:
        if not path.exists():
            return cls()
        return cls([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line])

    def agent_lines(self, agent_usages: list[dict[str, Any]]) -> list[bool]:
        """For each line, whether an assistant message recorded its usage (each message once)."""
        pool = Counter(json.dumps(usage, sort_keys=True) for usage in agent_usages)
        flags = []
        for line in self.lines:
            key = json.dumps(line["usage"], sort_keys=True)
            flags.append(pool[key] > 0)
            pool[key] -= 1 if pool[key] > 0 else 0
        return flags

    def figures(self, agent_usages: list[dict[str, Any]]) -> dict[str, Any]:
        usage = [line["usage"] for line in self.lines]
        agent_requests = sum(self.agent_lines(agent_usages))
        return {
            "requests": agent_requests,
            "side_requests": len(self.lines) - agent_requests,
            "input_tokens": sum(u.get("input", 0) for u in usage),
            "cache_read": sum(u.get("cacheRead", 0) for u in usage),
            "cache_write": sum(u.get("cacheWrite", 0) for u in usage),
            "output_tokens": sum(u.get("output", 0) for u in usage),
            "cost_units": round(sum(cost_units(u) for u in usage), 2),
            "reducer_cost_units": round(
                sum(
                    cost_units(line["usage"])
                    for line in self.lines
                    if line.get("system", "").startswith(REDUCER_PROMPT)
                ),
                2,
            ),
        }

    def first_prompt_tokens(self) -> int:
        """The prompt of the run's first request (system prompt, tool declarations, the first
        prompt): what a profile adds to it is what it adds to every request."""
        if not self.lines:
            return 0
        usage = self.lines[0]["usage"]
        return usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)

    def cache_breaks(self, agent_usages: list[dict[str, Any]]) -> tuple[int, int]:
        """Agent requests whose cached prefix is shorter than the previous agent request's prompt, and
        the tokens written again because of it (side requests are left out)."""
        breaks = rewritten = 0
        previous: int | None = None
        for line, agent in zip(self.lines, self.agent_lines(agent_usages), strict=True):
            if not agent:
                continue
            usage = line["usage"]
            prompt = usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)
            if previous is not None and usage.get("cacheRead", 0) < previous:
                breaks += 1
                rewritten += previous - usage.get("cacheRead", 0)
            previous = prompt
        return breaks, rewritten


@dataclass
class Run:
    task: str
    profile: str
    persona: str
    exit_code: int
    seconds: float
    session: Path | None
    bill: Bill
    stdout: str
    stderr: str
    workdir: Path
    unfinished: str | None = None  # why the task is not done (the task's check), None when it is

    @property
    def final(self) -> str:
        """The run's last answer (the last line it printed)."""
        return self.stdout.strip().splitlines()[-1] if self.stdout.strip() else ""

    def result(self) -> dict[str, Any]:
        assistants = _assistant_usages(self.session)
        figures = self.bill.figures(assistants)
        breaks, rewritten = self.bill.cache_breaks(assistants)
        return {
            "task": self.task,
            "profile": self.profile,
            "persona": self.persona,
            **figures,
            "first_prompt_tokens": self.bill.first_prompt_tokens(),
            "cache_breaks": breaks,
            "rewritten_tokens": rewritten,
            "finished": self.unfinished is None,
            **({"unfinished": self.unfinished} if self.unfinished is not None else {}),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
            "final": self.final[:120],
        }


def _assistant_usages(session: Path | None) -> list[dict[str, Any]]:
    """The usage every assistant message of the session recorded (an aborted one's too)."""
    if session is None:
        return []
    lines = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines() if line]
    return [
        entry["message"].get("usage") or {}
        for entry in lines
        if entry.get("type") == "message" and (entry.get("message") or {}).get("role") == "assistant"
    ]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        },
    )


def prepare(task: Any, workdir: Path) -> Path:
    """The task's repository under ``workdir``, committed (a plain directory without git)."""
    repo = workdir / "repo"
    repo.mkdir()
    task.setup(repo)
    if shutil.which("git"):
        _git(repo, "init", "-q")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "initial")
    return repo


def run_task(
    task: Any,
    profile: str,
    workdir: Path | None = None,
    *,
    timeout: float = 300,
    extra_env: dict[str, str] | None = None,
    sol: dict[str, Any] | None = None,
    persona: str = "recall",
) -> Run:
    """Run ``task`` with ``profile`` in ``workdir`` (a new temporary directory by default), its model
    played by ``persona``, and check whether the run finished the task; ``sol`` is merged over the
    profile's ``sol`` settings (profiles other than ``none`` and ``todo``)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix=f"tau-economy-{task.name}-{profile}-"))
    if workdir.exists() and any(workdir.iterdir()):
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    repo = prepare(task, workdir)
    agent = workdir / "agent"
    agent.mkdir()
    settings = json.loads(json.dumps(PROFILES[profile]["settings"]))
    if sol and profile in ("default", "full"):
        settings["sol"] = {**settings.get("sol", {}), **sol}
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    script = workdir / "script.json"
    script.write_text(json.dumps([{"factory": PLAY}]), encoding="utf-8")
    bill = workdir / "bill.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TAU_", "ANTHROPIC_", "OPENAI_"))},
        "TAU_AGENT_DIR": str(agent),
        "TAU_FAUX_BILL": str(bill),
        "TAU_ECONOMY_TASK": task.name,
        "TAU_ECONOMY_PERSONA": persona,
        "PYTHONDONTWRITEBYTECODE": "1",
        **(extra_env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "tau",
        "-p",
        "--model",
        "faux/faux-1",
        "--faux-script",
        str(script),
        *PROFILES[profile]["args"],
        *task.prompts,
    ]
    started = time.monotonic()
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.monotonic() - started
    sessions = sorted((agent / "sessions").rglob("*.jsonl")) if (agent / "sessions").exists() else []
    sessions = [s for s in sessions if s.read_bytes().startswith(b'{"type":"session"')]
    run = Run(
        task.name,
        profile,
        persona,
        done.returncode,
        seconds,
        sessions[-1] if sessions else None,
        Bill.read(bill),
        done.stdout,
        done.stderr,
        workdir,
    )
    run.unfinished = task.check(repo, run.final) if done.returncode == 0 else f"tau exited {done.returncode}"
    return run


def savings_units(session: Path) -> tuple[float, dict[str, Any]]:
    """``tau savings --json`` on ``session``: its measured cost in cost units, and the report."""
    done = subprocess.run(
        [sys.executable, "-m", "tau", "savings", str(session), "--json", "--price", SAVINGS_PRICE],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout.splitlines()[0])
    return report["tau"]["cost"] / (SAVINGS_INPUT_PER_MILLION / 1_000_000), report
