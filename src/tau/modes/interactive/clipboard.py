"""Copying text to the clipboard from a terminal program, as pi 1.6 does (``utils/clipboard.ts``).

A native tool first (``pbcopy``; ``wl-copy`` under Wayland; ``xclip`` or ``xsel`` with a display;
``termux-clipboard-set``); OSC 52, the terminal's own clipboard sequence, when the session is remote
(SSH) or when nothing else could copy on a machine without a display. OSC 52 cannot be checked, so a
desktop session where every tool failed is told so instead.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from collections.abc import Callable

__all__ = ["ClipboardError", "copy_to_clipboard"]

MAX_OSC52_ENCODED = 100_000  # terminals refuse (or truncate) longer sequences


class ClipboardError(RuntimeError):
    """Nothing could copy the text; the message says what to install."""


def _commands(env: dict[str, str]) -> list[list[str]]:
    if sys.platform == "darwin":
        return [["pbcopy"]]
    found = []
    if env.get("TERMUX_VERSION"):
        found.append(["termux-clipboard-set"])
    if env.get("WAYLAND_DISPLAY"):
        found.append(["wl-copy"])
    if env.get("DISPLAY"):
        found += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    return found


def _run(command: list[str], text: str) -> bool:
    if shutil.which(command[0]) is None:
        return False
    try:
        done = subprocess.run(command, input=text.encode(), capture_output=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def copy_to_clipboard(
    text: str, write_control: Callable[[str], None], env: dict[str, str] | None = None
) -> None:
    """Copy ``text``; ``write_control`` writes a terminal control sequence (OSC 52) to the terminal.

    Raises :class:`ClipboardError` when nothing could.
    """
    env = dict(os.environ if env is None else env)
    copied = any(_run(command, text) for command in _commands(env))
    remote = bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY") or env.get("SSH_CLIENT"))
    headless = sys.platform.startswith("linux") and not (
        env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("TERMUX_VERSION")
    )
    if remote or (not copied and headless):
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        if len(encoded) <= MAX_OSC52_ENCODED:
            write_control(f"\x1b]52;c;{encoded}\x07")
            return
        if not copied:
            raise ClipboardError("Clipboard unavailable: text exceeds the OSC 52 size limit")
    if not copied:
        raise ClipboardError("Clipboard unavailable: install wl-clipboard (Wayland) or xclip/xsel (X11)")
