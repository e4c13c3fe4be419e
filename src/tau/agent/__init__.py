"""Agent core: the loop, the stateful agent, the run-time session, compaction.

Names are imported on first use so ``import tau.agent`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.agent.agent import Agent, AgentBusyError, AgentState
    from tau.agent.loop import run_loop, run_loop_continue
    from tau.agent.session import AgentSession
    from tau.agent.session_hooks import NoHooks, SessionHooks
    from tau.agent.session_tools import PromptSettings

_EXPORTS: dict[str, str] = {
    "Agent": "tau.agent.agent",
    "AgentBusyError": "tau.agent.agent",
    "AgentSession": "tau.agent.session",
    "AgentState": "tau.agent.agent",
    "NoHooks": "tau.agent.session_hooks",
    "PromptSettings": "tau.agent.session_tools",
    "SessionHooks": "tau.agent.session_hooks",
    "run_loop": "tau.agent.loop",
    "run_loop_continue": "tau.agent.loop",
}

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentSession",
    "AgentState",
    "NoHooks",
    "PromptSettings",
    "SessionHooks",
    "run_loop",
    "run_loop_continue",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
