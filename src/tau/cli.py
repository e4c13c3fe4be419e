"""The ``tau`` command line.

Subcommands (``tau session ...``) live in their own modules and are imported only when used,
so ``tau --version`` stays fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from tau.modes import std_streams

# A first word that names a subcommand runs it; any other first word is a prompt, as in pi.
# subcommand -> "module" exposing ``main(argv: list[str]) -> int``, or "module:function" (same shape).
# pi 1.6's own words are all here, so none of them ever reaches a model: tau's `config`, and for
# the ones tau has no counterpart of, one line saying what tau offers instead.
SUBCOMMANDS: dict[str, str] = {
    "session": "tau.modes.inspect",
    "savings": "tau.modes.savings",
    "demo": "tau.modes.demo",
    "batch": "tau.modes.batch",
    "config": "tau.modes.config_command",
    "mcp": "tau.modes.mcp_command",  # pi's `pi mcp` (docs/mcp.md)
    "install": "tau.modes.pi_commands:install",
    "remove": "tau.modes.pi_commands:remove",
    "uninstall": "tau.modes.pi_commands:remove",
    "update": "tau.modes.pi_commands:update",
    "list": "tau.modes.pi_commands:list_",
    "auth": "tau.modes.pi_commands:auth",
    "help": "tau.modes.pi_commands:help",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run tau with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Called without ``argv`` (as the ``tau`` program), the process is tau's own: the collector is
    tuned for it once the session is loaded (:func:`tau.modes.run.main`).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        # pi 1.6's process markers, for the commands tau runs (and their children) to see who
        # launched them: a generic one, and tau's own (pi's is PI_CODING_AGENT=true). Not set when
        # tau is embedded (the SDK), as in pi.
        os.environ["AI_AGENT"] = "tau"
        os.environ["TAU_CODING_AGENT"] = "true"
        # tau's own standard streams: a closed one (<&-, 2>&-) gets /dev/null before anything opens a
        # file in its place; with stdout closed (>&-) nothing tau prints could be read.
        std_streams.prepare()
        closed = std_streams.stdout_closed_message()
        if closed is not None:
            print(closed, file=sys.stderr)
            return 1
    try:
        code = _dispatch(args, program=argv is None)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`tau --list-models | head -1`): stop quietly, as command-line tools do.
        # The streams are pointed at /dev/null so the interpreter's final flush cannot fail again.
        std_streams.silence_std_streams()
        return std_streams.READER_GONE  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe


def _dispatch(args: list[str], program: bool = False) -> int:
    if args and args[0] in ("--version", "-v"):
        from tau import __version__

        print(__version__)
        return 0
    if program:
        # From here on a signal ends tau with its code (130, 143, 129), without a traceback, in every
        # state: a run attaches its orderly stop to the guard (tau.modes.signal_exit).
        from tau.modes.signal_exit import guard

        guard.install()
    if args and args[0] in SUBCOMMANDS:
        if program and args[0] == "session":
            # Reading one file and printing it: nothing cyclic to collect, and collector passes
            # over the parsed entries would cost more than the read.
            import gc

            gc.disable()
        module_name, _, function = SUBCOMMANDS[args[0]].partition(":")
        command = getattr(importlib.import_module(module_name), function or "main")
        return int(command(args[1:]) or 0)
    from tau.modes.run import main as run_main

    return int(run_main(args, own_process=program) or 0)
