"""The questions the command line asks before a session starts (:class:`~tau.modes.session_open.StartupQuestions`).

pi 1.6 asks on the terminal, before its screen starts: whether to fork a session another directory
owns into this one (``Fork this session into current directory? [y/N]``), and what to do with a
session whose directory is gone. pi reads the answer from standard input whatever it is, so piped
input (the prompt, or RPC commands) would be taken as the answer; tau asks only when standard input
is a terminal, and otherwise stops with what to run instead, before any request is made.
"""

from __future__ import annotations

import sys
from typing import TextIO

from tau.modes.session_open import MissingSessionCwdError, missing_cwd_message

__all__ = ["TerminalQuestions"]


class TerminalQuestions:
    """Ask on the terminal: the question on ``out`` (stdout in the interactive mode, stderr in the
    others, where stdout is the run's output), the answer from standard input.

    Args:
        interactive: Whether the run is the interactive mode.
        can_ask: Whether standard input is a terminal (``None``: look).
    """

    def __init__(self, *, interactive: bool, can_ask: bool | None = None) -> None:
        self.out: TextIO = sys.stdout if interactive else sys.stderr
        self.can_ask = sys.stdin.isatty() if can_ask is None else can_ask
        self.interactive = interactive

    def _ask(self, question: str) -> str:
        self.out.write(question)
        self.out.flush()
        try:
            return sys.stdin.readline().strip()
        except (OSError, ValueError, KeyboardInterrupt):
            return ""

    def fork_from_other_directory(self, session_cwd: str, value: str, path: str) -> bool:
        print(f"Session found in different project: {session_cwd}", file=self.out)
        if not self.can_ask:
            raise ValueError(
                "Error: cannot ask whether to fork it into this directory: standard input is not a "
                f"terminal.\nFork it here with: tau --fork {value}\nOr open it in its own directory with: "
                f"tau --session {path}"
            )
        answer = self._ask("Fork this session into current directory? [y/N] ").lower()
        return answer in ("y", "yes")

    def missing_cwd(self, session_cwd: str, session_file: str, cwd: str) -> str | None:
        if not self.interactive or not self.can_ask:
            raise MissingSessionCwdError(missing_cwd_message(session_cwd, session_file, cwd))
        print(f"Session cwd does not exist: {session_cwd}", file=self.out)
        choices = [
            ("continue", f"Continue in {cwd} (asks again next time)"),
            ("fork", f"Fork into {cwd} (new session ID, original kept)"),
            (None, "Cancel"),
        ]
        for number, (_, label) in enumerate(choices, 1):
            print(f"  {number}. {label}", file=self.out)
        answer = self._ask(f"Choose 1-{len(choices)} [3]: ")
        if answer in ("1", "2", "3"):
            return choices[int(answer) - 1][0]
        return None
