"""pi 1.6's model cycling (Ctrl+P in the terminal, RPC ``cycle_model``) of an :class:`~tau.agent.session.AgentSession`.

With a scope (``--models``, the setting ``enabledModels``) it goes through the scope's models that have
credentials, each with its pattern's thinking level; without one, through every model with
credentials. From a model outside the list it goes to the first (or, backward, the last); one model
has nowhere to go.
"""

from __future__ import annotations

from typing import Any

from tau.llm.model_scope import next_cycle_index

__all__ = ["cycle_model"]


async def cycle_model(session: Any, direction: str = "forward") -> dict[str, Any] | None:
    """Switch ``session`` to the next model; ``{"model", "thinkingLevel", "isScoped"}`` or ``None``."""
    available = session.model_registry.get_available()
    keys = {(m.provider, m.id) for m in available}
    if session.scoped_models:
        choices = [
            (s.model, s.thinking_level)
            for s in session.scoped_models
            if (s.model.provider, s.model.id) in keys
        ]
    else:
        choices = [(m, None) for m in available]
    current = session.model
    index = next(
        (
            i
            for i, (model, _) in enumerate(choices)
            if current is not None and (model.provider, model.id) == (current.provider, current.id)
        ),
        -1,
    )
    position = next_cycle_index(index, len(choices), direction)
    if position is None:
        return None
    model, level = choices[position]
    await session.set_model(model, thinking_level=level, source="cycle")
    return {"model": model, "thinkingLevel": session.thinking_level, "isScoped": bool(session.scoped_models)}
