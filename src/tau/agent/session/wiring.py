"""The composition root of a run-time session: its collaborators, built and wired to the agent.

Each collaborator receives what it uses (the agent, the bus, the store, the run state, other
collaborators), never the session; the agent receives the loop hooks, the recording stream, the
boundary and the between-turns hook, and one subscriber for its events.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from tau.agent.agent import Agent
from tau.agent.resources import Resources
from tau.agent.session.agent_events import AgentEvents
from tau.agent.session.boundaries import Boundaries
from tau.agent.session.bus import EventBus
from tau.agent.session.compaction import Compactor
from tau.agent.session.controller import RunController
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.loadout import Loadout
from tau.agent.session.loop_hooks import LoopHooks
from tau.agent.session.navigator import Navigator
from tau.agent.session.nested import NestedCallRunner
from tau.agent.session.prompting import Prompter
from tau.agent.session.retry import Retrier
from tau.agent.session.run_state import RunState
from tau.agent.session.selection import ModelControl, create_agent, record_initial_selection
from tau.agent.session.store import SessionStore
from tau.agent.session_hooks import SessionHooks
from tau.agent.session_tools import PromptSettings, ToolSet
from tau.agent.settings import Settings
from tau.common.dataclass import dataclass
from tau.llm.registry import ModelRegistry
from tau.llm.stream import StreamFunction
from tau.llm.types import Model
from tau.session.manager import SessionManager
from tau.tools.base import ToolDefinition

__all__ = ["Collaborators", "assemble"]


@dataclass(frozen=True)
class Collaborators:
    """The parts of one session (``docs/architecture.md`` says what each owns)."""

    agent: Agent
    bus: EventBus
    store: SessionStore
    run: RunState
    queues: InputQueues
    loadout: Loadout
    retrier: Retrier
    compactor: Compactor
    controller: RunController
    prompter: Prompter
    navigator: Navigator
    models: ModelControl
    nested: NestedCallRunner
    boundaries: Boundaries
    settings: Settings
    registry: ModelRegistry
    resources: Resources


def assemble(
    manager: SessionManager,
    settings: Settings | None,
    registry: ModelRegistry | None,
    model: Model | None,
    tools: Sequence[ToolDefinition] | None,
    cwd: str | os.PathLike[str] | None,
    hooks: SessionHooks | None,
    *,
    thinking_level: str | None,
    allowed_tools: Callable[[str], bool] | None,
    excluded_tools: Callable[[str], bool] | None,
    prompt: PromptSettings | None,
    stream_fn: StreamFunction | None,
    resources: Resources | None,
    active_tools: Sequence[str] | None,
    restore_modifiers: Sequence[str] | None,
) -> Collaborators:
    """Build the collaborators of a session on ``manager``, wire them to a new agent and select its
    tools (the arguments are :class:`~tau.agent.session.agent_session.AgentSession`'s; ``None``
    ``restore_modifiers``: the loadout the branch records is not restored)."""
    settings = settings or Settings.in_memory()
    registry = registry or ModelRegistry()
    prompt = prompt or PromptSettings()
    if resources is not None and not prompt.skills:
        prompt.skills = list(resources.skills)
    resources = resources or Resources(skills=list(prompt.skills))
    if tools is None:
        from tau.tools.registry import all_builtin_tools

        tools = all_builtin_tools()
    stream_fn = stream_fn or registry.stream
    bus = EventBus(hooks)
    store = SessionStore(manager, str(cwd) if cwd is not None else None, bus.emit)
    agent = create_agent(store, settings, model, thinking_level, stream_fn)
    run = RunState(agent.abort)
    store.attach(agent.state, run.stop)
    queues = InputQueues(bus.emit)
    loadout = Loadout(ToolSet(tools, allowed_tools, excluded_tools), prompt, agent.state, store, bus)
    loop = LoopHooks(store, agent, settings, bus, loadout)
    loop.install()
    retrier = Retrier(settings, run, bus.emit)
    compactor = Compactor(store, agent, settings, bus, run, stream_fn, loop.convert_to_llm)
    agent.stream_fn = compactor.recording_stream
    boundaries = Boundaries(store, agent, bus, run, queues)
    agent.finish_turn = boundaries.finish_turn
    controller = RunController(
        store, agent, settings, bus, run, queues, loadout, retrier, compactor, boundaries
    )
    agent.prepare_next_turn = controller.prepare_next_turn
    prompter = Prompter(store, agent, settings, registry, bus, run, queues, resources, controller)
    navigator = Navigator(
        store, agent, bus, run, queues, compactor, registry, settings, controller.abort, loadout.reload
    )
    models = ModelControl(agent, store, settings, registry, bus)
    nested = NestedCallRunner(agent, bus, loop, loadout, stream_fn)
    agent.subscribe(AgentEvents(store, agent, bus, run, queues, retrier, compactor, nested).on_agent_event)
    record_initial_selection(store.manager, agent.state, bool(store.projection.get()["messages"]))
    loadout.select(
        list(active_tools) if active_tools is not None else settings.default_tools(), restore_modifiers
    )
    return Collaborators(
        agent, bus, store, run, queues, loadout, retrier, compactor, controller, prompter, navigator, models, nested,
        boundaries, settings, registry, resources,
    )  # fmt: skip
