"""The interactive mode: ``tau`` on a terminal (pi-host §8.1; docs/interactive.md).

:func:`run_interactive` drives a started session; :func:`main` builds one from the command line
(``tau.modes.run`` calls it when stdin and stdout are terminals and neither ``-p`` nor ``--mode``
is given). The screen is built from the session's events by :class:`ChatController` (a render
model tests assert on) and drawn by :class:`InteractiveMode`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import inspect
from collections.abc import Iterable
from typing import Any

from tau.modes.interactive.model import ChatController, FooterState
from tau.modes.interactive.overlay import OverlayHost
from tau.modes.interactive.ui import InteractiveUI

__all__ = ["ChatController", "FooterState", "InteractiveUI", "OverlayHost", "main", "run_interactive"]


async def run_interactive(
    session: Any,
    runner: Any = None,
    *,
    initial: str | None = None,
    messages: Iterable[str] = (),
    input: Any = None,
    output: Any = None,
) -> int:
    """Run the interactive mode on ``session`` (started) until the user quits; returns the exit code.

    Args:
        session: The :class:`~tau.agent.session.AgentSession`.
        runner: Its extension runner (the mode installs its UI: ``ctx.mode == "tui"``), or ``None``.
        initial, messages: Prompts sent first, in order (the command line's messages).
        input, output: prompt_toolkit terminal I/O (default: the process's terminal).
    """
    from tau.modes.interactive.app import InteractiveMode

    mode = InteractiveMode(session, runner, input=input, output=output)
    try:
        return await mode.run(initial, messages)
    finally:
        await session.shutdown()


def main(
    args: argparse.Namespace,
    initial: str | None = None,
    messages: Iterable[str] = (),
    images: list[dict[str, Any]] | None = None,
) -> int:
    """``tau`` on a terminal (called by :mod:`tau.modes.run` with the parsed command line)."""
    return asyncio.run(_main(args, initial, list(messages), images))


async def _main(
    args: argparse.Namespace,
    initial: str | None,
    messages: list[str],
    images: list[dict[str, Any]] | None = None,
) -> int:
    from tau.modes.signal_exit import CountingExecutor, exit_now

    workers = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(workers)
    code = await _sessions(args, initial, messages, images)
    if workers.busy:  # the screen is restored and the session closed: a stuck tool thread must not hold us
        exit_now(code)
    return code


async def _sessions(
    args: argparse.Namespace, initial: str | None, messages: list[str], images: list[dict[str, Any]] | None
) -> int:
    while True:
        code, switch_to, reason = await _run_once(args, initial, messages, images)
        if switch_to is None:
            return code
        from tau.modes.interactive.app import RELOAD

        initial, messages, images = None, [], None
        args = copy.copy(args)
        args.resume = False
        args.start_reason = reason  # session_start says why it starts again, as pi's does
        if switch_to == RELOAD:  # /reload before anything was saved: the same command line again
            continue
        # /resume, /reload: the same command line, on the chosen session file.
        args.session, args.continue_, args.no_session, args.session_id, args.name = (
            switch_to,
            False,
            False,
            None,
            None,
        )
        args.fork = None


async def _run_once(
    args: argparse.Namespace,
    initial: str | None,
    messages: list[str],
    images: list[dict[str, Any]] | None = None,
) -> tuple[int, str | None, str]:
    from tau.modes.interactive.app import InteractiveMode
    from tau.modes.run import build_runtime, print_warnings, start_failed

    holder: dict[str, Any] = {}

    options: dict[str, Any] = {
        "resume_at_start": bool(getattr(args, "resume", False)),
        "verbose": bool(getattr(args, "verbose", False)),
        "theme_paths": list(getattr(args, "theme", None) or []),
        "no_themes": bool(getattr(args, "no_themes", False)),
        "use_theme": getattr(args, "use_theme", None),
    }

    def before_start(session: Any, runner: Any) -> None:
        holder["mode"] = InteractiveMode(session, runner, can_switch=True, **options)

    try:
        if "before_start" in inspect.signature(build_runtime).parameters:
            runtime = await build_runtime(args, "tui", before_start=before_start)
        else:
            runtime = await build_runtime(args, "tui")
    except (ValueError, RuntimeError, OSError) as exc:
        return start_failed(exc, "tui"), None, "quit"
    print_warnings(runtime)
    mode = holder.get("mode") or InteractiveMode(
        runtime.session, runtime.extensions, can_switch=True, **options
    )
    mode.add_theme_paths(getattr(runtime.session.resources, "theme_paths", None) or [])
    try:
        code = await mode.run(initial, messages, images)
    finally:
        try:
            await runtime.session.shutdown(mode.switch_reason if mode.switch_to else "quit")
        finally:
            runtime.session.session_manager.close()
    return code, mode.switch_to, mode.switch_reason
