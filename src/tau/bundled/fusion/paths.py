"""The file a fused ``edit``/``write`` targets, resolved exactly as the built-in tools resolve it.

The built-in tools' resolver (``@`` stripped, Unicode spaces normalised, ``~`` expanded,
``file://`` URLs decoded, relative to the cwd) is used through the extension API when it offers
it; until then this module carries the same rules, so the queue key and the hashed file are the
file the built-in mutation touched.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

__all__ = ["resolve_tool_path"]

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def _file_url_to_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f'File URL host must be "localhost" or empty on {os.uname().sysname.lower()}')
    if re.search("%2f", parts.path, re.IGNORECASE):
        raise ValueError("File URL path must not include encoded / characters")
    return unquote(parts.path, errors="replace") if parts.path else "/"


def _expand(path: str) -> str:
    normalized = _UNICODE_SPACES.sub(" ", path)
    if normalized.startswith("@"):
        normalized = normalized[1:]
    home = os.path.expanduser("~")
    if normalized == "~":
        return home
    if normalized.startswith("~/"):
        return os.path.join(home, normalized[2:])
    if normalized.startswith("file://"):
        return _file_url_to_path(normalized)
    return normalized


def _resolve_like_builtins(path: str, cwd: str) -> str:
    expanded = _expand(path)
    joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
    resolved = os.path.normpath(joined)
    return "/" + resolved.lstrip("/") if resolved.startswith("//") else resolved


try:  # the built-in tools' own resolver, once the extension API exports it
    from tau.extension import resolve_to_cwd as _builtin_resolver  # type: ignore[attr-defined]
except ImportError:
    _builtin_resolver = _resolve_like_builtins


def resolve_tool_path(path: str, cwd: str) -> str:
    """The absolute path the built-in ``edit``/``write`` would touch; raises ``ValueError`` for a bad URL."""
    return _builtin_resolver(path, cwd)
