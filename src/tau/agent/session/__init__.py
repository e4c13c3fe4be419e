"""The run-time session (pi 1.6 ``AgentSession``): an agent bound to a session file.

:class:`~tau.agent.session.agent_session.AgentSession` is a façade over collaborators that each own
their state (``docs/architecture.md`` draws them): the event bus, the session store, the input
queues, the run state, the retrier, the compactor, the plan boundaries, the navigator and the run
controller.
"""

from tau.agent.session.agent_session import NO_MODEL_MESSAGE, AgentSession, SessionListener

__all__ = ["NO_MODEL_MESSAGE", "AgentSession", "SessionListener"]
