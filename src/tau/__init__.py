"""tau: a Python coding agent compatible with pi 1.6 session files, events and RPC.

The names below are the SDK (``docs/sdk.md``): start a session with :func:`create_agent_session`
or run one prompt with :func:`run`. They are imported on first use, so ``import tau`` (and
``tau --version``) stays cheap. Other modules are importable but are not a promise.
"""

from tau.common.lazy import lazy_exports as _lazy_exports

__version__ = "0.1.0.dev0"

_EXPORTS = {
    "AgentSession": "tau.sdk.session",
    "RunResult": "tau.sdk.oneshot",
    "Usage": "tau.sdk.usage",
    "create_agent_session": "tau.sdk.session",
    "run": "tau.sdk.oneshot",
    "SessionManager": "tau.session.manager",
    "ModelRegistry": "tau.llm.registry",
}

__all__ = [
    "AgentSession",
    "ModelRegistry",
    "RunResult",
    "SessionManager",
    "Usage",
    "__version__",
    "create_agent_session",
    "run",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
