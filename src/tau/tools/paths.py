"""Turning a path a model wrote into the file it means (pi's ``path-utils.ts`` and ``utils/paths.ts``).

A leading ``@`` is dropped (models copy it from ``@file`` mentions), Unicode space variants become
plain spaces, ``~`` is the home directory, ``file://`` URLs are decoded, and relative paths resolve
against the tool context's working directory. ``read`` also tries the spellings macOS gives
screenshot files: a narrow no-break space before AM/PM, NFD, and a curly apostrophe.
"""

from __future__ import annotations

import os
import re
import unicodedata
from urllib.parse import unquote, urlsplit

from tau.common.lazy_regex import lazy_pattern

__all__ = ["expand_path", "resolve_read_path", "resolve_to_cwd"]

_UNICODE_SPACES = lazy_pattern("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = lazy_pattern(r" (AM|PM)\.", re.IGNORECASE)
_NARROW_NO_BREAK_SPACE = "\u202f"


def expand_path(path: str) -> str:
    """Normalize spaces, strip ``@``, expand ``~`` and decode ``file://`` URLs; stays relative if it was."""
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


def resolve_to_cwd(path: str, cwd: str) -> str:
    """The absolute, normalized path ``path`` names when relative paths start at ``cwd``."""
    expanded = expand_path(path)
    joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
    resolved = os.path.normpath(joined)
    # Node's path.resolve folds a leading "//" that POSIX normpath keeps.
    return "/" + resolved.lstrip("/") if resolved.startswith("//") else resolved


def resolve_read_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_to_cwd`, then the first macOS spelling variant that exists, if the path does not."""
    resolved = resolve_to_cwd(path, cwd)
    if os.path.exists(resolved):
        return resolved
    nfd = unicodedata.normalize("NFD", resolved)
    for variant in (
        _AM_PM.sub(lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ):
        if variant != resolved and os.path.exists(variant):
            return variant
    return resolved


def _file_url_to_path(url: str) -> str:
    """Node's ``fileURLToPath`` on POSIX: host must be empty or ``localhost``, no encoded ``/``."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f'File URL host must be "localhost" or empty on {os.uname().sysname.lower()}')
    if re.search("%2f", parts.path, re.IGNORECASE):
        raise ValueError("File URL path must not include encoded / characters")
    return unquote(parts.path, errors="replace") if parts.path else "/"
