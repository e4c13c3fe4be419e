"""Entry for ``tau [options] [messages...]``: the agent run modes.

``-p/--print`` prints the final answer; ``--mode json`` streams every session event as JSON lines.
Without either, tau runs interactively on a terminal, and in print mode when stdin or stdout is not
a terminal (piped stdin becomes the start of the first message). Everything heavy is imported
inside :func:`main`, so ``tau --version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tau.modes.runtime import (
    Runtime,
    RuntimeOptions,
    configured_session_dir,
    load_settings,
    open_runtime,
    tool_names,
)

__all__ = [
    "NO_PROMPT",
    "Runtime",
    "build_parser",
    "build_runtime",
    "configured_session_dir",
    "load_settings",
    "main",
    "options_from_args",
    "parse_args",
]


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, sized as argparse sizes it but without importing shutil (and with it
    bz2, lzma, zlib) at every start: ``add_argument`` builds a formatter even when no help is shown."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        super().__init__(
            prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width
        )


_COMMANDS_HELP = """\
commands (each has --help):
  tau demo                      a scripted session offline, then its savings report
  tau savings FILE_OR_DIR...    what tau saves on existing pi or tau sessions
  tau batch TASKS.jsonl --out DIR
                                many headless sessions at once (local processes or Ray)
  tau session list [--all]      the sessions of this directory (ids for --session)
  tau session info|context|check FILE
                                inspect a session file without changing it
  tau config                    the settings files in effect and their values

pi's other commands never reach a model; each says what tau offers instead:
  tau install | tau remove | tau uninstall
                                extensions are files (-e PATH, ~/.tau/agent/extensions/)
  tau update                    tau is updated by pip
  tau list                      where extensions, sessions and models are listed
  tau auth                      API keys: environment, --api-key, ~/.tau/agent/auth.json
  tau help                      this help
  tau mcp                       MCP servers (not yet available in tau)

offline, with the scripted model: tau -p --model faux/faux-1 --faux-script SCRIPT.json 'hello'"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau",
        formatter_class=_HelpFormatter,
        description="tau: a coding agent compatible with pi 1.6.",
        epilog=_COMMANDS_HELP,
    )
    add = parser.add_argument
    add("--version", "-v", action="store_true", help="print the version and exit")
    add("--print", "-p", action="store_true", help="run the prompts, print the final answer, exit")
    add(
        "--mode", choices=("text", "json", "rpc"), default=None, help="output mode (json: one event per line)"
    )
    add("--list-models", nargs="?", const="", metavar="QUERY", help="list known models")
    add("--model", metavar="PATTERN", help="provider/id[:thinking], an id, or part of one")
    add("--provider", metavar="NAME", help="provider of --model")
    add("--api-key", metavar="KEY", help="API key for the selected model's provider (this run only)")
    add("--thinking", metavar="LEVEL", help="off|minimal|low|medium|high|xhigh|max")
    add(
        "--tools",
        "-t",
        metavar="LIST",
        help="comma-separated allowlist, or +name/-name changes to the defaults",
    )
    add("--no-tools", "-nt", action="store_true", help="no tools at all")
    add("--session", metavar="PATH|ID", help="open this session file (or the session with this id)")
    add("--continue", "-c", dest="continue_", action="store_true", help="continue the most recent session")
    add("--session-dir", metavar="DIR", help="where session files are kept")
    add("--no-session", action="store_true", help="keep the session in memory only")
    add("--session-id", metavar="ID", help="id of the new session")
    add("--name", "-n", metavar="NAME", help="session display name")
    add("--system-prompt", metavar="TEXT|FILE", help="replace the default system prompt")
    add("--append-system-prompt", metavar="TEXT|FILE", help="append to the system prompt")
    add("--no-context-files", "-nc", action="store_true", help="do not load AGENTS.md / CLAUDE.md")
    add("--offline", action="store_true", help="no network except the model provider")
    add("--faux-script", metavar="FILE", help="script of the faux provider (--model faux/faux-1)")
    add("--approve", "-a", dest="approve", action="store_const", const=True, help="trust this project")
    add("--no-approve", "-na", dest="approve", action="store_const", const=False, help="do not trust it")
    add(
        "--extension",
        "-e",
        action="append",
        default=[],
        metavar="PATH",
        help="load an extension (repeatable)",
    )
    add("--no-extensions", "-ne", action="store_true", help="load no extensions (bundled ones included)")
    add(
        "--disable-extension",
        action="append",
        default=[],
        metavar="NAME",
        help="skip an extension (repeatable)",
    )
    add("messages", nargs="*", help="prompts to run, in order")
    return parser


