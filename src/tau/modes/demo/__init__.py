"""``tau demo``: one real tau session, offline, in a throwaway repository, then what it saved.

A temp directory gets a tiny git repository (``calc.py`` with a bug, its plain-Python test, a
60 KB ``build.log``; git is skipped when it is not installed) and an agent dir of its own, so the
user's settings and sessions are left alone. ``tau --mode json`` then runs there with the scripted
faux model (:mod:`tau.modes.demo.script`) and the default bundled extensions: todo plans three
tasks, todo-loop carries the run past each stop, Action Fusion runs the test with the fix, and
ObservationPack packs the log and recalls from it. The events are printed as they come, then the
session file's path and its ``tau savings`` report. Everything stays in the temp directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tau.modes.demo.repo import make_repo
from tau.modes.demo.script import FACTORY

__all__ = ["PROMPT", "main", "run_demo"]

PROG = "tau demo"
PROMPT = "Fix the failing test in calc.py, then check build.log for warnings and report its first error."
DEFAULT_PRICE = "anthropic/claude-sonnet-4-6"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run a scripted tau session offline in a throwaway git repository and show what "
        "tau's context economy saved on it. Needs no model and no network.",
    )
    parser.add_argument("--dir", metavar="DIR", help="work here instead of a new temp directory")
    parser.add_argument(
        "--price",
        metavar="PROVIDER/MODEL",
        default=DEFAULT_PRICE,
        help=f"price the savings report at this model (default {DEFAULT_PRICE}; the demo model is free)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the session path and the report")
    return parser


def main(argv: list[str]) -> int:
    """Run ``tau demo``; returns 0 when the session ran and its report was printed."""
    args = build_parser().parse_args(argv)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tau-demo-"))
    try:
        session_file = run_demo(root, quiet=args.quiet)
    except DemoError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    print(f"\nsession file: {session_file}")
    print(f"inspect it:   tau session check {session_file}")
    print(f"              tau savings {session_file}\n")
    from tau.modes.savings import main as savings_main

    return savings_main([str(session_file), "--price", args.price, "--no-progress"])


class DemoError(Exception):
    """The demo session did not run; the message says what happened."""


def run_demo(root: Path, *, quiet: bool = False) -> Path:
    """Run the scripted session under ``root`` and return its session file."""
    repo, agent_dir = root / "repo", root / "agent"
    has_git = make_repo(repo)
    agent_dir.mkdir(parents=True, exist_ok=True)
    script = root / "faux-script.json"
    script.write_text(json.dumps([{"factory": FACTORY}]))
    if not quiet:
        print(f"demo repository: {repo}{'' if has_git else ' (git not found: a plain directory)'}")
        print(f"prompt: {PROMPT}\n")
    command = [sys.executable, "-m", "tau", "--mode", "json", "--model", "faux/faux-1"]
    command += ["--faux-script", str(script), PROMPT]
    process = subprocess.Popen(
        command,
        cwd=repo,
        env=_environment(agent_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        rendered = render_event(line)
        if rendered and not quiet:
            print(rendered, flush=True)
    stderr = process.stderr.read() if process.stderr else ""
    if process.wait() != 0:
        raise DemoError(f"the session exited with code {process.returncode}: {stderr.strip()}")
    found = sorted((agent_dir / "sessions").glob("*/*.jsonl"))
    if not found:
        raise DemoError(f"no session file under {agent_dir / 'sessions'}")
    return found[-1]


def _environment(agent_dir: Path) -> dict[str, str]:
    import tau

    source = str(Path(tau.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "TAU_AGENT_DIR": str(agent_dir),
        "PYTHONPATH": source + (os.pathsep + path if path else ""),
    }
    for key in ("TAU_TODO_LOOP_DISABLED", "TAU_FAUX_SCRIPT", "TAU_SESSION_DIR"):
        env.pop(key, None)
    return env


def render_event(line: str) -> str | None:
    """One line of the demo's trace for a JSON-mode event, or ``None`` for events it skips."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    kind = event.get("type")
    if kind == "tool_execution_start":
        return f"  → {_call(event.get('toolName'), event.get('args') or {})}"
    if kind == "tool_execution_end":
        return _result(event)
    if kind == "message_end":
        message = event.get("message") or {}
        text = _text(message)
        if message.get("role") == "assistant" and text:
            return f"model: {text}"
    if kind == "entry_appended":
        entry = event.get("entry") or {}
        if entry.get("customType") == "todo-loop:continue":
            return "todo-loop: tasks are still open; the run continues (hidden message)"
    return None


def _call(tool: Any, args: dict[str, Any]) -> str:
    if tool == "todo":
        titles = [args.get("title")] if args.get("title") else []
        updates = [f"{u.get('id', '')[:8]} → {u.get('status')}" for u in args.get("updates") or []]
        return f"todo {args.get('action')} {', '.join(titles + updates)}".rstrip()
    if tool in ("edit", "write"):
        fused = args.get("then_run")
        suffix = f"  [Action Fusion: then_run {fused.get('command')!r}]" if isinstance(fused, dict) else ""
        return f"{tool} {args.get('path')}{suffix}"
    if tool == "read":
        return f"read {args.get('path')}"
    if tool == "bash":
        return f"bash {args.get('command')}"
    if tool == "obs_recall":
        what = (
            f"search {args.get('query')!r}"
            if args.get("query") is not None
            else f"offset {args.get('offset', 0)}"
        )
        return f"obs_recall {args.get('id')} {what}  [ObservationPack]"
    return f"{tool} {json.dumps(args)[:80]}"


def _result(event: dict[str, Any]) -> str | None:
    result = event.get("result") or {}
    text = _text(result)
    if event.get("toolName") in ("edit", "write") and "[then_run:" in text:
        marker = text[text.index("[then_run:") :].strip().replace("\n", " ")
        return f"    {marker[:100]}"
    if event.get("toolName") == "read":
        return f"    {len(text.encode())} bytes read (ObservationPack packs it after two requests)"
    if event.get("toolName") == "obs_recall":
        matches = (result.get("details") or {}).get("matches") or []
        lines = ", ".join(str(m.get("line")) for m in matches[:5])
        return f"    {len(matches)} match(es) in the stored log, line {lines}" if matches else "    no match"
    return None


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(part for part in parts if isinstance(part, str))
