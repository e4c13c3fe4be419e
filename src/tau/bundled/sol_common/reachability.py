"""Warn when an enabled mechanism cannot be reached by the model (extensions.md §5.2).

Checked after registration and again on the first ``before_agent_start`` (a later extension may
have replaced the tools). A finding appends one ``sol-pi-reachability-v1`` custom entry and, in the
interactive mode, a warning notice; each reason is reported once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REACHABILITY_TYPE", "find_unreachable", "probe_reachability", "watch_reachability"]

REACHABILITY_TYPE = "sol-pi-reachability-v1"
REACHABILITY_SCHEMA = "sol-pi-reachability/1"


def _exposes_then_run(tool: dict[str, Any]) -> bool:
    parameters = tool.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return isinstance(properties, dict) and "then_run" in properties


def _fusion_reachable(active: list[dict[str, Any]]) -> bool:
    if any(_exposes_then_run(tool) for tool in active):
        return True
    if any(isinstance(tool.get("parameters"), dict) for tool in active):
        return False
    return any(tool.get("name") in ("edit", "write") for tool in active)


def find_unreachable(
    *, action_fusion: bool, reducer: bool, active: list[dict[str, Any]], all_tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The findings for these tool surfaces: ``{mechanism, reason, message, activeTools, allTools}``."""
    names = {"activeTools": [t.get("name") for t in active], "allTools": [t.get("name") for t in all_tools]}
    findings = []
    if action_fusion and not _fusion_reachable(active):
        findings.append(
            {
                "mechanism": "actionFusion",
                "reason": "then_run-not-on-active-tools",
                "message": "Action Fusion is enabled but the tool the model calls does not expose then_run",
                **names,
            }
        )
    if reducer and not any(tool.get("name") == "bash" for tool in all_tools):
        findings.append(
            {
                "mechanism": "evidencePreservingReducer",
                "reason": "bash-tool-absent",
                "message": "Reducer is enabled but no tool in this session reports as bash",
                **names,
            }
        )
    return findings


def _surface(tau: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    try:
        all_tools = list(tau.get_all_tools())
        active_names = list(tau.get_active_tools())
    except Exception:  # a host without these answers is "not ready", never "no tools"
        return None
    by_name = {tool.get("name"): tool for tool in all_tools}
    active = [by_name.get(name, {"name": name}) for name in active_names]
    if not all_tools and not active:
        return None
    return active, all_tools


def probe_reachability(
    tau: Any, ctx: Any, *, action_fusion: bool, reducer: bool, warned: set[str]
) -> list[dict[str, Any]]:
    """Report each new finding (entry, and a notice in the interactive mode); returns them."""
    if not action_fusion and not reducer:
        return []
    surface = _surface(tau)
    if surface is None:
        return []
    emitted = []
    for finding in find_unreachable(
        action_fusion=action_fusion, reducer=reducer, active=surface[0], all_tools=surface[1]
    ):
        if finding["reason"] in warned:
            continue
        warned.add(finding["reason"])
        emitted.append(finding)
        try:
            tau.append_entry(REACHABILITY_TYPE, {"schema": REACHABILITY_SCHEMA, "kind": "warning", **finding})
        except Exception:  # nowhere to persist it; the notice still helps
            pass
        if ctx.mode == "tui":
            try:
                ctx.ui.notify(f"⚡ SoL-Pi · {finding['message']}", "warning")
            except Exception:  # presentation is best effort
                pass
    return emitted


def watch_reachability(tau: Any, ctx: Any, *, action_fusion: bool, reducer: bool) -> None:
    """Probe now and once more on the first ``before_agent_start``."""
    if not action_fusion and not reducer:
        return
    warned: set[str] = set()
    probe_reachability(tau, ctx, action_fusion=action_fusion, reducer=reducer, warned=warned)
    probed = {"done": False}

    def on_before_agent_start(event: Any, agent_ctx: Any) -> None:
        if probed["done"]:
            return
        probed["done"] = True
        probe_reachability(tau, agent_ctx, action_fusion=action_fusion, reducer=reducer, warned=warned)

    tau.on("before_agent_start", on_before_agent_start)
