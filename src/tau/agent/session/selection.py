"""The model and thinking level a session starts with, and how the session file records them.

Used when a session is built and when it continues in another file (a fork, a new session, a resume).
"""

from __future__ import annotations

from typing import Any

from tau.agent.agent import AgentState
from tau.agent.settings import Settings
from tau.llm.registry import clamp_thinking_level
from tau.llm.types import Model
from tau.session.manager import SessionManager

__all__ = ["initial_thinking_level", "record_initial_selection"]


def initial_thinking_level(
    manager: SessionManager,
    settings: Settings,
    model: Model | None,
    explicit: str | None,
    context: dict[str, Any],
) -> str:
    """The level to start with: ``explicit``, else the one the branch records, else the model's own
    from ``modelThinkingLevels``, else ``defaultThinkingLevel``; clamped to the model."""
    level = explicit
    branch = manager.get_branch()
    recorded = any(entry.get("type") == "thinking_level_change" for entry in branch)
    if level is None and context["messages"] and recorded:
        level = context["thinkingLevel"]
    if level is None and model is not None:
        per_model = (settings.get("modelThinkingLevels") or {}).get(f"{model.provider}/{model.id}")
        level = per_model if isinstance(per_model, str) else None
    if level is None:
        level = settings.get("defaultThinkingLevel", "medium")
    return "off" if model is None else clamp_thinking_level(model, str(level))


def record_initial_selection(manager: SessionManager, state: AgentState, has_existing: bool) -> None:
    """Record the starting model and level: a new file gets both, a resumed one its missing level."""
    if has_existing:
        if not any(entry.get("type") == "thinking_level_change" for entry in manager.get_branch()):
            manager.append_thinking_level_change(state.thinking_level)
        return
    if state.model is not None:
        manager.append_model_change(state.model.provider, state.model.id)
    manager.append_thinking_level_change(state.thinking_level)
