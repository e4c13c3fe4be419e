"""Entry for ``tau [options] [messages...]``: the agent run modes.

``-p/--print`` prints the final answer; ``--mode json`` streams every session event as JSON lines.
Without either, tau runs interactively on a terminal, and in print mode when stdin or stdout is not
a terminal (piped stdin becomes the start of the first message). Everything heavy is imported
inside :func:`main`, so ``tau --version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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
  tau session list [--all]      the sessions of this directory (ids for --session)
  tau session info|context|check FILE
                                inspect a session file without changing it

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


@dataclass
class Runtime:
    """What the modes need: the session, the extension runtime (if any), and startup warnings."""

    session: Any
    extensions: Any = None
    warnings: list[str] = field(default_factory=list)


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
        from tau.llm.registry import print_models

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
    try:
        if mode == "json":
            from tau.modes.json_mode import run_json

            return await run_json(session, initial, messages, writer=writer)
        from tau.modes.print_mode import run_text

        return await run_text(session, initial, messages)
    finally:
        await _shutdown(runtime)
        session.session_manager.close()


async def build_runtime(
    args: argparse.Namespace, mode: str, before_start: Callable[[Any, Any], None] | None = None
) -> Runtime:
    """Settings, trust, models, the session file and the session, from the command line.

    ``before_start(session, runner)`` runs once the extensions are bound and before
    ``session_start`` is emitted, so a mode can subscribe to the events its handlers cause.
    """
    with _loading_heap():
        return await _build_runtime(args, mode, before_start)


async def _build_runtime(
    args: argparse.Namespace, mode: str, before_start: Callable[[Any, Any], None] | None
) -> Runtime:
    from tau.agent.session import AgentSession
    from tau.agent.session_setup import (
        context_files,
        prompt_file_text,
        select_model,
        tool_selection,
        unknown_tools_warning,
    )
    from tau.agent.session_tools import PromptSettings
    from tau.common.paths import agent_dir, project_config_dir
    from tau.llm.registry import THINKING_LEVELS, ModelRegistry

    if args.offline:
        os.environ["TAU_OFFLINE"] = "1"
    if args.faux_script:
        from tau.llm.providers import faux

        faux.use_script(Path(args.faux_script).resolve())
    cwd = os.getcwd()
    directory = agent_dir()
    settings, trusted = load_settings(cwd, args.approve)
    warnings: list[str] = list(settings.problems)
    registry = ModelRegistry()
    if registry.error:
        warnings.append(registry.error)
    manager = _session_manager(args, cwd, settings)
    if args.name is not None:
        # pi names the session before the model and thinking level are recorded.
        name = " ".join(args.name.split()).strip()
        if not name:
            raise ValueError("Error: --name requires a non-empty value")
        manager.append_session_info(args.name)
    thinking = args.thinking
    if thinking is not None and thinking not in THINKING_LEVELS:
        warnings.append(f'Invalid thinking level "{thinking}". Valid values: {", ".join(THINKING_LEVELS)}')
        thinking = None
    selection = select_model(
        registry,
        settings,
        pattern=args.model,
        provider=args.provider,
        api_key_given=bool(args.api_key),
        session_branch=manager.get_branch() if not args.model else (),
    )
    if selection.warning:
        warnings.append(selection.warning)
    if args.api_key and selection.model is not None:
        registry.set_runtime_api_key(selection.model.provider, args.api_key)
    tools = tool_selection(settings, args.tools.split(",") if args.tools is not None else None, args.no_tools)
    project = project_config_dir(cwd)
    prompt = PromptSettings(
        custom_prompt=prompt_file_text(
            args.system_prompt, cwd, [project / "SYSTEM.md"] * trusted + [directory / "SYSTEM.md"]
        ),
        append_prompt=prompt_file_text(
            args.append_system_prompt,
            cwd,
            [project / "APPEND_SYSTEM.md"] * trusted + [directory / "APPEND_SYSTEM.md"],
        )
        or "",
        context_files=[] if args.no_context_files else context_files(cwd, directory),
    )
    session = AgentSession(
        manager,
        settings,
        registry,
        selection.model,
        cwd=manager.get_cwd(),
        thinking_level=thinking or selection.thinking_level,
        active_tools=tools.active,
        tool_modifiers=tools.modifiers,
        restore_tools=tools.restore,
        allowed_tools=tools.allowed,
        prompt=prompt,
    )
    extensions = await load_extensions(session, args, mode, trusted)
    if before_start is not None:
        before_start(session, extensions)
    await session.start()
    if args.tools:  # after session_start: extensions may register tools there
        unknown = unknown_tools_warning(args.tools.split(","), session.get_offered_tool_names())
        warnings += [unknown] if unknown else []
    return Runtime(session, extensions, warnings)


@contextmanager
def _loading_heap() -> Iterator[None]:
    """In tau's own process: no collector passes while the session loads, then the loaded heap frozen.

    A resumed session is hundreds of thousands of objects (entries, messages, the projection) that
    live as long as the process; each full collection would walk all of them again (a third of a
    10,000-entry resume, half of a 50,000-entry one). They hold no reference cycles, so freed
    objects still go by reference counting; ``gc.freeze`` only stops the collector visiting them.
    """
    if not _own_process:
        yield
        return
    import gc

    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        gc.enable()


def load_settings(cwd: str, approve: bool | None) -> tuple[Any, bool]:
    """The settings of a run in ``cwd`` (the project file only when trusted) and the trust decision."""
    from tau.agent.settings import Settings
    from tau.agent.trust import resolve_trust

    user_settings = Settings.load(cwd, project_trusted=False)
    trusted = resolve_trust(
        cwd, approve=approve, default_policy=str(user_settings.get("defaultProjectTrust", "ask"))
    )
    return (Settings.load(cwd, project_trusted=trusted) if trusted else user_settings), trusted


def configured_session_dir(flag: str | None, cwd: str, settings: Any) -> str | None:
    """Where sessions go: ``--session-dir``, then ``TAU_SESSION_DIR``, then ``sessionDir`` (``None``: the default)."""
    configured = flag or os.environ.get("TAU_SESSION_DIR") or settings.get("sessionDir")
    if not configured:
        return None
    return str((Path(cwd) / os.path.expanduser(str(configured))).resolve())


def _session_manager(args: argparse.Namespace, cwd: str, settings: Any) -> Any:
    from tau.session.manager import SessionManager

    session_dir = configured_session_dir(args.session_dir, cwd, settings)
    if args.no_session:
        return SessionManager.in_memory(cwd, id=args.session_id)
    if args.session:
        return SessionManager.open(_resolve_session(args.session, cwd, session_dir), session_dir)
    if args.continue_:
        return SessionManager.continue_recent(cwd, session_dir)
    return SessionManager.create(cwd, session_dir, id=args.session_id)


def _resolve_session(value: str, cwd: str, session_dir: str | None) -> str:
    """``--session``: a path (has a separator or ends in .jsonl), else an exact id, else an id prefix."""
    from tau.session.manager import SessionManager

    if "/" in value or "\\" in value or value.endswith(".jsonl"):
        return str(Path(cwd, value).resolve())
    exact = SessionManager.find_by_id(cwd, value, session_dir)
    if exact:
        return exact
    for listing in (SessionManager.list(cwd, session_dir), SessionManager.list_all(session_dir)):
        match = next((info for info in listing if info.id.startswith(value)), None)
        if match is not None:
            return str(match.path)
    raise ValueError(
        f"No session found matching {value!r} (use a file path, or an id from `tau session list`)"
    )


# -- extensions ------------------------------------------------------------------------------


async def load_extensions(session: Any, args: argparse.Namespace, mode: str, trusted: bool) -> Any:
    """Load the extensions (``-e``, project, user, entry points, bundled) and bind them to ``session``.

    Returns the runner (``None`` when nothing is to be loaded, or the extension layer is missing).
    RPC and interactive sessions always get a runner: their clients and commands talk to it.
    """
    if args.no_extensions and not args.extension and mode in ("print", "json"):
        return None  # nothing to load: keep the extension layer out of the import time
    try:
        from tau.extension.loader import load_extensions as load
    except ImportError:
        if args.extension:
            print("Warning: extensions are not available in this build; ignoring -e", file=sys.stderr)
        return None
    return await load(
        session,
        cli_paths=list(args.extension),
        cwd=session.cwd,
        trusted=trusted,
        no_extensions=bool(args.no_extensions),
        disabled=list(args.disable_extension),
        settings=session.settings,
        mode=mode,
    )


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
