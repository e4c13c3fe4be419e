"""Make model, tool and pasted text safe to show on a terminal.

Nothing that came from a model, a tool or a paste reaches the terminal raw: escape sequences
(CSI, OSC, DCS, ...), other C0/C1 control characters and bidirectional overrides are removed, tabs
become spaces, and CR-LF / lone CR become LF. Only the interactive mode's own renderer emits
styling, and extension components may style their lines with SGR (``ESC [ ... m``) only.
"""

from __future__ import annotations

import re

__all__ = ["sanitize_styled_line", "sanitize_text", "strip_ansi"]

# CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings (up to BEL or ESC \), two-character escapes,
# and their 8-bit C1 forms.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"
    r"|\x1b[ -/]*[0-~]?",
    re.DOTALL,
)
# C0 controls but TAB and LF, DEL, C1 controls; bidi embeddings, overrides and isolates (Trojan
# Source); zero-width no-break/BOM kept out of the layout too.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ufeff]")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def strip_ansi(text: str) -> str:
    """``text`` without escape sequences (control characters kept)."""
    return _ESCAPES.sub("", text)


def sanitize_text(text: str, *, tab_size: int = 4) -> str:
    """``text`` safe to render: no escapes, no control characters but LF, no bidi overrides."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " " * tab_size)
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def sanitize_styled_line(line: str) -> str:
    """One line of an extension component: SGR styling kept, every other sequence and control removed."""
    parts: list[str] = []
    last = 0
    for match in _SGR.finditer(line):
        parts.append(sanitize_text(line[last : match.start()]).replace("\n", " "))
        parts.append(match.group())
        last = match.end()
    parts.append(sanitize_text(line[last:]).replace("\n", " "))
    return "".join(parts)
