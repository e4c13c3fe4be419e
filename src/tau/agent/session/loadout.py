"""The session's tool loadout and system prompt (pi-host §4.3): what is declared, and the sections.

:class:`Loadout` owns the :class:`~tau.agent.session_tools.ToolSet` (registered and active tools),
the :class:`~tau.agent.session_tools.PromptSettings` (custom prompt, context files, skills), and a
run's prompt overrides from ``before_agent_start`` (a forced system prompt, edited prompt options).
It declares the active tools to the agent and writes the system-prompt patch a request needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tau.agent.agent import AgentState
from tau.agent.session.bus import EventBus
from tau.agent.session.store import SessionStore
from tau.agent.session_tools import PromptSettings, ToolSet, rendered_prompt, system_patch, unique_guidelines
from tau.agent.system_prompt import PromptOptions
from tau.session.branch_scans import messages_with_role
from tau.tools.base import ToolDefinition

__all__ = ["Loadout"]


class Loadout:
    """Tools and system prompt of one session.

    Args:
        tools: the registered tools and the active ones.
        prompt: what the prompt is built from besides the tools.
        state: the agent state whose ``tools`` are the declared ones.
        store: the working directory and the branch a loadout is restored from.
        bus: where a failing ``prepare_loadout`` hook is reported.
    """

    def __init__(
        self, tools: ToolSet, prompt: PromptSettings, state: AgentState, store: SessionStore, bus: EventBus
    ) -> None:
        self.tools = tools
        self.prompt = prompt
        self._state = state
        self._store = store
        self._bus = bus
        self.forced_prompt: str | None = None  # a run's system prompt from before_agent_start
        self._run_options: PromptOptions | None = None  # a run's options edited by its handlers

    def select(self, active: Sequence[str], restore_modifiers: Sequence[str] | None) -> None:
        """The starting loadout: ``active`` (a ``"*"`` entry: every allowed tool, after the names
        before it), then the one the branch records unless ``restore_modifiers`` is ``None``."""
        tools = self.tools
        if "*" in active:  # an allowlist: the tools it names in its order, then every allowed one (pi)
            listed = [name for name in active if name != "*"]
            registry = tools.registry
            tools.request([*(name for name in listed if name in registry), *registry], order=listed)
        else:
            tools.request(active)
        if restore_modifiers is not None:
            self.restore(restore_modifiers)
        self.apply()

    def set_active(self, names: Sequence[str]) -> None:
        self.tools.set_active(names)
        self.apply()

    def register(self, definition: ToolDefinition) -> None:
        """An extension tool (replacing a built-in of that name); one that should be active is."""
        if self.tools.register(definition):
            self.tools.activate_registered(definition.name)
        self.apply()

    def unregister(self, name: str) -> None:
        self.tools.unregister(name)
        self.apply()

    def apply(self) -> None:
        """Declare the active tools to the agent (after their ``prepare_loadout`` hooks)."""

        def guidelines(name: str) -> list[str]:
            tool = self.tools.registry.get(name)
            return unique_guidelines(tool.prompt_guidelines) if tool is not None else []

        def report(name: str, exc: BaseException) -> None:
            owner = getattr(self._bus.hooks, "tool_owner", None)
            extension = getattr(owner(name), "path", None) if owner is not None else None
            self._bus.emit_error(
                extension or f"builtin:{name}", "prepare_loadout", str(exc) or type(exc).__name__
            )

        self._state.tools = self.tools.declared_definitions(guidelines, report)

    def restore(self, modifiers: Sequence[str] = ()) -> None:
        """Activate the loadout the branch's system messages declare (``+name``/``-name`` modifiers)."""
        systems = messages_with_role(self._store.manager.get_branch(), "system")
        self.tools.restore_from_transcript(systems, modifiers)

    def reload(self) -> None:
        """The branch changed: restore its loadout and declare it."""
        self.restore()
        self.apply()

    def edit_run_options(self, options: PromptOptions) -> None:
        """A run's prompt options as its ``before_agent_start`` handlers edited them."""
        self._run_options = options

    def end_run(self) -> None:
        """The run's overrides end with it."""
        self.forced_prompt = None
        self._run_options = None

    def options(self) -> PromptOptions:
        """The prompt options: the session's, or the run's as its handlers edited them."""
        base = self.tools.prompt_options(self._store.cwd, self.prompt)
        run = self._run_options
        if run is None:
            return base
        # A run's options (edited by before_agent_start handlers) follow the live tool loadout.
        return replace(
            run,
            selected_tools=list(self.tools.active),
            hidden_tools=sorted(self.tools.hidden),
            tool_snippets={**base.tool_snippets, **run.tool_snippets},
            tool_guidelines={**base.tool_guidelines, **run.tool_guidelines},
        )

    def system_prompt(self) -> str:
        """The current system prompt text (changes not yet sent included)."""
        return rendered_prompt(self.options(), self.forced_prompt)

    def system_patch(self, messages: Sequence[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """The system message that brings ``messages`` (default: the transcript) to the current
        sections, after declaring the tools; ``None`` when nothing changed."""
        self.apply()
        return system_patch(self._state.messages if messages is None else messages, self.options())
