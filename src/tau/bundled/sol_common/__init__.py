"""Pieces shared by the context-economy extensions (SoL-Pi): settings, paths, savings, reachability."""

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
