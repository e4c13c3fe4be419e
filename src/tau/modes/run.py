"""Entry for ``tau [options] [messages...]``: the agent run modes.

``-p/--print`` prints the final answer; ``--mode json`` streams every session event as JSON lines.
Without either, tau runs interactively on a terminal, and in print mode when stdin or stdout is not
a terminal (piped stdin becomes the start of the first message). Everything heavy is imported
inside :func:`main`, so ``tau --version`` stays fast (``--help`` loads the extensions, to list
their flags, as pi does).
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

from tau.modes.cli_args import FLAGS, help_text, parse_args
from tau.modes.runtime import (
    Runtime,
    RuntimeOptions,
    configured_session_dir,
    load_settings,
    open_runtime,
    tool_names,
)

__all__ = [
    "FLAGS",
    "NO_PROMPT",
    "Runtime",
    "build_runtime",
    "configured_session_dir",
    "load_settings",
    "main",
    "options_from_args",
    "parse_args",
]


NO_PROMPT = (
    "tau: no prompt (no message on the command line, nothing on standard input); "
    'give one: tau -p "fix the failing test" or echo PROMPT | tau -p'
)

HELP_HINT = "tau --help lists the options"
EXTENSION_HINT = 'Hint: start without extensions using "tau -ne".'


# Whether this process is tau's own (the ``tau`` program), so the collector may be tuned for it.
_own_process = False


def main(argv: list[str], *, own_process: bool = False) -> int:
    global _own_process
    _own_process = own_process
    args = parse_args(argv)
    if _report(args.diagnostics):
        return 1
    if args.version:
        from tau import __version__

        print(__version__)
        return 0
    if args.help:
        return _help(args)
    if args.export:
        return _export(args.export, args.messages[0] if args.messages else None)
    for flag, feature in args.ignored:
        if feature:
            print(f"Warning: {flag}: {feature} are not available in tau yet; ignored", file=sys.stderr)
    if args.list_models is not None:
        from tau.llm.model_list import print_models

        return print_models(args.list_models)
    conflict = _conflicting_flags(args)
    if conflict:
        print(f"Error: {conflict}", file=sys.stderr)
        return 1
    mode = _resolve_mode(args)
    if mode == "rpc" and args.file_args:
        print("Error: @file arguments are not supported in RPC mode", file=sys.stderr)
        return 1
    if mode == "rpc":
        return _run_rpc(args)
    try:
        initial, images, messages = _initial_messages(args)
    except ValueError as exc:  # an @file that cannot be read
        print(str(exc), file=sys.stderr)
        return 1
    if mode == "print" and not (initial or "").strip() and not messages and not images:
        # An unknown option comes first, as in pi (where `--bogus hi` makes "hi" the option's value).
        unknown = _unknown_flags(args)
        if unknown:
            print(unknown, file=sys.stderr)
            print(HELP_HINT, file=sys.stderr)
            return 1
        # pi 1.6 exits 0 without a word here; tau says why nothing ran (decisions.md).
        print(NO_PROMPT, file=sys.stderr)
        return 2
    if args.resume and mode != "interactive":
        print(
            "Error: --resume picks a session in the terminal; here, name one with --session ID "
            "(tau session list shows the ids)",
            file=sys.stderr,
        )
        return 1
    if mode == "interactive":
        return _run_interactive(args, initial, messages, images)
    return asyncio.run(_run_once(args, mode, initial, messages, images))


def _report(diagnostics: list[tuple[str, str]]) -> bool:
    """Print the parser's problems as pi does (``Error: …`` / ``Warning: …``); True when one is an error."""
    for kind, message in diagnostics:
        print(f"{'Error' if kind == 'error' else 'Warning'}: {message}", file=sys.stderr)
    errors = [message for kind, message in diagnostics if kind == "error"]
    if any(message.startswith("Unknown option") for message in errors):
        print(HELP_HINT, file=sys.stderr)
    return bool(errors)


def _help(args: argparse.Namespace) -> int:
    """``tau --help``, with the flags of the extensions this command line loads, as pi 1.6 lists them.

    pi loads its extensions (``-e``, the project's when trusted, the user's, the bundled ones) to
    show their flags; so does tau, without starting a session or writing one. A failing extension
    is reported on stderr and the help is printed all the same.
    """
    try:
        flags = asyncio.run(_extension_flags(args))
    except (ValueError, RuntimeError, OSError) as exc:  # the help must not depend on them
        print(f"Warning: extension flags not listed: {exc}", file=sys.stderr)
        flags = []
    print(help_text(flags))
    return 0


