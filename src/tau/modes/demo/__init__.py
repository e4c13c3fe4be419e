"""``tau demo``: one real tau session, offline, in a repository of its own, then what it saved.

The demo directory (``<agentDir>/demo/``, or ``--dir DIR``) gets a tiny git repository ``repo/``
(``calc.py`` with a bug, its plain-Python test, a 60 KB ``build.log``; git is skipped when it is not
installed) and an agent dir ``agent/`` of its own, so the user's settings and sessions are left
alone. ``tau --mode json`` then runs there with the scripted faux model
(:mod:`tau.modes.demo.script`) and the default bundled extensions: todo plans three tasks,
todo-loop carries the run past each stop, Action Fusion runs the test with the fix, and
ObservationPack packs the log and recalls from it. The events are printed as they come
(:mod:`tau.modes.demo.trace`), then the session file's path and its ``tau savings`` report.
Everything stays in the demo directory, which the next ``tau demo`` replaces; nothing is left in
the temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tau.modes.demo.repo import make_repo
from tau.modes.demo.script import FACTORY
from tau.modes.demo.trace import Trace

__all__ = ["PROMPT", "default_directory", "main", "run_demo"]

PROG = "tau demo"
PROMPT = "Fix the failing test in calc.py, then check build.log for warnings and report its first error."
DEFAULT_PRICE = "anthropic/claude-sonnet-4-6"
MARKER = ".tau-demo"  # names a directory the demo made, so a later run may replace it


def default_directory() -> Path:
    """``<agentDir>/demo``: where the demo keeps its repository and its session between runs."""
    from tau.common.paths import agent_dir

    return agent_dir() / "demo"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run a scripted tau session offline in a git repository of its own and show what "
        "tau's context economy saved on it. Needs no model and no network. The repository and the "
        "session stay in the demo directory (default <agentDir>/demo, replaced by the next run).",
    )
    parser.add_argument(
        "--dir", metavar="DIR", help="the demo directory (default: <agentDir>/demo, e.g. ~/.tau/agent/demo)"
    )
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
    root = Path(args.dir).resolve() if args.dir else default_directory()
    try:
        prepare(root)
        session_file = run_demo(root, quiet=args.quiet)
    except DemoError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    tau = tau_command()
    if not args.quiet:
        print()  # a blank line after the trace
    print(f"demo directory: {root} (the next tau demo replaces it)")
    print(f"session file:   {session_file}")
    print(f"inspect it:     {tau} session check {shlex.quote(str(session_file))}")
    print(f"                {tau} savings {shlex.quote(str(session_file))}\n")
    from tau.modes.savings import main as savings_main

    return savings_main([str(session_file), "--price", args.price, "--no-progress"])


def tau_command(argv0: str | None = None) -> str:
    """How to run the tau that is running now, as a shell command.

    ``tau`` when that name on PATH is this very program; else its absolute path; under
    ``python -m`` (``argv[0]`` is a ``__main__.py``) this interpreter with ``-m tau``.
    """
    program = Path(argv0 if argv0 is not None else sys.argv[0])
    if program.name == "__main__.py" or not program.is_file():
        return f"{shlex.quote(sys.executable)} -m tau"
    found = shutil.which("tau")
    if found is not None and Path(found).resolve() == program.resolve():
        return "tau"
    return shlex.quote(str(program.resolve()))


class DemoError(Exception):
    """The demo session did not run; the message says what happened."""


def prepare(root: Path) -> None:
    """Make ``root`` an empty demo directory: new, empty, or the demo's own from an earlier run.

    Raises:
        DemoError: ``root`` holds something else (it is never deleted).
    """
    if root.exists() and not root.is_dir():
        raise DemoError(f"{root} is not a directory; pass --dir with another path")
    if root.is_dir() and any(root.iterdir()):
        if not (root / MARKER).is_file():
            raise DemoError(
                f"{root} is not empty and was not made by tau demo; it is left alone. "
                "Pass --dir with a new or empty directory."
            )
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("made by tau demo; the next tau demo replaces this directory\n")


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
        env=_environment(agent_dir, root),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    trace = Trace()
    for line in process.stdout:
        rendered = trace.render(line)
        if rendered and not quiet:
            print(rendered, flush=True)
    stderr = process.stderr.read() if process.stderr else ""
    if process.wait() != 0:
        raise DemoError(f"the session exited with code {process.returncode}: {stderr.strip()}")
    found = sorted((agent_dir / "sessions").glob("*/*.jsonl"))
    if not found:
        raise DemoError(f"no session file under {agent_dir / 'sessions'}")
    return found[-1]


def _environment(agent_dir: Path, root: Path) -> dict[str, str]:
    import tau

    source = str(Path(tau.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    scratch = root / "tmp"  # what the session writes to a temporary directory stays with the demo
    scratch.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "TAU_AGENT_DIR": str(agent_dir),
        "PYTHONPATH": source + (os.pathsep + path if path else ""),
        "TMPDIR": str(scratch),
    }
    for key in ("TAU_TODO_LOOP_DISABLED", "TAU_FAUX_SCRIPT", "TAU_SESSION_DIR"):
        env.pop(key, None)
    return env
