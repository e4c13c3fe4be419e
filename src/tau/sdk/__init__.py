"""tau's Python SDK: a tau session inside your program (``docs/sdk.md``).

The names are re-exported by :mod:`tau` (``from tau import create_agent_session``); import them
from there. The SDK sits at the modes layer: it uses the CLI's own setup
(:func:`tau.modes.runtime.open_runtime`).
"""

from tau.sdk.oneshot import RunResult, run
from tau.sdk.session import AgentSession, create_agent_session
from tau.sdk.usage import Usage, recorded_usage

__all__ = ["AgentSession", "RunResult", "Usage", "create_agent_session", "recorded_usage", "run"]