def _unknown_flags(args: argparse.Namespace) -> str | None:
    """pi's ``Unknown option: --x`` for the long options no extension this command line loads declares."""
    given = list(getattr(args, "unknown_flags", None) or {})
    if not given:
        return None
    try:
        declared = {flag["name"] for flag in asyncio.run(_extension_flags(args))}
    except (ValueError, RuntimeError, OSError):
        declared = set()
    unknown = [name for name in given if name not in declared]
    if not unknown:
        return None
    return f"Error: Unknown option{'s' if len(unknown) > 1 else ''}: {', '.join('--' + name for name in unknown)}"


async def _extension_flags(args: argparse.Namespace) -> list[dict[str, Any]]:
    options = dataclasses.replace(
        options_from_args(args),
        no_session=True,
        session=None,
        fork=None,
        continue_=False,
        session_id=None,
        name=None,
        flags=None,
    )
    runtime = await open_runtime(options, "print", load_only=True)
    try:
        print_warnings(runtime)
        runner = runtime.extensions
        return [flag for ext in getattr(runner, "extensions", ()) for flag in ext.flags.values()]
    finally:
        runtime.session.session_manager.close()


def _export(session: str, output: str | None) -> int:
    """``tau --export FILE [OUT]``: the session as one HTML page (pi 1.6's ``--export``)."""
    from tau.modes.export_html import export_file

    try:
        path = export_file(session, output)
    except (ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(f"Exported to: {path}")
    return 0


def _conflicting_flags(args: argparse.Namespace) -> str | None:
    """pi 1.6's rules for the session flags that exclude each other, or ``None``."""
    given = {
        "--session": args.session,
        "--continue": args.continue_,
        "--resume": args.resume,
        "--no-session": args.no_session,
    }
    if args.fork:
        clash = [flag for flag, value in given.items() if value]
        if clash:
            return f"--fork cannot be combined with {', '.join(clash)}"
    if args.session_id is not None:
        clash = [flag for flag, value in given.items() if value and flag != "--no-session"]
        if clash:
            return f"--session-id cannot be combined with {', '.join(clash)}"
    return None


def _resolve_mode(args: argparse.Namespace) -> str:
    if args.mode == "json":
        return "json"
    if args.mode == "rpc":
        return "rpc"
    if args.print or not sys.stdin.isatty() or not sys.stdout.isatty():
        return "print"
    return "interactive"


def _initial_messages(args: argparse.Namespace) -> tuple[str | None, list[dict[str, Any]] | None, list[str]]:
    """The first message (piped stdin, then the ``@`` files, then the first message), its images, the rest.

    Raises ``ValueError`` (:class:`~tau.modes.file_args.FileArgumentError`) for an ``@`` file that
    cannot be read.
    """
    from tau.modes.file_args import FileArguments, build_initial_message, process_file_arguments

    piped = None
    if args.mode != "rpc" and not sys.stdin.isatty():
        from tau.common.jsstr import js_trim

        try:
            text = sys.stdin.read()
        except (OSError, ValueError):  # stdin closed or not readable (embedded runs, test runners)
            text = ""
        # As pi: the piped text trimmed (whitespace only counts as none), then the prompt, no separator.
        piped = js_trim(text) or None
    files = process_file_arguments(args.file_args, os.getcwd()) if args.file_args else FileArguments()
    return build_initial_message(piped, files, list(args.messages))


async def _run_once(
    args: argparse.Namespace,
    mode: str,
    initial: str | None,
    messages: list[str],
    images: list[dict[str, Any]] | None = None,
) -> int:
    from tau.modes import loop_errors

    loop_errors.install()
    writer = None
    if mode == "json":
        from tau.modes.json_mode import JsonWriter

        writer = JsonWriter(sys.stdout.buffer)
    try:
        runtime = await build_runtime(args, mode, writer.attach if writer is not None else None)
    except (ValueError, RuntimeError, OSError) as exc:
        return start_failed(exc, mode)
    print_warnings(runtime)
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

            code = await run_json(session, initial, messages, images=images, writer=writer)
        else:
            code = await run_text(session, initial, messages, images=images)
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


def start_failed(exc: BaseException, mode: str) -> int:
    """A run that could not start: why on stderr, with a hint where one helps; returns 1 (0 when the
    user chose not to start it).

    pi 1.6 stops every mode on an extension that fails to load, with a hint to start without
    extensions. In print and JSON modes the failure's line is already on stderr (the loader reports
    it there); the other modes print it here.
    """
    from tau.modes.runtime import ExtensionLoadError
    from tau.modes.session_open import MissingSessionCwdError, SessionNotOpened

    if isinstance(exc, SessionNotOpened):  # the user said no: nothing failed (pi: "Aborted.", exit 0)
        if str(exc):
            print(str(exc), file=sys.stdout if mode == "tui" else sys.stderr)
        return 0
    if isinstance(exc, ExtensionLoadError):
        if mode not in ("print", "json"):
            print(str(exc), file=sys.stderr)
        print(EXTENSION_HINT, file=sys.stderr)
        return 1
    message = str(exc)
    plain = message.startswith(("Error", "Warning")) or isinstance(exc, MissingSessionCwdError)  # pi's words
    print(message if plain else f"Error: {message}", file=sys.stderr)
    if message.startswith("Error: Unknown option"):
        print(HELP_HINT, file=sys.stderr)
    return 1


def print_warnings(runtime: Runtime) -> None:
    for warning in runtime.warnings:
        print(f"Warning: {warning}", file=sys.stderr)


def _observed() -> bool:
    """Whether a profiler or tracer (``python -m cProfile``, coverage, a debugger) watches this process:
    it writes its results as the interpreter ends, so the run then ends normally."""
    return sys.getprofile() is not None or sys.gettrace() is not None


# RuntimeOptions fields whose flag has another name (``-e`` appends to ``args.extension``; an
# extension's ``--plan`` lands in ``args.unknown_flags``).
_FLAG_NAMES = {
    "extensions": "extension",
    "disable_extensions": "disable_extension",
    "flags": "unknown_flags",
    "skills": "skill",
    "prompt_templates": "prompt_template",
}


def options_from_args(args: argparse.Namespace) -> RuntimeOptions:
    """The command line as :class:`~tau.modes.runtime.RuntimeOptions` (cwd: the process's)."""
    given = {
        item.name: getattr(args, _FLAG_NAMES.get(item.name, item.name))
        for item in dataclasses.fields(RuntimeOptions)
        if hasattr(args, _FLAG_NAMES.get(item.name, item.name))
    }
    given["tools"] = tool_names(given.get("tools"))
    for name in ("extensions", "disable_extensions", "skills", "prompt_templates"):
        given[name] = list(given.get(name) or [])
    given["flags"] = dict(given.get("flags") or {}) or None
    return RuntimeOptions(**given)


async def build_runtime(
    args: argparse.Namespace, mode: str, before_start: Callable[[Any, Any], None] | None = None
) -> Runtime:
    """Settings, trust, models, the session file and the session, from the command line.

    ``before_start(session, runner)`` runs once the extensions are bound and before
    ``session_start`` is emitted, so a mode can subscribe to the events its handlers cause.
    """
    from tau.modes.startup_questions import TerminalQuestions

    questions = TerminalQuestions(interactive=mode == "tui", can_ask=mode != "rpc" and _stdin_is_terminal())
    with _loading_heap():
        return await open_runtime(
            options_from_args(args),
            mode,
            before_start,
            stop_on_load_errors=True,
            questions=questions,
            start_reason=getattr(args, "start_reason", None) or "startup",  # the interactive mode's restarts
        )


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed
        return False


# The collector's thresholds once the session is loaded (CPython's default: 700, 10, 10); the young
# generation's grows with the loaded heap (see run_thresholds).
_RUN_THRESHOLDS = (10_000, 10, 100)
# Young objects allowed per object of the loaded (frozen) heap before a young collection.
_YOUNG_PER_LOADED = 2


def run_thresholds(loaded: int) -> tuple[int, int, int]:
    """The collector's thresholds for a run whose loaded heap (frozen) holds ``loaded`` objects.

    The first request of a resumed session builds about as many objects as were loaded, and they
    last as long (the context's copies, what the provider and the bundled extensions keep per
    message): a young collection every 10,000 of them would walk each one once or twice and find
    nothing (a tenth of a 50,000-entry resume). So the young generation may hold twice the loaded
    heap before a pass. Per object allocated the collector's work is the same as with a fixed
    threshold (each pass walks what survived since the last one); what changes is that a short run
    ends before the first pass, as most of the objects it would walk are still in use.
    """
    young, middle, old = _RUN_THRESHOLDS
    return max(young, _YOUNG_PER_LOADED * loaded), middle, old


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
    nothing. Young collections stay (cycles die young: tasks, exceptions), after as many new objects
    as twice the loaded heap (:func:`run_thresholds`); a full one is a thousand of those away.
    """
    if not _own_process:
        yield
        return
    import gc

    gc.disable()
    try:
        yield
        gc.freeze()
        gc.set_threshold(*run_thresholds(gc.get_freeze_count()))
    finally:
        gc.enable()


async def _shutdown(runtime: Runtime) -> None:
    await runtime.session.shutdown()


# -- other modes -----------------------------------------------------------------------------


def _run_rpc(args: argparse.Namespace) -> int:
    try:
        from tau.modes import rpc
    except ImportError:
        print("tau: --mode rpc is not available in this build", file=sys.stderr)
        return 2
    return int(rpc.main(args) or 0)


def _run_interactive(
    args: argparse.Namespace, initial: str | None, messages: list[str], images: list[dict[str, Any]] | None
) -> int:
    try:
        from tau.modes import interactive
    except ImportError:
        print("tau: the interactive mode is not available yet; use -p or --mode json", file=sys.stderr)
        return 2
    return int(interactive.main(args, initial, messages, images) or 0)
