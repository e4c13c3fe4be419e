"""Raw terminal input to key names, for the interactive mode's own overlay components.

Extension components get the raw data (``handle_input``); tau's dialogs decode it with
:func:`parse_key`: legacy VT sequences, and Kitty CSI-u sequences (``ESC [ code ; mods u``).
"""

from __future__ import annotations

import re

__all__ = ["parse_key"]

_LEGACY = {
    "\r": "enter",
    "\n": "ctrl+j",
    "\x1b": "escape",
    "\x1b\r": "alt+enter",
    "\x1b\n": "alt+enter",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\t": "tab",
    "\x1b[Z": "shift+tab",
    "\x03": "ctrl+c",
    "\x04": "ctrl+d",
    "\x13": "ctrl+s",
    "\x15": "ctrl+u",
    "\x01": "home",
    "\x05": "end",
    "\x1b[A": "up",
    "\x1b[B": "down",
    "\x1b[C": "right",
    "\x1b[D": "left",
    "\x1bOA": "up",
    "\x1bOB": "down",
    "\x1bOC": "right",
    "\x1bOD": "left",
    "\x1b[H": "home",
    "\x1b[F": "end",
    "\x1bOH": "home",
    "\x1bOF": "end",
    "\x1b[1~": "home",
    "\x1b[4~": "end",
    "\x1b[3~": "delete",
    "\x1b[5~": "pageup",
    "\x1b[6~": "pagedown",
}
_KITTY = re.compile(r"\x1b\[(\d+)(?::\d+)*(?:;(\d+)(?::\d+)?)?u")
_KITTY_NAMES = {13: "enter", 27: "escape", 127: "backspace", 9: "tab", 32: "space"}


def _kitty(code: int, mods: int) -> str:
    base = _KITTY_NAMES.get(code) or chr(code)
    bits = max(0, mods - 1)
    prefix = "".join(name for bit, name in ((4, "ctrl+"), (2, "alt+"), (1, "shift+")) if bits & bit)
    return prefix + base


def parse_key(data: str) -> str:
    """The key name of ``data`` (``enter``, ``up``, ``ctrl+c``, ``shift+enter``...), or the text typed."""
    if data in _LEGACY:
        return _LEGACY[data]
    match = _KITTY.fullmatch(data)
    if match:
        return _kitty(int(match.group(1)), int(match.group(2) or 1))
    if len(data) == 1 and ord(data) < 32:
        return f"ctrl+{chr(ord(data) + 96)}"
    return data
