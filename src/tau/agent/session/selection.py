"""The model and thinking level of a session: what it starts with, how the file records them, switching.

The starting selection is used when a session is built and when it continues in another file (a
fork, a new session, a resume); :class:`ModelControl` switches them while the session runs.
"""

from __future__ import annotations

from typing import Any

from tau.agent.agent import Agent, AgentState
from tau.agent.queues import QUEUE_MODES
from tau.agent.session.bus import EventBus
from tau.agent.session.store import SessionStore
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry, clamp_thinking_level, supported_thinking_levels
from tau.llm.stream import StreamFunction
from tau.llm.types import Model
from tau.session.manager import SessionManager

__all__ = ["ModelControl", "create_agent", "initial_thinking_level", "record_initial_selection"]


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


def create_agent(
    store: SessionStore,
    settings: Settings,
    model: Model | None,
    thinking_level: str | None,
    stream_fn: StreamFunction,
) -> Agent:
    """The agent of a session: its transcript is the session's projection, its level the starting one."""
    # The projection every request starts from, built once here (and kept by the cache) rather
    # than a context now and the projection again at the first request.
    projection = store.projection.get()
    context = {**projection, "messages": list(projection["messages"])}
    level = initial_thinking_level(store.manager, settings, model, thinking_level, context)
    return Agent(
        model=model,  # type: ignore[arg-type]
        stream_fn=stream_fn,
        messages=context["messages"],
        thinking_level=level,
        steering_mode=settings.get("steeringMode", "one-at-a-time"),
        follow_up_mode=settings.get("followUpMode", "one-at-a-time"),
    )


class ModelControl:
    """Switching the model, the thinking level and the queue modes of a running session.

    Args:
        agent: the agent holding the model, the level and the queue modes.
        store: the session file the changes are recorded in.
        settings: ``modelThinkingLevels`` and ``defaultThinkingLevel``.
        registry: whether a model has credentials.
        bus: ``thinking_level_changed`` and the ``model_select`` / ``thinking_level_select`` hooks.
    """

    def __init__(
        self,
        agent: Agent,
        store: SessionStore,
        settings: Settings,
        registry: ModelRegistry,
        bus: EventBus,
    ) -> None:
        self._agent = agent
        self._state = agent.state
        self._store = store
        self._settings = settings
        self._registry = registry
        self._bus = bus

    async def set_model(
        self, model: Model, *, thinking_level: str | None = None, source: str = "set"
    ) -> None:
        """Switch model (recorded as a ``model_change``); the thinking level is re-clamped.

        The level is ``thinking_level`` (a scoped model's own), else the model's from
        ``modelThinkingLevels``, else a ``defaultThinkingLevel`` that a settings file sets, else the
        current one (pi 1.6: an unset default keeps the level). ``source`` reaches ``model_select``.
        """
        if not self._registry.has_configured_auth(model):
            raise ValueError(f"No API key for {model.provider}/{model.id}")
        previous = self._state.model
        self._state.model = model
        self._store.manager.append_model_change(model.provider, model.id)
        per_model = (self._settings.get("modelThinkingLevels") or {}).get(f"{model.provider}/{model.id}")
        self.set_thinking_level(
            thinking_level
            or per_model
            or self._settings.get_set("defaultThinkingLevel")
            or self._state.thinking_level
        )
        if previous is None or (previous.provider, previous.id) != (model.provider, model.id):
            await self._bus.emit_hook(
                {"type": "model_select", "model": model, "previousModel": previous, "source": source}
            )

    def set_queue_mode(self, key: str, mode: str) -> None:
        """``steeringMode`` or ``followUpMode``: ``"all"`` or ``"one-at-a-time"``, saved to the user settings."""
        if mode not in QUEUE_MODES:
            raise ValueError(f'Queue mode must be "all" or "one-at-a-time", got {mode!r}')
        if key == "steeringMode":
            self._agent.steering_mode = mode
        else:
            self._agent.follow_up_mode = mode
        self._settings.save_global(key, mode)

    def available_levels(self) -> list[str]:
        model = self._state.model
        return supported_thinking_levels(model) if model else ["off"]

    def set_thinking_level(self, level: str) -> None:
        """Set the level (clamped to the model); a change is recorded and announced."""
        model = self._state.model
        effective = clamp_thinking_level(model, level) if model else "off"
        previous = self._state.thinking_level
        self._state.thinking_level = effective
        if effective != previous:
            self._store.manager.append_thinking_level_change(effective)
            self._bus.emit({"type": "thinking_level_changed", "level": effective})
            self._bus.schedule_hook(
                {"type": "thinking_level_select", "level": effective, "previousLevel": previous}
            )
