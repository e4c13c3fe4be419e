"""Reading the ``sol`` settings through the public extension API.

The values come from the effective settings (``tau.get_settings()``: user file, trusted project
file, CLI overrides). Each settings file is also validated on its own, so an error names the
``settings.json`` that holds the offending value; values from elsewhere are named ``settings.json``.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.sol_common.settings import SolSettings, parse_sol_settings
from tau.extension import Settings

__all__ = ["load_sol_settings"]

_MISSING = object()


def _file_sources(ctx: Any) -> list[tuple[str, Any]]:
    try:
        files = Settings.load(ctx.cwd, project_trusted=bool(ctx.is_project_trusted()))
    except Exception:  # the host's settings loader reports unreadable files itself
        return []
    sources = []
    for path, data in (
        (files.global_path, files.global_settings),
        (files.project_path, files.project_settings),
    ):
        if isinstance(data, dict) and "sol" in data:
            sources.append((str(path), data["sol"]))
    return sources


def load_sol_settings(tau: Any, ctx: Any) -> SolSettings:
    """The effective ``sol`` settings; raises :class:`~.settings.SolConfigError` for a bad value."""
    parse_sol_settings(_file_sources(ctx))
    block = (tau.get_settings() or {}).get("sol", _MISSING)
    return parse_sol_settings([] if block is _MISSING else [("settings.json", block)])
