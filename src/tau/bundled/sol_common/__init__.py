"""Pieces shared by the context-economy extensions (SoL-Pi): settings, paths, savings, reachability.

The names below are imported on first use: every start loads the bundled extensions, and most of
them only need :func:`load_sol_settings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.bundled.sol_common.host import load_sol_settings
    from tau.bundled.sol_common.paths import RuntimeRoot, SolPathError, runtime_root
    from tau.bundled.sol_common.reachability import (
        REACHABILITY_TYPE,
        find_unreachable,
        probe_reachability,
        watch_reachability,
    )
    from tau.bundled.sol_common.settings import SOL_KEYS, SolConfigError, SolSettings, parse_sol_settings
    from tau.bundled.sol_common.tui import (
        STATUS_KEY,
        banner_lines,
        format_savings_bytes,
        format_savings_count,
        show_savings,
    )

_EXPORTS: dict[str, str] = {
    "REACHABILITY_TYPE": "tau.bundled.sol_common.reachability",
    "SOL_KEYS": "tau.bundled.sol_common.settings",
    "STATUS_KEY": "tau.bundled.sol_common.tui",
    "RuntimeRoot": "tau.bundled.sol_common.paths",
    "SolConfigError": "tau.bundled.sol_common.settings",
    "SolPathError": "tau.bundled.sol_common.paths",
    "SolSettings": "tau.bundled.sol_common.settings",
    "banner_lines": "tau.bundled.sol_common.tui",
    "find_unreachable": "tau.bundled.sol_common.reachability",
    "format_savings_bytes": "tau.bundled.sol_common.tui",
    "format_savings_count": "tau.bundled.sol_common.tui",
    "load_sol_settings": "tau.bundled.sol_common.host",
    "parse_sol_settings": "tau.bundled.sol_common.settings",
    "probe_reachability": "tau.bundled.sol_common.reachability",
    "runtime_root": "tau.bundled.sol_common.paths",
    "show_savings": "tau.bundled.sol_common.tui",
    "watch_reachability": "tau.bundled.sol_common.reachability",
}

__all__ = [
    "REACHABILITY_TYPE",
    "SOL_KEYS",
    "STATUS_KEY",
    "RuntimeRoot",
    "SolConfigError",
    "SolPathError",
    "SolSettings",
    "banner_lines",
    "find_unreachable",
    "format_savings_bytes",
    "format_savings_count",
    "load_sol_settings",
    "parse_sol_settings",
    "probe_reachability",
    "runtime_root",
    "show_savings",
    "watch_reachability",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
