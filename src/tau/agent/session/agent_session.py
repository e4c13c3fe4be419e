"""The run-time session (pi 1.6 ``AgentSession``): an :class:`~tau.agent.agent.Agent` bound to a session file.

:class:`AgentSession` is a façade: each part of pi's session-level behaviour (pi-host §4.4–§4.8) is a
collaborator in this package that owns its state, and the façade wires them to the agent and answers
for them. ``docs/architecture.md`` draws who owns what and how a prompt reaches the session file.

Public session events reach :meth:`AgentSession.subscribe` listeners as plain dicts with pi's keys,
in pi's order: the JSON and RPC modes write them as they are (after ``to_json_event``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any

from tau.agent.resources import Resources
from tau.agent.session.bus import SessionListener
from tau.agent.session.compaction import check_keep_recent_tokens
from tau.agent.session.user_input import NO_MODEL_MESSAGE, last_assistant_text
from tau.agent.session.wiring import assemble
from tau.agent.session_hooks import SessionHooks
from tau.agent.session_tools import PromptSettings
from tau.agent.settings import Settings
from tau.llm.registry import ModelRegistry
from tau.llm.stream import AbortSignal, StreamFunction
from tau.llm.types import Model
from tau.session.manager import SessionManager
from tau.tools.base import ToolDefinition

if TYPE_CHECKING:  # pragma: no cover
    from tau.agent.prompt_templates import PromptTemplate
    from tau.agent.skills import Skill

__all__ = ["NO_MODEL_MESSAGE", "AgentSession", "SessionListener"]


class AgentSession:
    """An agent whose transcript is a session file, with pi's session-level behaviour.

    Args:
        session_manager: where the conversation is stored (and read from, when resuming).
        settings: effective settings (``retry.*``, ``compaction.*``, queue modes, images, shell).
        model_registry, model: models and credentials (the default stream function), the selected
            model (``None``: prompts fail with a message saying how to pick one).
        tools: the built-in tool definitions (default: every built-in; read, bash, edit, write active).
        cwd: the working directory (default: the session's).
        hooks: the extension layer (default: none). :meth:`set_hooks` binds one later.
        thinking_level: explicit level; default: the session's, then settings, clamped to the model.
        active_tools: names active at start, in order (default: ``settings.defaultTools``; a ``"*"`` entry: every allowed tool, after the names before it).
        tool_modifiers, restore_tools: restore the loadout the session's system messages record, with
            these ``+name``/``-name`` entries applied.
        allowed_tools, excluded_tools: the ``--tools`` allowlist and the ``--exclude-tools`` matchers.
        prompt: the custom prompt, addendum, context files.
        stream_fn: the provider entry point (default: ``model_registry.stream``).
        resources: the skills and prompt templates (``/skill:name``, ``/template``; the prompt's listing).
    """

    def __init__(
        self,
        session_manager: SessionManager,
        settings: Settings | None = None,
        model_registry: ModelRegistry | None = None,
        model: Model | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        hooks: SessionHooks | None = None,
        *,
        thinking_level: str | None = None,
        active_tools: Sequence[str] | None = None,
        tool_modifiers: Sequence[str] = (),
        restore_tools: bool = True,
        allowed_tools: Callable[[str], bool] | None = None,
        excluded_tools: Callable[[str], bool] | None = None,
        prompt: PromptSettings | None = None,
        stream_fn: StreamFunction | None = None,
        resources: Resources | None = None,
    ) -> None:
        parts = assemble(
            session_manager, settings, model_registry, model, tools, cwd, hooks,
            thinking_level=thinking_level, allowed_tools=allowed_tools, excluded_tools=excluded_tools,
            prompt=prompt, stream_fn=stream_fn, resources=resources, active_tools=active_tools,
            restore_modifiers=tool_modifiers if restore_tools else None,
        )  # fmt: skip
        self._settings, self._registry, self._resources = parts.settings, parts.registry, parts.resources
        self.agent = parts.agent
        self._bus, self._store, self._run, self._queues = parts.bus, parts.store, parts.run, parts.queues
        self._loadout, self._retrier, self._compactor = parts.loadout, parts.retrier, parts.compactor
        self._controller, self._prompter, self._navigator = parts.controller, parts.prompter, parts.navigator
        self._models, self._nested, self._boundaries = parts.models, parts.nested, parts.boundaries
        # --models / enabledModels (ScopedModel): what cycle_model goes through
        self.scoped_models: list[Any] = []
        self.project_trusted = False  # whether the project's trust-gated files apply (the modes read themes)

    def set_hooks(self, hooks: SessionHooks) -> None:
        """Bind the extension layer (the runner calls this once it is built)."""
        self._bus.hooks = hooks

    @property
    def hooks(self) -> SessionHooks:
        return self._bus.hooks

    async def start(self, reason: str = "startup") -> None:
        """Announce the session to extensions (``session_start``); the modes call it once bound."""
        self._loadout.tools.settle_order()
        await self._bus.emit_hook({"type": "session_start", "reason": reason})

    async def shutdown(self, reason: str = "quit") -> None:
        """Abort any run and announce the end (``session_shutdown``)."""
        await self.abort()
        await self._bus.emit_hook({"type": "session_shutdown", "reason": reason})

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every session event; returns an unsubscriber."""
        return self._bus.subscribe(listener)

    def emit_event(self, event: dict[str, Any]) -> None:
        """Hand ``event`` to the session's listeners (the extension runner reports its errors so)."""
        self._bus.emit(event)

    @property
    def session_manager(self) -> SessionManager:
        return self._store.manager

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def model_registry(self) -> ModelRegistry:
        return self._registry

    @property
    def cwd(self) -> str:
        return self._store.cwd

    @property
    def resources(self) -> Resources:
        """The skills and prompt templates this session offers (and what loading them found wrong)."""
        return self._resources

    @property
    def model(self) -> Model | None:
        return self.agent.state.model

    @property
    def prompt_templates(self) -> list[PromptTemplate]:
        return list(self._resources.prompts)

    @property
    def skills(self) -> list[Skill]:
        return list(self._resources.skills)

    def set_skills(self, skills: Sequence[Skill]) -> None:
        """The skills the system prompt lists from the next run on (``resources_discover`` added some)."""
        self._loadout.prompt.skills = list(skills)

    @property
    def signal(self) -> AbortSignal | None:
        return self.agent.signal

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The projected transcript (what the next request is built from)."""
        return self.agent.state.messages

    @property
    def is_streaming(self) -> bool:
        return self._run.active

    def is_idle(self) -> bool:
        return self._run.is_idle()

    @property
    def is_compacting(self) -> bool:
        return self._run.is_compacting

    @property
    def session_id(self) -> str:
        return self._store.manager.get_session_id()

    @property
    def session_file(self) -> str | None:
        return self._store.manager.get_session_file()

    def get_session_name(self) -> str | None:
        return self._store.manager.get_session_name()

    def get_last_assistant_text(self) -> str | None:
        """The text of the last reply (pi: replies without text that did not end with ``stop`` are skipped)."""
        return last_assistant_text(self.messages)

    async def prompt(
        self,
        text: str,
        *,
        images: Sequence[dict[str, Any]] | None = None,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        expand_commands: bool = True,
        preflight_result: Callable[[str], None] | None = None,
    ) -> None:
        """Run a prompt, or queue it while streaming: :meth:`~tau.agent.session.prompting.Prompter.prompt`."""
        await self._prompter.prompt(
            text, images=images, streaming_behavior=streaming_behavior, source=source,
            expand_commands=expand_commands, preflight_result=preflight_result,
        )  # fmt: skip

    async def steer(
        self, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered after the current turn's tool calls; returns the disposition."""
        return await self._prompter.steer(text, images, source=source)

    async def follow_up(
        self, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered when the agent would otherwise stop."""
        return await self._prompter.follow_up(text, images, source=source)

    async def send_user_message(
        self, content: str | list[dict[str, Any]], *, deliver_as: str | None = None
    ) -> None:
        """A user message from an extension: always a turn (queued with ``deliver_as`` while streaming)."""
        await self._prompter.send_user_message(content, deliver_as=deliver_as)

    async def send_custom_message(
        self, message: dict[str, Any], *, trigger_turn: bool | None = None, deliver_as: str | None = None
    ) -> None:
        """An extension message that reaches the model as a user message (pi ``sendCustomMessage``)."""
        await self._prompter.send_custom_message(message, trigger_turn=trigger_turn, deliver_as=deliver_as)

    def record_bash_result(
        self, command: str, result: dict[str, Any], *, exclude_from_context: bool = False
    ) -> None:
        """Store a user's shell command (``!cmd``) as a ``bashExecution`` message (held while streaming)."""
        self._prompter.record_bash_result(command, result, exclude_from_context=exclude_from_context)

    @property
    def has_pending_bash_messages(self) -> bool:
        """Whether user bash results wait for the current run to end."""
        return bool(self._queues.bash)

    def clear_queue(self) -> dict[str, list[str]]:
        """Empty both queues; returns their texts."""
        return self._prompter.clear_queue()

    def has_pending_messages(self) -> bool:
        return self._queues.has_texts()

    @property
    def pending_message_count(self) -> int:
        return self._queues.text_count

    def get_steering_messages(self) -> list[str]:
        return list(self._queues.steering)

    def get_follow_up_messages(self) -> list[str]:
        return list(self._queues.follow_up)

    def announce_prompts(self, count: int) -> None:
        """The mode will send ``count`` more human prompts after the current one (``tau -p P1 P2 …``)."""
        self._run.announced_prompts = max(0, int(count))

    def has_waiting_input(self) -> bool:
        """Whether a queued steer or follow-up, a held prompt, or an announced prompt waits."""
        return self._queues.has_texts() or self._run.has_waiting_prompts()

    async def abort(self) -> None:
        """Abort the run (and any retry wait, compaction or branch summary); returns once idle."""
        await self._controller.abort()

    async def wait_for_idle(self) -> None:
        await self._run.wait_for_idle()

    def refresh_context(self) -> None:
        """Rebuild the transcript from the session (after an extension changed entries)."""
        self._store.refresh()

    # -- tools and prompt (:class:`~tau.agent.session.loadout.Loadout`) ----------------------

    def get_active_tool_names(self) -> list[str]:
        return list(self._loadout.tools.active)

    def get_all_tools(self) -> list[ToolDefinition]:
        """Every registered definition (built-ins and extension tools)."""
        return list(self._loadout.tools.registry.values())

    def get_callable_tools(self) -> list[ToolDefinition]:
        """What ``execute_tool`` may run: active ``direct`` tools, every ``codemode``/``deferred`` one."""
        return self._loadout.tools.callable_definitions()

    def get_offered_tool_names(self) -> set[str]:
        """The names of every built-in and extension tool, including those ``--tools`` leaves out."""
        return self._loadout.tools.offered_names()

    def get_tool_definition(self, name: str) -> ToolDefinition | None:
        return self._loadout.tools.registry.get(name)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate these tools (unknown names ignored); the change is declared before the next request."""
        self._loadout.set_active(names)

    def register_tool(self, definition: ToolDefinition) -> None:
        """Register an extension tool (replacing a built-in of that name); active tools activate at once."""
        self._loadout.register(definition)

    def unregister_tool(self, name: str) -> None:
        self._loadout.unregister(name)

    @property
    def hidden_declarations(self) -> set[str]:
        """Active tools whose declarations requests leave out (from ``prepare_loadout`` hooks)."""
        return set(self._loadout.tools.hidden)

    @property
    def context_file_paths(self) -> list[str]:
        """The context files (``AGENTS.md``, …) the system prompt holds, in order."""
        return [path for path, _ in self._loadout.prompt.context_files]

    def get_system_prompt(self) -> str:
        """The current system prompt text (changes not yet sent included)."""
        return self._loadout.system_prompt()

    async def execute_tool(self, caller_id: str, name: str, args: Any, **options: Any) -> dict[str, Any]:
        """Run a tool on behalf of the tool call ``caller_id`` (pi ``ctx.executeTool``; options
        ``signal``, ``on_update``): ``{"toolCall", "result", "isError", "durationMs"?}``, never raises."""
        return await self._nested.execute(caller_id, name, args, **options)

    # -- model, thinking level and settings (:class:`~tau.agent.session.selection.ModelControl`)

    async def set_model(
        self, model: Model, *, thinking_level: str | None = None, source: str = "set"
    ) -> None:
        """Switch model (recorded as a ``model_change``); the thinking level is re-clamped."""
        await self._models.set_model(model, thinking_level=thinking_level, source=source)

    async def cycle_model(self, direction: str = "forward") -> dict[str, Any] | None:
        """The next model of the scope (``--models``), else of those with credentials (pi's Ctrl+P)."""
        # (model_cycle loads with the first cycle: most runs make none)
        return await import_module("tau.agent.model_cycle").cycle_model(self, direction)

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    def get_thinking_level(self) -> str:
        return self.agent.state.thinking_level

    def get_available_thinking_levels(self) -> list[str]:
        return self._models.available_levels()

    def set_thinking_level(self, level: str) -> None:
        """Set the level (clamped to the model); a change is recorded and announced."""
        self._models.set_thinking_level(level)

    def set_steering_mode(self, mode: str) -> None:
        """``"all"`` or ``"one-at-a-time"``: how many steering messages a turn delivers (saved, as pi)."""
        self._models.set_queue_mode("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        """``"all"`` or ``"one-at-a-time"``: how many follow-up messages a turn delivers (saved, as pi)."""
        self._models.set_queue_mode("followUpMode", mode)

    def set_auto_compaction(self, enabled: bool) -> None:
        self._settings.save_global("compaction.enabled", bool(enabled))

    @property
    def auto_compaction_enabled(self) -> bool:
        return bool(self._settings.get("compaction.enabled", True))

    def set_auto_retry(self, enabled: bool) -> None:
        self._settings.save_global("retry.enabled", bool(enabled))

    @property
    def auto_retry_enabled(self) -> bool:
        return bool(self._settings.get("retry.enabled", True))

    def set_session_name(self, name: str) -> None:
        self._store.manager.append_session_info(name)
        self._bus.announce({"type": "session_info_changed", "name": self._store.manager.get_session_name()})

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._store.manager.append_label_change(entry_id, label)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Extension state (a ``custom`` entry, never sent to the model); announced with ``entry_appended``."""
        return self._store.append_custom_entry(custom_type, data)

    # -- retry and compaction (:class:`~tau.agent.session.retry.Retrier`, :class:`~tau.agent.session.compaction.Compactor`)

    @property
    def retry_attempt(self) -> int:
        return self._retrier.attempt

    @property
    def is_retrying(self) -> bool:
        return self._retrier.is_retrying

    def abort_retry(self) -> None:
        """Cancel a retry wait in progress (``auto_retry_end`` is emitted at once)."""
        self._retrier.abort()

    async def compact(
        self, custom_instructions: str | None = None, *, keep_recent_tokens: int | None = None
    ) -> dict[str, Any]:
        """Abort the run and compact now (``/compact``): :meth:`~tau.agent.session.compaction.Compactor.compact`."""
        check_keep_recent_tokens(keep_recent_tokens)
        await self.abort()
        return await self._compactor.compact(custom_instructions, keep_recent_tokens=keep_recent_tokens)

    def abort_compaction(self) -> None:
        """Abort a compaction or branch summary in progress."""
        self._run.abort_operations()

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}``; tokens ``None`` right after a compaction."""
        return self._compactor.context_usage()

    # -- the tree and other session files (:class:`~tau.agent.session.navigator.Navigator`) --

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        """Move the leaf to ``target_id`` (options ``summarize``, ``custom_instructions``,
        ``replace_instructions``, ``label``); returns ``{cancelled, editorText?, summaryEntry?, aborted?}``."""
        return await self._navigator.navigate_tree(target_id, **options)

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
        """Continue in a new session file holding the path up to ``entry_id`` (pi ``/fork``, ``/clone``)."""
        return await self._navigator.fork(entry_id, position)

    async def new_session(self, *, parent_session: str | None = None) -> dict[str, Any]:
        """Start an empty session (pi ``/new``); returns ``{cancelled}``."""
        return await self._navigator.new_session(parent_session=parent_session)

    async def switch_session(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Continue in the session file ``path`` (``/resume``); returns ``{"cancelled": bool}``."""
        return await self._navigator.switch_session(path)
