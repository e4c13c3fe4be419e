"""``tau --mode rpc``: the headless JSON-lines protocol of pi 1.6 (pi-host §8.2–§8.4).

Commands arrive on stdin, one JSON object per LF-terminated line; responses, session events and
extension UI requests leave on stdout the same way. ``docs/rpc.md`` describes the protocol.

Embedding: build an :class:`~tau.agent.session.AgentSession` (and its extension runner), then
``await run_rpc_mode(session, runner)``; ``main(args)`` does it from the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from tau.modes.rpc.framing import LineSplitter, serialize_line
from tau.modes.rpc.mode import RpcMode, read_stdin_lines
from tau.modes.rpc.ui import RpcUI
from tau.modes.signal_exit import SIGNAL_EXIT_CODES, exit_now

__all__ = ["LineSplitter", "RpcMode", "RpcUI", "main", "run_rpc_mode", "serialize_line"]


async def run_rpc_mode(
    session: Any,
    runner: Any = None,
    *,
    lines: AsyncIterator[str] | None = None,
    out: BinaryIO | None = None,
) -> int:
    """Serve the RPC protocol for ``session`` until input ends; returns the exit code.

    Args:
        session: The session to drive (already started, or started by the caller after this
            mode attached; see :meth:`RpcMode.attach`).
        runner: Its extension runner, if any (the mode installs its UI and shutdown handler).
        lines: Input lines (default: stdin, LF-framed).
        out: Output stream (default: stdout's raw bytes).
    """
    mode = RpcMode(session, runner, out)
    return await mode.run(lines if lines is not None else read_stdin_lines())


def main(args: argparse.Namespace) -> int:
    """``tau --mode rpc`` (called by :mod:`tau.modes.run` with the parsed command line)."""
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    from tau.modes import loop_errors
    from tau.modes.run import build_runtime, print_warnings, start_failed

    loop_errors.install()
    out = sys.stdout.buffer
    # stdout carries the protocol only: stray prints (extensions, libraries) go to stderr.
    sys.stdout = sys.stderr
    holder: dict[str, RpcMode] = {}

    def before_start(session: Any, runner: Any) -> None:
        holder["mode"] = RpcMode(session, runner, out)
        holder["mode"].attach()

    try:
        if "before_start" in inspect.signature(build_runtime).parameters:
            runtime = await build_runtime(args, "rpc", before_start=before_start)
        else:
            runtime = await build_runtime(args, "rpc")
    except (ValueError, RuntimeError, OSError) as exc:
        return start_failed(exc, "rpc")
    # Diagnostics go to stderr, never stdout (stdout is the protocol), as pi's RPC mode does.
    print_warnings(runtime)
    mode = holder.get("mode") or RpcMode(runtime.session, runtime.extensions, out)
    try:
        code = await mode.run(read_stdin_lines())
    finally:
        runtime.session.session_manager.close()
    if code in SIGNAL_EXIT_CODES.values():
        exit_now(code)  # settled and closed; a tool's stuck thread must not hold the exit
    return code
