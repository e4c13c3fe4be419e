"""``tau session list [--all]``: the sessions of this directory (or of all), newest first.

Headers and message counts are read; nothing is locked or written. The ids it prints are what
``tau --session ID`` (or a unique prefix of one) opens.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tau.modes.wording import counted

__all__ = ["add_list_parser", "run_list"]


def add_list_parser(commands: Any) -> None:
    """Register ``list`` on the ``tau session`` subcommands."""
    parser = commands.add_parser(
        "list",
        help="the sessions of this directory, newest first (ids for tau --session)",
        description="List the sessions of the current directory, newest first: id, last change, "
        "message count, and the name or first message. Never writes anything.",
    )
    parser.add_argument("--all", action="store_true", help="the sessions of every directory")
    parser.add_argument("--session-dir", metavar="DIR", help="where session files are kept")


def _sessions(args: argparse.Namespace, cwd: str) -> list[Any]:
    from tau.agent.settings import SettingsError
    from tau.modes.inspect import InspectError
    from tau.modes.run import configured_session_dir, load_settings
    from tau.session.manager import SessionManager

    try:
        settings, _ = load_settings(cwd, None)
    except SettingsError as exc:  # one line naming the file, as every command says it
        raise InspectError(str(exc)) from exc
    directory = configured_session_dir(args.session_dir, cwd, settings)
    return SessionManager.list_all(directory) if args.all else SessionManager.list(cwd, directory)


def _line(info: Any, with_cwd: bool) -> str:
    title = " ".join((info.name or info.first_message or "(no messages)").split())
    title = title if len(title) <= 60 else title[:59] + "…"
    count = counted(info.message_count, "message")
    where = f"  {info.cwd or '?'}" if with_cwd else ""
    return f"{info.id}  {info.modified.astimezone():%Y-%m-%d %H:%M}  {count:>12}{where}  {title}"


def run_list(args: argparse.Namespace) -> int:
    cwd = os.getcwd()
    sessions = _sessions(args, cwd)
    if not sessions:
        where = "any directory" if args.all else cwd
        print(f"No sessions for {where} yet (`tau session list --all` lists every directory's).")
        return 0
    for info in sessions:
        print(_line(info, args.all))
    sys.stdout.flush()
    return 0
