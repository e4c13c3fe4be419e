"""Raw terminal input as key names, and text made inert for display and editing.

:func:`parse_keys` reads what a terminal sends: plain characters, control characters, CSI and SS3
sequences (arrows, PgUp/PgDn, Home/End, with modifiers) and Kitty's CSI-u encoding
(``ESC [ code[:shifted] ; mods[:event] u``), keeping case and modifiers: ``a``, ``A``, ``D``,
``ctrl+c``, ``alt+a``, ``shift+enter``. Key releases are dropped. Pasted text never comes here.
"""

from __future__ import annotations

import re

__all__ = ["clean", "parse_keys"]

_CSI_FINAL = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end"}
_TILDE = {1: "home", 7: "home", 4: "end", 8: "end", 5: "pageup", 6: "pagedown", 3: "delete", 2: "insert"}
_CODES = {13: "enter", 27: "escape", 9: "tab", 127: "backspace", 8: "backspace", 32: " "}
_SHIFT, _ALT, _CTRL = 1, 2, 4


def parse_keys(data: str) -> list[str]:
    """The keys in one chunk of terminal input, in order."""
    keys: list[str] = []
    index = 0
    while index < len(data):
        char = data[index]
        if char == "\x1b":
            key, index = _escape(data, index)
            if key:
                keys.append(key)
            continue
        index += 1
        if char == "\r":
            keys.append("enter")
        elif char == "\n":
            keys.append("ctrl+j")
        elif char in "\x7f\x08":
            keys.append("backspace")
        elif char == "\t":
            keys.append("tab")
        elif ord(char) < 0x20:
            keys.append("ctrl+" + chr(ord(char) + 0x60))
        else:
            keys.append(char)
    return keys


def _escape(data: str, index: int) -> tuple[str | None, int]:
    """The key of the escape sequence at ``index`` and where the next key starts."""
    if index + 1 >= len(data) or data[index + 1] == "\x1b":
        return "escape", index + 1
    follower = data[index + 1]
    if follower == "O" and index + 2 < len(data):
        return _CSI_FINAL.get(data[index + 2]), index + 3
    if follower != "[":
        return ("alt+enter" if follower == "\r" else "alt+" + follower), index + 2
    end = index + 2
    while end < len(data) and not ("\x40" <= data[end] <= "\x7e"):
        end += 1
    if end >= len(data):
        return None, len(data)  # a cut sequence: ignored
    return _csi(data[index + 2 : end], data[end]), end + 1


def _csi(params: str, final: str) -> str | None:
    fields = params.split(";")
    modifiers, event = _modifiers(fields[1] if len(fields) > 1 else "")
    if event == 3:  # a key release
        return None
    if final in _CSI_FINAL:
        return _with_modifiers(_CSI_FINAL[final], modifiers)
    if final == "~":
        number = _int(fields[0].split(":")[0])
        name = _TILDE.get(number) if number is not None else None
        return _with_modifiers(name, modifiers) if name else None
    if final == "u":
        return _kitty(fields[0], modifiers)
    return None


def _modifiers(field: str) -> tuple[int, int]:
    mods, _, event = field.partition(":")
    value = _int(mods)
    return ((value - 1) & (_SHIFT | _ALT | _CTRL) if value else 0), (_int(event) or 1)


def _kitty(field: str, modifiers: int) -> str | None:
    codes = field.split(":")
    code = _int(codes[0])
    if code is None:
        return None
    if code in _CODES and code != 32:
        return _with_modifiers(_CODES[code], modifiers)
    shifted = _int(codes[1]) if len(codes) > 1 and codes[1] else None
    try:
        char = chr(shifted if shifted is not None and modifiers & _SHIFT else code)
    except ValueError:
        return None
    if not char.isprintable() or 0xE000 <= code <= 0xF8FF:  # functional keys Kitty maps to private use
        return None
    if modifiers & _SHIFT and shifted is None:
        char = char.upper()
    if modifiers & _CTRL:
        return "ctrl+" + ("alt+" if modifiers & _ALT else "") + char.lower()
    if modifiers & _ALT:
        return "alt+" + char
    return char


def _with_modifiers(name: str | None, modifiers: int) -> str | None:
    if name is None:
        return None
    prefix = ("ctrl+" if modifiers & _CTRL else "") + ("alt+" if modifiers & _ALT else "")
    prefix += "shift+" if modifiers & _SHIFT else ""
    return prefix + name


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


# ESC sequences (CSI with parameters, OSC up to BEL or ST, DCS/SOS/PM/APC, two-character escapes),
# other C0 controls, DEL, C1 controls, and the bidi controls.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -~]?"
    r"|[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\x7f]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def clean(text: str, *, multiline: bool = False) -> str:
    """``text`` without terminal instructions or bidi controls; tabs become spaces, and newlines
    too unless ``multiline``. Safe to show in a terminal and to insert into an editor."""
    text = _SEQUENCE.sub("", text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _CONTROL.sub("", text)
    return text if multiline else text.replace("\n", " ")