NO_PROMPT = (
    "tau: no prompt (no message on the command line, nothing on standard input); "
    'give one: tau -p "fix the failing test" or echo PROMPT | tau -p'
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line; ``--tools -edit`` keeps its ``-name`` value (argparse would see an option)."""
    fixed: list[str] = []
    for arg in argv:
        if fixed and fixed[-1] in ("--tools", "-t") and arg.startswith("-"):
            fixed[-1] = f"--tools={arg}"
        else:
            fixed.append(arg)
    return build_parser().parse_args(fixed)


# Whether this process is tau's own (the ``tau`` program), so the collector may be tuned for it.
_own_process = False


def main(argv: list[str], *, own_process: bool = False) -> int:
    global _own_process
    _own_process = own_process
    args = parse_args(argv)
    if args.version:
        from tau import __version__

        print(__version__)
        return 0
    if args.list_models is not None:
        from tau.llm.model_list import print_models

        return print_models(args.list_models)
    mode = _resolve_mode(args)
    if mode == "rpc":
        return _run_rpc(args)
    initial, messages = _initial_messages(args)
    if mode == "print" and not (initial or "").strip() and not messages:
        # pi 1.6 exits 0 without a word here; tau says why nothing ran (decisions.md).
        print(NO_PROMPT, file=sys.stderr)
        return 2
    if mode == "interactive":
        return _run_interactive(args, initial, messages)
    return asyncio.run(_run_once(args, mode, initial, messages))


def _resolve_mode(args: argparse.Namespace) -> str:
    if args.mode == "json":
        return "json"
    if args.mode == "rpc":
        return "rpc"
    if args.print or not sys.stdin.isatty() or not sys.stdout.isatty():
        return "print"
    return "interactive"


def _initial_messages(args: argparse.Namespace) -> tuple[str | None, list[str]]:
    messages = list(args.messages)
    parts = []
    if args.mode != "rpc" and not sys.stdin.isatty():
        from tau.common.jsstr import js_trim

        try:
            piped = sys.stdin.read()
        except (OSError, ValueError):  # stdin closed or not readable (embedded runs, test runners)
            piped = ""
        # As pi: the piped text trimmed (whitespace only counts as none), then the prompt, no separator.
        piped = js_trim(piped)
        if piped:
            parts.append(piped)
    if messages:
        parts.append(messages.pop(0))
    return ("".join(parts) if parts else None), messages


async def _run_once(args: argparse.Namespace, mode: str, initial: str | None, messages: list[str]) -> int:
    writer = None
    if mode == "json":
        from tau.modes.json_mode import JsonWriter

        writer = JsonWriter(sys.stdout.buffer)
    try:
        runtime = await build_runtime(args, mode, writer.attach if writer is not None else None)
    except (ValueError, RuntimeError, OSError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    for warning in runtime.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    session = runtime.session
    if session.model is None and (initial is not None or messages):
        from tau.agent.session_setup import NO_MODEL_HELP

        print(NO_MODEL_HELP, file=sys.stderr)
        return 1
    from tau.modes.print_mode import run_text
    from tau.modes.signal_exit import SIGNAL_EXIT_CODES, exit_now

    try:
        if mode == "json":
            from tau.modes.json_mode import run_json

            code = await run_json(session, initial, messages, writer=writer)
        else:
            code = await run_text(session, initial, messages)
    finally:
        await _shutdown(runtime)
        session.session_manager.close()
    if code in SIGNAL_EXIT_CODES.values() or (_own_process and not _observed()):
        # The run settled, the session is closed, the output is flushed by exit_now. After a signal,
        # a tool's stuck thread must not hold us; in tau's own process, taking apart the heap a
        # resumed session built (hundreds of thousands of objects, reference by reference) would
        # cost more than its last request did: the process leaves as it is.
        exit_now(code)
    return code


def _observed() -> bool:
    """Whether a profiler or tracer (``python -m cProfile``, coverage, a debugger) watches this process:
    it writes its results as the interpreter ends, so the run then ends normally."""
    return sys.getprofile() is not None or sys.gettrace() is not None


# RuntimeOptions fields whose flag has another name (``-e`` appends to ``args.extension``).
_FLAG_NAMES = {"extensions": "extension", "disable_extensions": "disable_extension"}


def options_from_args(args: argparse.Namespace) -> RuntimeOptions:
    """The command line as :class:`~tau.modes.runtime.RuntimeOptions` (cwd: the process's)."""
    given = {
        item.name: getattr(args, _FLAG_NAMES.get(item.name, item.name))
        for item in dataclasses.fields(RuntimeOptions)
        if hasattr(args, _FLAG_NAMES.get(item.name, item.name))
    }
    given["tools"] = tool_names(given.get("tools"))
    for name in _FLAG_NAMES:
        given[name] = list(given.get(name) or [])
    return RuntimeOptions(**given)


async def build_runtime(
    args: argparse.Namespace, mode: str, before_start: Callable[[Any, Any], None] | None = None
) -> Runtime:
    """Settings, trust, models, the session file and the session, from the command line.

    ``before_start(session, runner)`` runs once the extensions are bound and before
    ``session_start`` is emitted, so a mode can subscribe to the events its handlers cause.
    """
    with _loading_heap():
        return await open_runtime(options_from_args(args), mode, before_start)


# The collector's thresholds once the session is loaded (CPython's default: 700, 10, 10).
_RUN_THRESHOLDS = (10_000, 10, 100)


@contextmanager
def _loading_heap() -> Iterator[None]:
    """In tau's own process: no collector passes while the session loads, then the loaded heap frozen
    and the collector tuned for the run.

    A resumed session is hundreds of thousands of objects (entries, messages, the projection) that
    live as long as the process; each full collection would walk all of them again (a third of a
    10,000-entry resume, half of a 50,000-entry one). They hold no reference cycles, so freed
    objects still go by reference counting; ``gc.freeze`` only stops the collector visiting them.
    The first requests then build what lasts as long (the context's copies and what the bundled
    extensions keep per message), and every request makes lists as long as the context: with the
    default thresholds a 50,000-entry resume spent a quarter of its time in passes that found
    nothing. Young collections stay (cycles die young: tasks, exceptions), 14 times rarer; a full
    one comes after about ten million allocations.
    """
    if not _own_process:
        yield
        return
    import gc

    gc.disable()
    try:
        yield
        gc.freeze()
        gc.set_threshold(*_RUN_THRESHOLDS)
    finally:
        gc.enable()


async def _shutdown(runtime: Runtime) -> None:
    await runtime.session.shutdown()


# -- other modes -----------------------------------------------------------------------------


def _run_rpc(args: argparse.Namespace) -> int:
    try:
        from tau.modes import rpc  # type: ignore[attr-defined]
    except ImportError:
        print("tau: --mode rpc is not available in this build", file=sys.stderr)
        return 2
    return int(rpc.main(args) or 0)


def _run_interactive(args: argparse.Namespace, initial: str | None, messages: list[str]) -> int:
    try:
        from tau.modes import interactive  # type: ignore[attr-defined]
    except ImportError:
        print("tau: the interactive mode is not available yet; use -p or --mode json", file=sys.stderr)
        return 2
    return int(interactive.main(args, initial, messages) or 0)
