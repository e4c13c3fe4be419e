"""The run-time session (pi 1.6 ``AgentSession``): an :class:`~tau.agent.agent.Agent` bound to a session file.

What it adds to the agent (pi-host §4.4–§4.8):

- persistence: every ``message_end`` (system, user, assistant, toolResult, custom) is appended to the
  session manager at once, and the agent's transcript is always the session's projection;
- the system prompt and tool loadout in the transcript (a system message with ``sections`` and
  ``toolsAdded`` before the first prompt, later patches only on change, restored on resume);
- the extension events through :class:`~tau.agent.session_hooks.SessionHooks` at pi's points;
- queues (steer, follow-up, custom messages), abort, retry (:mod:`.session_retry`), threshold and
  overflow compaction (:mod:`.session_compaction`), the ``turn_end`` / ``agent_before_settle``
  boundaries (:mod:`.session_boundaries`), tree navigation, fork and new sessions
  (:mod:`.session_tree`), resuming another file (:mod:`.session_switch`), user bash results,
  and ``agent_settled``; a session file that cannot be written stops the run (:mod:`.session_saving`).

Public session events reach :meth:`AgentSession.subscribe` listeners as plain dicts with pi's keys,
in pi's order: the JSON and RPC modes write them as they are (after ``to_json_event``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tau.agent.agent import Agent
from tau.agent.resources import Resources
from tau.agent.session.boundaries import Boundaries
from tau.agent.session.bus import EventBus, SessionListener
from tau.agent.session.compaction import Compactor, check_keep_recent_tokens
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.navigator import Navigator
from tau.agent.session.retry import Retrier
from tau.agent.session.run_state import RunState
from tau.agent.session.selection import initial_thinking_level, record_initial_selection
from tau.agent.session.store import SessionStore
from tau.agent.session_events import EventsMixin
from tau.agent.session_hooks import SessionHooks
from tau.agent.session_nested import NestedCallRunner
from tau.agent.session_prompting import NO_MODEL_MESSAGE, PromptMixin
from tau.agent.session_tools import PromptSettings, ToolSet, rendered_prompt, system_patch, unique_guidelines
from tau.agent.settings import Settings
from tau.common.jsstr import js_trim
from tau.llm.registry import ModelRegistry, clamp_thinking_level, supported_thinking_levels
from tau.llm.stream import DEFAULT_IDLE_TIMEOUT_MS, AbortSignal, StreamFunction, StreamOptions
from tau.llm.types import Model
from tau.session.manager import SessionManager
from tau.tools.base import ToolDefinition

if TYPE_CHECKING:  # pragma: no cover
    from tau.agent.prompt_templates import PromptTemplate
    from tau.agent.skills import Skill

__all__ = ["NO_MODEL_MESSAGE", "AgentSession", "SessionListener"]


def _queue_mode(mode: str) -> Any:
    if mode not in ("all", "one-at-a-time"):
        raise ValueError(f'Queue mode must be "all" or "one-at-a-time", got {mode!r}')
    return mode


class AgentSession(
    PromptMixin, EventsMixin
):
    """An agent whose transcript is a session file, with pi's session-level behaviour.

    Args:
        session_manager: where the conversation is stored (and read from, when resuming).
        settings: effective settings (``retry.*``, ``compaction.*``, queue modes, images, shell).
        model_registry: models and credentials; also the default stream function.
        model: the selected model (``None``: prompts fail with a message saying how to pick one).
        tools: the built-in tool definitions (default: every built-in; read, bash, edit, write active).
        cwd: the working directory (default: the session's).
        hooks: the extension layer (default: none). :meth:`set_hooks` binds one later.
        thinking_level: explicit level; default: the session's, then settings, clamped to the model.
        active_tools: names active at start, in order (default: ``settings.defaultTools``; a ``"*"`` entry: every allowed tool, after the names before it).
        tool_modifiers: ``+name``/``-name`` entries applied to a restored loadout.
        restore_tools: restore the loadout recorded in the session's system messages.
        allowed_tools: the ``--tools`` allowlist matcher.
        excluded_tools: the ``--exclude-tools`` matcher: those tools are never usable.
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
        self._bus = EventBus(hooks)
        self._store = SessionStore(session_manager, str(cwd) if cwd is not None else None, self._bus.emit)
        self._settings = settings or Settings.in_memory()
        self._registry = model_registry or ModelRegistry()
        self._prompt = prompt or PromptSettings()
        self._resources = resources or Resources(skills=list(self._prompt.skills))
        if resources is not None and not self._prompt.skills:
            self._prompt.skills = list(resources.skills)
        self._stream_fn: StreamFunction = stream_fn or self._registry.stream
        if tools is None:
            from tau.tools.registry import all_builtin_tools

            tools = all_builtin_tools()
        self._tools = ToolSet(tools, allowed_tools, excluded_tools)
        self._nested = NestedCallRunner(self)
        # --models / enabledModels (tau.llm.model_scope.ScopedModel): what cycle_model goes through
        self.scoped_models: list[Any] = []
        # whether the project's trust-gated files apply (the modes read their own such files: themes)
        self.project_trusted = False
        self._init_run_state()
        self.agent = self._create_agent(model, thinking_level)
        self._run = RunState(self.agent.abort)
        self._store.attach(self.agent.state, self._run.stop)
        self._retrier = Retrier(self._settings, self._run, self._bus.emit)
        self._compactor = Compactor(
            self._store, self.agent, self._settings, self._bus, self._run, self._stream_fn, self._convert_to_llm
        )
        self.agent.stream_fn = self._compactor.recording_stream
        self._boundaries = Boundaries(
            self._store, self.agent, self._bus, self._run, self._queues, self._flush_pending_custom
        )
        self.agent.finish_turn = self._boundaries.finish_turn
        self._navigator = Navigator(
            self._store,
            self.agent,
            self._bus,
            self._run,
            self._queues,
            self._compactor,
            self._registry,
            self._settings,
            self.abort,
            self._reload_tools,
        )
        record_initial_selection(
            self._store.manager, self.agent.state, bool(self._store.projection.get()["messages"])
        )
        initial = list(active_tools) if active_tools is not None else self._settings.default_tools()
        if "*" in initial:  # an allowlist: the tools it names in its order, then every allowed one (pi)
            listed = [name for name in initial if name != "*"]
            registry = self._tools.registry
            self._tools.request([*(name for name in listed if name in registry), *registry], order=listed)
        else:
            self._tools.request(initial)
        if restore_tools:
            self._restore_tools_from_transcript(tool_modifiers)
        self._apply_loadout()

    # -- construction ------------------------------------------------------------------------

    def _init_run_state(self) -> None:
        self._queues = InputQueues(self._bus.emit)
        self._forced_prompt: str | None = None
        self._run_prompt_options: Any = None

    def _create_agent(self, model: Model | None, thinking_level: str | None) -> Agent:
        # The projection every request starts from, built once here (and kept by the cache) rather
        # than a context now and the projection again at the first request.
        projection = self._store.projection.get()
        context = {**projection, "messages": list(projection["messages"])}
        level = initial_thinking_level(self._store.manager, self._settings, model, thinking_level, context)
        agent = Agent(
            model=model,  # type: ignore[arg-type]
            stream_fn=self._stream_fn,
            messages=context["messages"],
            thinking_level=level,
            convert_to_llm=self._convert_to_llm,
            transform_context=self._transform_context,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            finish_turn=None,
            prepare_request=self._prepare_request,
            prepare_next_turn=self._prepare_next_turn,
            tool_context=self._tool_context,
            steering_mode=self._settings.get("steeringMode", "one-at-a-time"),
            follow_up_mode=self._settings.get("followUpMode", "one-at-a-time"),
            stream_options=self._stream_options(),
        )
        agent.subscribe(self._on_agent_event)
        return agent

    def _stream_options(self) -> StreamOptions:
        provider = self._settings.get("retry.provider") or {}
        idle = self._settings.get("httpIdleTimeoutMs", DEFAULT_IDLE_TIMEOUT_MS)
        return StreamOptions(
            session_id=self._store.manager.get_session_id(),
            on_payload=self._on_payload,
            on_response=self._on_response,
            idle_timeout_ms=idle if isinstance(idle, int) else 0,  # "disabled": no limit
            max_retries=int(provider.get("maxRetries", 0) or 0),
            max_retry_delay_ms=int(provider.get("maxRetryDelayMs", 60_000) or 60_000),
        )

    def set_hooks(self, hooks: SessionHooks) -> None:
        """Bind the extension layer (the runner calls this once it is built)."""
        self._bus.hooks = hooks

    @property
    def hooks(self) -> SessionHooks:
        return self._bus.hooks

    async def start(self, reason: str = "startup") -> None:
        """Announce the session to extensions (``session_start``); the modes call it once bound."""
        self._tools.settle_order()
        await self._bus.emit_hook({"type": "session_start", "reason": reason})

    async def shutdown(self, reason: str = "quit") -> None:
        """Abort any run and announce the end (``session_shutdown``)."""
        await self.abort()
        await self._bus.emit_hook({"type": "session_shutdown", "reason": reason})

    # -- read-only state ---------------------------------------------------------------------

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
    def model(self) -> Model | None:
        return self.agent.state.model

    @property
    def cwd(self) -> str:
        return self._store.cwd

    @property
    def resources(self) -> Resources:
        """The skills and prompt templates this session offers (and what loading them found wrong)."""
        return self._resources

    def set_skills(self, skills: Sequence[Skill]) -> None:
        """The skills the system prompt lists from the next run on (``resources_discover`` added some)."""
        self._prompt.skills = list(skills)

    @property
    def prompt_templates(self) -> list[PromptTemplate]:
        return list(self._resources.prompts)

    @property
    def skills(self) -> list[Skill]:
        return list(self._resources.skills)

    @property
    def signal(self) -> AbortSignal | None:
        return self.agent.signal

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The projected transcript (what the next request is built from)."""
        return self.agent.state.messages

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    @property
    def is_streaming(self) -> bool:
        return self._run.active

    def is_idle(self) -> bool:
        return self._run.is_idle()

    @property
    def is_compacting(self) -> bool:
        return self._run.is_compacting

    def abort_compaction(self) -> None:
        """Abort a compaction or branch summary in progress."""
        self._run.abort_operations()

    @property
    def session_id(self) -> str:
        return self._store.manager.get_session_id()

    @property
    def session_file(self) -> str | None:
        return self._store.manager.get_session_file()

    def has_pending_messages(self) -> bool:
        return self._queues.has_texts()

    def announce_prompts(self, count: int) -> None:
        """The mode will send ``count`` more human prompts after the current one (``tau -p P1 P2 …``)."""
        self._run.announced_prompts = max(0, int(count))

    def has_waiting_input(self) -> bool:
        """Whether a human message waits to be sent: a queued steer or follow-up, a prompt held until
        the ``agent_settled`` handlers return, or a further prompt the mode announced."""
        return self._queues.has_texts() or self._run.has_waiting_prompts()

    @property
    def pending_message_count(self) -> int:
        return self._queues.text_count

    def get_steering_messages(self) -> list[str]:
        return list(self._queues.steering)

    def get_follow_up_messages(self) -> list[str]:
        return list(self._queues.follow_up)

    def get_session_name(self) -> str | None:
        return self._store.manager.get_session_name()

    def get_last_assistant_text(self) -> str | None:
        """The text of the last reply (pi: replies without text that did not end with ``stop`` are skipped)."""
        for message in reversed(self.messages):
            if message.get("role") != "assistant":
                continue
            texts = [b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"]
            if message.get("stopReason") != "stop" and not any(js_trim(text) for text in texts):
                continue
            return js_trim("".join(texts)) or None
        return None

    # -- events ------------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every session event; returns an unsubscriber."""
        return self._bus.subscribe(listener)

    def emit_event(self, event: dict[str, Any]) -> None:
        """Hand ``event`` to the session's listeners (the extension runner reports its errors so)."""
        self._bus.emit(event)

    # -- tools and prompt --------------------------------------------------------------------

    def get_active_tool_names(self) -> list[str]:
        return list(self._tools.active)

    def get_all_tools(self) -> list[ToolDefinition]:
        """Every registered definition (built-ins and extension tools)."""
        return list(self._tools.registry.values())

    def get_callable_tools(self) -> list[ToolDefinition]:
        """What ``execute_tool`` may run (pi): the active ``direct`` tools and every ``codemode`` or
        ``deferred`` tool; ``model-only`` and ``hidden`` tools never."""
        return self._tools.callable_definitions()

    def get_offered_tool_names(self) -> set[str]:
        """The names of every built-in and extension tool, including those ``--tools`` leaves out."""
        return self._tools.offered_names()

    def get_tool_definition(self, name: str) -> ToolDefinition | None:
        return self._tools.registry.get(name)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate these tools (unknown names ignored); the change is declared before the next request."""
        self._tools.set_active(names)
        self._apply_loadout()

    def register_tool(self, definition: ToolDefinition) -> None:
        """Register an extension tool (replacing a built-in of that name); active tools activate at once."""
        if self._tools.register(definition):
            self._tools.activate_registered(definition.name)
        self._apply_loadout()

    def unregister_tool(self, name: str) -> None:
        self._tools.unregister(name)
        self._apply_loadout()

    def _apply_loadout(self) -> None:
        def guidelines(name: str) -> list[str]:
            tool = self._tools.registry.get(name)
            return unique_guidelines(tool.prompt_guidelines) if tool is not None else []

        def report(name: str, exc: BaseException) -> None:
            owner = getattr(self._bus.hooks, "tool_owner", None)
            extension = getattr(owner(name), "path", None) if owner is not None else None
            self._bus.hooks.emit_error(
                extension or f"builtin:{name}", "prepare_loadout", str(exc) or type(exc).__name__
            )

        self.agent.state.tools = self._tools.declared_definitions(guidelines, report)

    @property
    def hidden_declarations(self) -> set[str]:
        """Active tools whose declarations requests leave out (from ``prepare_loadout`` hooks)."""
        return set(self._tools.hidden)

    def _restore_tools_from_transcript(self, modifiers: Sequence[str] = ()) -> None:
        systems = [
            entry["message"]
            for entry in self._store.manager.get_branch()
            if entry.get("type") == "message" and (entry.get("message") or {}).get("role") == "system"
        ]
        self._tools.restore_from_transcript(systems, modifiers)

    def _prompt_options(self) -> Any:
        base = self._tools.prompt_options(self._store.cwd, self._prompt)
        run = self._run_prompt_options
        if run is None:
            return base
        # A run's options (edited by before_agent_start handlers) follow the live tool loadout.
        return replace(
            run,
            selected_tools=list(self._tools.active),
            hidden_tools=sorted(self._tools.hidden),
            tool_snippets={**base.tool_snippets, **run.tool_snippets},
            tool_guidelines={**base.tool_guidelines, **run.tool_guidelines},
        )

    @property
    def context_file_paths(self) -> list[str]:
        """The context files (``AGENTS.md``, …) the system prompt holds, in order."""
        return [path for path, _ in self._prompt.context_files]

    def get_system_prompt(self) -> str:
        """The current system prompt text (changes not yet sent included)."""
        return rendered_prompt(self._prompt_options(), self._forced_prompt)

    def _system_patch(self, messages: Sequence[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        self._apply_loadout()
        return system_patch(self.messages if messages is None else messages, self._prompt_options())

    # -- model and thinking level ------------------------------------------------------------

    async def set_model(
        self, model: Model, *, thinking_level: str | None = None, source: str = "set"
    ) -> None:
        """Switch model (recorded as a ``model_change``); the thinking level is re-clamped.

        The level is ``thinking_level`` (a scoped model's own), else the model's from
        ``modelThinkingLevels``, else a ``defaultThinkingLevel`` that a settings file sets, else the
        current one (pi 1.6: an unset default keeps the level).
        """
        if not self._registry.has_configured_auth(model):
            raise ValueError(f"No API key for {model.provider}/{model.id}")
        previous = self.agent.state.model
        self.agent.state.model = model
        self._store.manager.append_model_change(model.provider, model.id)
        per_model = (self._settings.get("modelThinkingLevels") or {}).get(f"{model.provider}/{model.id}")
        self.set_thinking_level(
            thinking_level
            or per_model
            or self._settings.get_set("defaultThinkingLevel")
            or self.thinking_level
        )
        if previous is None or (previous.provider, previous.id) != (model.provider, model.id):
            await self._bus.emit_hook(
                {"type": "model_select", "model": model, "previousModel": previous, "source": source}
            )

    async def cycle_model(self, direction: str = "forward") -> dict[str, Any] | None:
        """The next model of the scope (``--models``), else of the models with credentials (pi's Ctrl+P):
        ``{"model", "thinkingLevel", "isScoped"}``, or ``None`` when there is nowhere to go."""
        from tau.agent.model_cycle import cycle_model

        return await cycle_model(self, direction)

    def get_thinking_level(self) -> str:
        return self.agent.state.thinking_level

    def get_available_thinking_levels(self) -> list[str]:
        model = self.agent.state.model
        return supported_thinking_levels(model) if model else ["off"]

    def set_thinking_level(self, level: str) -> None:
        """Set the level (clamped to the model); a change is recorded and announced."""
        model = self.agent.state.model
        effective = clamp_thinking_level(model, level) if model else "off"
        previous = self.agent.state.thinking_level
        self.agent.state.thinking_level = effective
        if effective != previous:
            self._store.manager.append_thinking_level_change(effective)
            self._bus.emit({"type": "thinking_level_changed", "level": effective})
            self._bus.schedule_hook(
                {"type": "thinking_level_select", "level": effective, "previousLevel": previous}
            )

    # -- queue modes, auto compaction, auto retry (saved to the user settings, as pi) -------------

    def set_steering_mode(self, mode: str) -> None:
        """``"all"`` or ``"one-at-a-time"``: how many steering messages a turn delivers."""
        self.agent.steering_mode = _queue_mode(mode)
        self._settings.save_global("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        """``"all"`` or ``"one-at-a-time"``: how many follow-up messages a turn delivers."""
        self.agent.follow_up_mode = _queue_mode(mode)
        self._settings.save_global("followUpMode", mode)

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

    # -- session info ------------------------------------------------------------------------

    def set_session_name(self, name: str) -> None:
        self._store.manager.append_session_info(name)
        event = {"type": "session_info_changed", "name": self._store.manager.get_session_name()}
        self._bus.emit(event)
        self._bus.schedule_hook(event)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._store.manager.append_label_change(entry_id, label)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Extension state (a ``custom`` entry, never sent to the model); announced with ``entry_appended``."""
        entry_id = self._store.manager.append_custom_entry(custom_type, data)
        entry = self._store.manager.get_entry(entry_id)
        if entry is not None:
            self._bus.emit({"type": "entry_appended", "entry": entry})
        return entry_id

    # -- nested tool calls (ctx.execute_tool) -------------------------------------------------

    async def execute_tool(
        self,
        caller_id: str,
        name: str,
        args: Any,
        *,
        signal: AbortSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """Run a tool on behalf of the tool call ``caller_id`` (pi ``ctx.executeTool``).

        The call id is ``<caller_id>/<n>``; it goes through validation and the ``tool_call`` /
        ``tool_result`` hooks and emits ``tool_execution_*`` with ``parentToolCallId``; it is not a
        transcript entry. Returns ``{"toolCall", "result", "isError", "durationMs"?}``; never raises.
        """
        return await self._nested.execute(caller_id, name, args, signal=signal, on_update=on_update)

    # -- the tree and other session files ----------------------------------------------------

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Move the leaf to ``target_id``; returns ``{cancelled, editorText?, summaryEntry?, aborted?}``.

        A user or custom message target moves the leaf to its parent and gives its text back
        (``editorText``); any other target becomes the leaf. With ``summarize`` the branch left
        behind is summarized into a ``branch_summary`` entry at the new position.
        """
        return await self._navigator.navigate_tree(
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
        """Continue in a new session file holding the path up to ``entry_id`` (pi ``/fork``, ``/clone``).

        ``position="before"`` needs a user message: the new leaf is its parent and its text is
        returned (``selectedText``); ``"at"`` keeps the entry. Returns ``{cancelled, selectedText?}``.
        """
        return await self._navigator.fork(entry_id, position)

    async def new_session(self, *, parent_session: str | None = None) -> dict[str, Any]:
        """Start an empty session (pi ``/new``); returns ``{cancelled}``."""
        return await self._navigator.new_session(parent_session=parent_session)

    async def switch_session(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Continue in the session file ``path`` (``/resume``); returns ``{"cancelled": bool}``.

        ``session_before_switch`` handlers may cancel; then any run is aborted, extensions get
        ``session_shutdown`` and ``session_start {reason: "resume"}``. Raises ``RuntimeError`` when
        the file is not a session, is locked by another process, or names a working directory that
        no longer exists (nothing is changed then).
        """
        return await self._navigator.switch_session(path)

    def _reload_tools(self) -> None:
        self._restore_tools_from_transcript()
        self._apply_loadout()

    # -- usage -------------------------------------------------------------------------------

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}``; tokens ``None`` right after a compaction."""
        return self._compactor.context_usage()

    # -- retry and compaction ----------------------------------------------------------------

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
        """Compact now (``/compact``): aborts the run first; returns the compaction result.

        ``keep_recent_tokens`` replaces ``compaction.keepRecentTokens`` for this compaction only (an
        extension that knows where a step of the work ended, like Online Context Compact).
        Raises ``RuntimeError`` when there is nothing to compact or the summary failed, ``ValueError``
        when ``keep_recent_tokens`` is not a non-negative integer.
        """
        check_keep_recent_tokens(keep_recent_tokens)
        await self.abort()
        return await self._compactor.compact(custom_instructions, keep_recent_tokens=keep_recent_tokens)
