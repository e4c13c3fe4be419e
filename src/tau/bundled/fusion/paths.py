"""The file a fused ``edit``/``write`` targets, resolved exactly as the built-in tools resolve it.

The built-in tools' own resolver (``@`` stripped, Unicode spaces normalised, ``~`` expanded,
``file://`` URLs decoded, relative to the cwd), taken from the extension API, so the queue key and
the hashed file are the file the built-in mutation touched.
"""

from __future__ import annotations

from tau.extension import resolve_to_cwd

__all__ = ["resolve_tool_path"]


def resolve_tool_path(path: str, cwd: str) -> str:
    """The absolute path the built-in ``edit``/``write`` would touch; raises ``ValueError`` for a bad URL."""
    return resolve_to_cwd(path, cwd)
