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
  (:mod:`.session_tree`), and ``agent_settled``.

Public session events reach :meth:`AgentSession.subscribe` listeners as plain dicts with pi's keys,
in pi's order: the JSON and RPC modes write them as they are (after ``to_json_event``).
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any

from tau.agent.agent import Agent
from tau.agent.hooks import (
    AfterToolCallContext,
    AgentContext,
    BeforeToolCallContext,
    RequestContext,
    TurnContext,
    TurnUpdate,
)
from tau.agent.session_boundaries import BoundaryMixin
from tau.agent.session_compaction import CompactionMixin
from tau.agent.session_hooks import NoHooks, SessionHooks
from tau.agent.session_retry import RetryMixin
from tau.agent.session_tools import PromptSettings, ToolSet, rendered_prompt, system_patch
from tau.agent.session_tree import TreeMixin
from tau.agent.settings import Settings
from tau.common.jsstr import ms_now
from tau.llm.registry import ModelRegistry, clamp_thinking_level, supported_thinking_levels
from tau.llm.stream import AbortSignal, StreamFunction, StreamOptions
from tau.llm.transcript import content_text
from tau.llm.types import Model
from tau.session.manager import SessionManager
from tau.session.messages import convert_to_llm
from tau.tools.base import ToolContext, ToolDefinition

__all__ = ["AgentSession", "SessionListener"]

SessionListener = Callable[[dict[str, Any]], Any]

_PERSISTED_ROLES = frozenset({"system", "user", "assistant", "toolResult"})
NO_MODEL_MESSAGE = (
    "No model selected. Use --model provider/id (or set defaultProvider/defaultModel in settings.json); "
    "`--model faux/faux-1 --faux-script FILE` runs offline."
)


class AgentSession(RetryMixin, CompactionMixin, BoundaryMixin, TreeMixin):
    """An agent whose transcript is a session file, with pi's session-level behaviour.

    Args:
        session_manager: where the conversation is stored (and read from, when resuming).
        settings: effective settings (``retry.*``, ``compaction.*``, queue modes, images, shell).
        model_registry: models and credentials; also the default stream function.
        model: the selected model (``None``: prompts fail with a message saying how to pick one).
        tools: the built-in tool definitions (default: tau's four built-ins).
        cwd: the working directory (default: the session's).
        hooks: the extension layer (default: none). :meth:`set_hooks` binds one later.
        thinking_level: explicit level; default: the session's, then settings, clamped to the model.
        active_tools: names active at start (default: ``settings.defaultTools``; ``["*"]``: all allowed).
        tool_modifiers: ``+name``/``-name`` entries applied to a restored loadout.
        restore_tools: restore the loadout recorded in the session's system messages.
        allowed_tools: the ``--tools`` allowlist matcher.
        prompt: the custom prompt, addendum, context files.
        stream_fn: the provider entry point (default: ``model_registry.stream``).
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
        prompt: PromptSettings | None = None,
        stream_fn: StreamFunction | None = None,
    ) -> None:
        self._session_manager = session_manager
        self._settings = settings or Settings.in_memory()
        self._registry = model_registry or ModelRegistry()
        self._cwd = str(cwd) if cwd is not None else session_manager.get_cwd()
        self._hooks: SessionHooks = hooks or NoHooks()
        self._prompt = prompt or PromptSettings()
        self._stream_fn: StreamFunction = stream_fn or self._registry.stream
        if tools is None:
            from tau.tools.registry import builtin_tools

            tools = builtin_tools()
        self._tools = ToolSet(tools, allowed_tools)
        self._listeners: list[SessionListener] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        self._init_run_state()
        self._init_retry()
        self._init_compaction()
        self._init_boundaries()
        self.agent = self._create_agent(model, thinking_level)
        self._record_initial_selection()
        initial = list(active_tools) if active_tools is not None else self._settings.default_tools()
        self._tools.set_active(list(self._tools.registry) if initial == ["*"] else initial)
        if restore_tools:
            self._restore_tools_from_transcript(tool_modifiers)
        self._apply_loadout()

    # -- construction ------------------------------------------------------------------------

    def _init_run_state(self) -> None:
        self._run_active = False
        self._abort_requested = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._steering_texts: list[str] = []
        self._follow_up_texts: list[str] = []
        self._pending_next_turn: list[dict[str, Any]] = []
        self._pending_custom: list[dict[str, Any]] = []
        self._entry_ids: dict[int, str] = {}
        self._entry_refs: list[Any] = []
        self._turn_index = 0
        self._last_assistant: dict[str, Any] | None = None
        self._last_outcome = "completed"
        self._emitting_settled = False
        self._deferred_settled: list[Callable[[], Any]] = []
        self._forced_prompt: str | None = None
        self._prompt_preflight = 0

    def _create_agent(self, model: Model | None, thinking_level: str | None) -> Agent:
        context = self._session_manager.build_session_context()
        self._has_existing = bool(context["messages"])
        level = self._initial_thinking_level(model, thinking_level, context)
        agent = Agent(
            model=model,  # type: ignore[arg-type]
            stream_fn=self._stream_fn,
            messages=context["messages"],
            thinking_level=level,
            convert_to_llm=self._convert_to_llm,
            transform_context=self._transform_context,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            finish_turn=self._finish_turn,
            prepare_request=self._prepare_request,
            prepare_next_turn=self._prepare_next_turn,
            tool_context=self._tool_context,
            steering_mode=self._settings.get("steeringMode", "one-at-a-time"),
            follow_up_mode=self._settings.get("followUpMode", "one-at-a-time"),
            stream_options=self._stream_options(),
        )
        agent.subscribe(self._on_agent_event)
        return agent

    def _initial_thinking_level(
        self, model: Model | None, explicit: str | None, context: dict[str, Any]
    ) -> str:
        level = explicit
        branch = self._session_manager.get_branch()
        recorded = any(entry.get("type") == "thinking_level_change" for entry in branch)
        if level is None and context["messages"] and recorded:
            level = context["thinkingLevel"]
        if level is None and model is not None:
            per_model = (self._settings.get("modelThinkingLevels") or {}).get(f"{model.provider}/{model.id}")
            level = per_model if isinstance(per_model, str) else None
        if level is None:
            level = self._settings.get("defaultThinkingLevel", "medium")
        return "off" if model is None else clamp_thinking_level(model, str(level))

    def _record_initial_selection(self) -> None:
        manager = self._session_manager
        if self._has_existing:
            if not any(entry.get("type") == "thinking_level_change" for entry in manager.get_branch()):
                manager.append_thinking_level_change(self.agent.state.thinking_level)
            return
        if self.agent.state.model is not None:
            manager.append_model_change(self.agent.state.model.provider, self.agent.state.model.id)
        manager.append_thinking_level_change(self.agent.state.thinking_level)

    def _stream_options(self) -> StreamOptions:
        provider = self._settings.get("retry.provider") or {}
        return StreamOptions(
            session_id=self._session_manager.get_session_id(),
            on_payload=self._on_payload,
            on_response=self._on_response,
            max_retries=int(provider.get("maxRetries", 0) or 0),
            max_retry_delay_ms=int(provider.get("maxRetryDelayMs", 60_000) or 60_000),
        )

    def set_hooks(self, hooks: SessionHooks) -> None:
        """Bind the extension layer (the runner calls this once it is built)."""
        self._hooks = hooks

    @property
    def hooks(self) -> SessionHooks:
        return self._hooks

    async def start(self, reason: str = "startup") -> None:
        """Announce the session to extensions (``session_start``); the modes call it once bound."""
        await self._emit_hook({"type": "session_start", "reason": reason})

    async def shutdown(self, reason: str = "quit") -> None:
        """Abort any run and announce the end (``session_shutdown``)."""
        await self.abort()
        await self._emit_hook({"type": "session_shutdown", "reason": reason})

    # -- read-only state ---------------------------------------------------------------------

    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

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
        return self._cwd

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
        return self._run_active

    def is_idle(self) -> bool:
        return not self._run_active and not self.is_compacting

    @property
    def session_id(self) -> str:
        return self._session_manager.get_session_id()

    @property
    def session_file(self) -> str | None:
        return self._session_manager.get_session_file()

    def has_pending_messages(self) -> bool:
        return bool(self._steering_texts or self._follow_up_texts)

    @property
    def pending_message_count(self) -> int:
        return len(self._steering_texts) + len(self._follow_up_texts)

    def get_steering_messages(self) -> list[str]:
        return list(self._steering_texts)

    def get_follow_up_messages(self) -> list[str]:
        return list(self._follow_up_texts)

    def get_session_name(self) -> str | None:
        return self._session_manager.get_session_name()

    def get_last_assistant_text(self) -> str | None:
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                if message.get("stopReason") == "aborted" and not message.get("content"):
                    continue
                return content_text(message.get("content") or [], "").strip() or None
        return None

    # -- events ------------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every session event; returns an unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)  # the loop holds tasks weakly
                task.add_done_callback(self._tasks.discard)

    async def _emit_hook(self, event: dict[str, Any]) -> dict[str, Any] | None:
        if not self._hooks.has_handlers(event["type"]):
            return None
        return await self._hooks.emit(event)

    def _emit_queue_update(self) -> None:
        self._emit(
            {
                "type": "queue_update",
                "steering": list(self._steering_texts),
                "followUp": list(self._follow_up_texts),
            }
        )

    # -- tools and prompt --------------------------------------------------------------------

    def get_active_tool_names(self) -> list[str]:
        return list(self._tools.active)

    def get_all_tools(self) -> list[ToolDefinition]:
        """Every registered definition (built-ins and extension tools)."""
        return list(self._tools.registry.values())

    def get_tool_definition(self, name: str) -> ToolDefinition | None:
        return self._tools.registry.get(name)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate these tools (unknown names ignored); the change is declared before the next request."""
        self._tools.set_active(names)
        self._apply_loadout()

    def register_tool(self, definition: ToolDefinition) -> None:
        """Register an extension tool (replacing a built-in of that name); active tools activate at once."""
        if self._tools.register(definition):
            self._tools.set_active([*self._tools.active, definition.name])
        self._apply_loadout()

    def unregister_tool(self, name: str) -> None:
        self._tools.unregister(name)
        self._apply_loadout()

    def _apply_loadout(self) -> None:
        self.agent.state.tools = self._tools.active_definitions()

    def _restore_tools_from_transcript(self, modifiers: Sequence[str] = ()) -> None:
        systems = [
            entry["message"]
            for entry in self._session_manager.get_branch()
            if entry.get("type") == "message" and (entry.get("message") or {}).get("role") == "system"
        ]
        self._tools.restore_from_transcript(systems, modifiers)

    def _prompt_options(self) -> Any:
        return self._tools.prompt_options(self._cwd, self._prompt)

    def get_system_prompt(self) -> str:
        """The current system prompt text (changes not yet sent included)."""
        return rendered_prompt(self._prompt_options(), self._forced_prompt)

    def _system_patch(self, messages: Sequence[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        self._apply_loadout()
        return system_patch(self.messages if messages is None else messages, self._prompt_options())

    # -- model and thinking level ------------------------------------------------------------

    async def set_model(self, model: Model) -> None:
        """Switch model (recorded as a ``model_change``); the thinking level is re-clamped."""
        if not self._registry.has_configured_auth(model):
            raise ValueError(f"No API key for {model.provider}/{model.id}")
        previous = self.agent.state.model
        self.agent.state.model = model
        self._session_manager.append_model_change(model.provider, model.id)
        per_model = (self._settings.get("modelThinkingLevels") or {}).get(f"{model.provider}/{model.id}")
        self.set_thinking_level(
            per_model or self._settings.get("defaultThinkingLevel") or self.thinking_level
        )
        if previous is None or (previous.provider, previous.id) != (model.provider, model.id):
            await self._emit_hook(
                {"type": "model_select", "model": model, "previousModel": previous, "source": "set"}
            )

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
            self._session_manager.append_thinking_level_change(effective)
            self._emit({"type": "thinking_level_changed", "level": effective})
            self._schedule_hook(
                {"type": "thinking_level_select", "level": effective, "previousLevel": previous}
            )

    def _schedule_hook(self, event: dict[str, Any]) -> None:
        if not self._hooks.has_handlers(event["type"]):
            return
        try:
            task = asyncio.get_running_loop().create_task(self._hooks.emit(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        except RuntimeError:  # no loop: called from synchronous setup code
            asyncio.run(self._hooks.emit(event))

    # -- session info ------------------------------------------------------------------------

    def set_session_name(self, name: str) -> None:
        self._session_manager.append_session_info(name)
        event = {"type": "session_info_changed", "name": self._session_manager.get_session_name()}
        self._emit(event)
        self._schedule_hook(event)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._session_manager.append_label_change(entry_id, label)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Extension state (a ``custom`` entry, never sent to the model)."""
        return self._session_manager.append_custom_entry(custom_type, data)

    # -- prompting ---------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        *,
        images: Sequence[dict[str, Any]] | None = None,
        streaming_behavior: str | None = None,
        source: str = "user",
        expand_commands: bool = True,
    ) -> None:
        """Send a prompt: run it, or queue it while streaming (``streaming_behavior`` steer/followUp)."""
        if self._emitting_settled:
            self._deferred_settled.append(
                lambda: self.prompt(text, images=images, streaming_behavior=streaming_behavior, source=source)
            )
            return
        if expand_commands and text.startswith("/") and await self._try_command(text):
            return
        if self._manual_compaction is not None or self._branch_summary_signal is not None:
            raise RuntimeError(
                "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
            )
        self._prompt_preflight += 1
        try:
            trigger = await self._prepare_prompt(text, images, streaming_behavior, source)
        finally:
            self._prompt_preflight -= 1
        if trigger is not None:
            await self._start_run(trigger)

    async def _try_command(self, text: str) -> bool:
        run_command = getattr(self._hooks, "execute_command", None)
        if run_command is None:
            return False
        return bool(await run_command(text))

    async def _run_input(
        self, text: str, images: Sequence[dict[str, Any]] | None, source: str, behavior: str | None
    ) -> tuple[str, Any] | None:
        if not self._hooks.has_handlers("input"):
            return text, images
        event: dict[str, Any] = {"type": "input", "text": text, "images": images, "source": source}
        if behavior is not None:
            event["streamingBehavior"] = behavior
        result = await self._hooks.emit_input(event) or {"action": "continue"}
        if result.get("action") == "handled":
            return None
        if result.get("action") == "transform":
            return result.get("text", text), result.get("images", images)
        return text, images

    async def _prepare_prompt(
        self, text: str, images: Any, behavior: str | None, source: str
    ) -> dict[str, Any] | None:
        processed = await self._run_input(text, images, source, behavior if self.is_streaming else None)
        if processed is None:
            return None
        text, images = processed
        if self.is_streaming:
            if not behavior:
                raise RuntimeError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                    "to queue the message."
                )
            self._queue(text, images, behavior)
            return None
        model = self.agent.state.model
        if model is None:
            raise RuntimeError(NO_MODEL_MESSAGE)
        if not self._registry.has_configured_auth(model):
            from tau.llm.registry import _missing_key_message

            raise RuntimeError(_missing_key_message(model.provider, self._registry.agent_dir))
        return {"messageType": "user", "prompt": text, "images": images}

    def _queue(self, text: str, images: Any, behavior: str) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}, *(images or [])]
        message = {"role": "user", "content": content, "timestamp": ms_now()}
        if behavior == "followUp":
            self._follow_up_texts.append(text)
            self._emit_queue_update()
            self.agent.follow_up(message)
        else:
            self._steering_texts.append(text)
            self._emit_queue_update()
            self.agent.steer(message)

    async def steer(self, text: str, images: Sequence[dict[str, Any]] | None = None) -> str:
        """Queue a message delivered after the current turn's tool calls; returns the disposition."""
        return await self._queue_input(text, images, "steer")

    async def follow_up(self, text: str, images: Sequence[dict[str, Any]] | None = None) -> str:
        """Queue a message delivered when the agent would otherwise stop."""
        return await self._queue_input(text, images, "followUp")

    async def _queue_input(self, text: str, images: Any, behavior: str) -> str:
        processed = await self._run_input(text, images, "user", behavior if self.is_streaming else None)
        if processed is None:
            return "handled"
        self._queue(processed[0], processed[1], behavior)
        return "queued"

    async def send_user_message(
        self, content: str | list[dict[str, Any]], *, deliver_as: str | None = None
    ) -> None:
        """A user message from an extension: always a turn (queued with ``deliver_as`` while streaming)."""
        if isinstance(content, str):
            text, images = content, None
        else:
            text = "\n".join(part["text"] for part in content if part.get("type") == "text")
            images = [part for part in content if part.get("type") != "text"] or None
        await self.prompt(
            text, images=images, streaming_behavior=deliver_as, source="extension", expand_commands=False
        )

    async def send_custom_message(
        self, message: dict[str, Any], *, trigger_turn: bool = False, deliver_as: str | None = None
    ) -> None:
        """An extension message that reaches the model as a user message (pi ``sendCustomMessage``).

        ``deliver_as="nextTurn"`` holds it for the next prompt; while streaming it is steered (or
        queued as a follow-up), or with ``trigger_turn=False`` appended after the current turn; when
        idle ``trigger_turn=True`` starts a run with it, otherwise it is appended at once.
        """
        custom = {
            "role": "custom",
            "customType": message["customType"],
            "content": message.get("content") if message.get("content") is not None else [],
            "display": message.get("display", True),
            "details": message.get("details"),
            "timestamp": ms_now(),
        }
        if custom["details"] is None:
            del custom["details"]
        if deliver_as == "nextTurn":
            self._pending_next_turn.append(custom)
        elif self.is_streaming and trigger_turn is not False:
            (self.agent.follow_up if deliver_as == "followUp" else self.agent.steer)(custom)
        elif trigger_turn:
            if self._emitting_settled:
                self._deferred_settled.append(
                    lambda: self.send_custom_message(
                        message, trigger_turn=trigger_turn, deliver_as=deliver_as
                    )
                )
                return
            await self._start_run({"messageType": "custom", "message": custom})
        elif self.is_streaming:
            self._pending_custom.append(custom)
        else:
            self._append_custom_message(custom)

    def _append_custom_message(self, message: dict[str, Any]) -> None:
        self._session_manager.append_custom_message_entry(
            message["customType"], message["content"], message["display"], message.get("details")
        )
        self._refresh_context()
        self._emit({"type": "message_start", "message": message})
        self._emit({"type": "message_end", "message": message})

    def _flush_pending_custom(self) -> None:
        pending, self._pending_custom = self._pending_custom, []
        for message in pending:
            self._append_custom_message(message)

    def clear_queue(self) -> dict[str, list[str]]:
        """Empty both queues; returns their texts."""
        steering, follow_up = list(self._steering_texts), list(self._follow_up_texts)
        self._steering_texts, self._follow_up_texts = [], []
        self.agent.clear_queues()
        self._emit_queue_update()
        return {"steering": steering, "followUp": follow_up}

    async def abort(self) -> None:
        """Abort the run (and any retry wait, compaction or branch summary); returns once idle."""
        if self._run_active:
            self._abort_requested = True
        self.abort_retry()
        self.abort_compaction()
        self._abort_before_settle()
        self.agent.abort()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        while not self.is_idle():
            self._idle.clear()
            await self._idle.wait()

    def _mark_idle_if_idle(self) -> None:
        if self.is_idle():
            self._idle.set()

    # -- a session-level run -----------------------------------------------------------------

    async def _start_run(self, trigger: dict[str, Any]) -> None:
        self._run_active = True
        self._idle.clear()
        self._abort_requested = False
        try:
            messages = await self._prepare_run(trigger)
        except BaseException:
            self._run_active = False
            self._flush_pending_custom()
            self._mark_idle_if_idle()
            raise
        self._flush_pending_custom()
        self._failed_response = None
        try:
            await self.agent.prompt(messages)
            while not self._abort_requested:
                if await self._handle_post_agent_run():
                    if self._abort_requested:
                        break
                    await self.agent.continue_run()
                    continue
                if self._abort_requested or not await self._run_before_settle_boundary():
                    break
                if self._abort_requested:
                    break
                await self.agent.continue_run()
        finally:
            if self._abort_requested:
                self._finish_cancelled_retry()
            self._failed_response = None
            self._forced_prompt = None
            self._flush_pending_custom()
            await self._emit_agent_settled()

    async def _prepare_run(self, trigger: dict[str, Any]) -> list[dict[str, Any]]:
        last = self._find_last_assistant()
        if last is not None:
            await self._check_compaction(last, skip_aborted=False)
        result = await self._before_agent_start(trigger)
        messages: list[dict[str, Any]] = []
        if trigger["messageType"] == "custom":
            messages.append(trigger["message"])
        else:
            content = [{"type": "text", "text": trigger["prompt"]}, *(trigger.get("images") or [])]
            messages.append({"role": "user", "content": content, "timestamp": ms_now()})
        messages.extend(self._pending_next_turn)
        self._pending_next_turn = []
        for extra in result.get("messages") or []:
            custom = {
                "role": "custom",
                "customType": extra["customType"],
                "content": extra.get("content") if extra.get("content") is not None else [],
                "display": extra.get("display", True),
                "details": extra.get("details"),
                "timestamp": ms_now(),
            }
            if custom["details"] is None:
                del custom["details"]
            messages.append(custom)
        self._forced_prompt = result.get("systemPrompt")
        patch = self._system_patch()
        if patch is not None:
            messages.insert(0, patch)
        return messages

    async def _before_agent_start(self, trigger: dict[str, Any]) -> dict[str, Any]:
        if not self._hooks.has_handlers("before_agent_start"):
            return {}
        event = dict(trigger)
        event["type"] = "before_agent_start"
        event["systemPrompt"] = self.get_system_prompt()
        return await self._hooks.emit_before_agent_start(event) or {}

    async def _emit_agent_settled(self) -> None:
        self._run_active = False
        self._emitting_settled = True
        try:
            event = {"type": "agent_settled", "aborted": self._abort_requested}
            await self._emit_hook(event)
            self._emit(event)
        finally:
            self._emitting_settled = False
        deferred, self._deferred_settled = self._deferred_settled, []
        try:
            for action in deferred:
                await action()
        finally:
            self._mark_idle_if_idle()

    def _find_last_assistant(self) -> dict[str, Any] | None:
        for message in reversed(self.agent.state.messages):
            if message.get("role") == "assistant":
                return message
        return None

    # -- agent events: extensions, listeners, persistence -------------------------------------

    async def _on_agent_event(self, event: dict[str, Any], signal: AbortSignal) -> None:
        kind = event["type"]
        if kind == "agent_start" and self._abort_requested:
            self.agent.abort()
        if kind == "message_start" and event["message"].get("role") == "user":
            self._overflow_recovery_attempted = False
            self._dequeue_text(content_text(event["message"].get("content") or "", ""))
        await self._emit_extension_event(event)
        if kind == "agent_end":
            self._emit({**event, "willRetry": self._will_retry_after(event)})
        else:
            self._emit(event)
        if kind == "message_end":
            self._persist(event["message"])
        elif kind == "turn_end":
            self._flush_pending_custom()

    def _dequeue_text(self, text: str) -> None:
        for texts in (self._steering_texts, self._follow_up_texts):
            if text in texts:
                texts.remove(text)
                self._emit_queue_update()
                return

    def _persist(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        entry_id = None
        if role == "custom":
            entry_id = self._session_manager.append_custom_message_entry(
                message["customType"],
                message["content"],
                message.get("display", True),
                message.get("details"),
            )
        elif role in _PERSISTED_ROLES:
            entry_id = self._session_manager.append_message(message)
        if entry_id is not None:
            self._remember_entry(message, entry_id)
        if role == "assistant":
            self._last_assistant = message
            if message.get("stopReason") not in ("error", "length"):
                self._overflow_recovery_attempted = False
            if message.get("stopReason") != "error" and self._retry_attempt > 0:
                self._emit({"type": "auto_retry_end", "success": True, "attempt": self._retry_attempt})
                self._retry_attempt = 0

    def _remember_entry(self, message: Any, entry_id: str) -> None:
        self._entry_ids[id(message)] = entry_id
        self._entry_refs.append(message)  # keeps id() unique while it is mapped

    def _entry_id_of(self, message: Any) -> str | None:
        found = self._entry_ids.get(id(message))
        if found is not None:
            return found
        for entry in reversed(self._session_manager.get_branch()):
            if entry.get("type") == "message" and entry.get("message") is message:
                return entry["id"]
        return None

    async def _emit_extension_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        hooks = self._hooks
        if kind == "agent_start":
            self._turn_index = 0
        if kind == "turn_end":
            self._turn_index += 1
            return
        if kind == "message_end":
            if hooks.has_handlers("message_end"):
                replacement = await hooks.emit_message_end(
                    {"type": "message_end", "message": event["message"]}
                )
                if replacement and replacement.get("message") is not None:
                    _replace_in_place(event["message"], replacement["message"])
            return
        if not hooks.has_handlers(kind):
            return
        if kind == "turn_start":
            await hooks.emit({"type": "turn_start", "turnIndex": self._turn_index, "timestamp": ms_now()})
        elif kind == "agent_end":
            await hooks.emit({"type": "agent_end", "messages": event["messages"]})
        else:
            await hooks.emit(dict(event))

    def _refresh_context(self) -> dict[str, Any]:
        projection = self._session_manager.build_session_projection()
        for item in projection["entries"]:
            for message in item["messages"]:
                self._remember_entry(message, item["sourceEntry"]["id"])
        self.agent.state.messages = projection["messages"]
        return projection

    def refresh_context(self) -> None:
        """Rebuild the transcript from the session (after an extension changed entries)."""
        self._refresh_context()

    # -- loop hooks --------------------------------------------------------------------------

    def _convert_to_llm(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return convert_to_llm(messages, block_images=bool(self._settings.get("images.blockImages", False)))

    async def _transform_context(self, messages: list[dict[str, Any]], signal: AbortSignal | None) -> Any:
        hooks = self._hooks
        if hooks.has_handlers("context") or hooks.has_handlers("context_with_system"):
            messages = await hooks.emit_context(messages)
        if self._forced_prompt is None:
            return messages
        from tau.llm.transcript import current_system_message

        current = current_system_message(messages)
        head: dict[str, Any] = {"role": "system", "content": self._forced_prompt}
        if current and current.get("toolsAdded"):
            head["toolsAdded"] = current["toolsAdded"]
        head["timestamp"] = (current or {}).get("timestamp") or ms_now()
        return [head, *(message for message in messages if message.get("role") != "system")]

    async def _prepare_request(self, request: RequestContext, signal: AbortSignal | None) -> TurnUpdate:
        self._failed_response = None
        projection = self._session_manager.build_session_projection()
        context = AgentContext(list(projection["messages"]), list(self.agent.state.tools))
        return TurnUpdate(
            context=context, model=self.agent.state.model, thinking_level=self.agent.state.thinking_level
        )

    async def _prepare_next_turn(self, turn: TurnContext, signal: AbortSignal | None) -> TurnUpdate:
        messages = await self._compact_before_next_response()
        patch = self._system_patch(messages)
        return TurnUpdate(
            context=AgentContext(list(messages), list(self.agent.state.tools)),
            messages=[patch] if patch else None,
            model=self.agent.state.model,
            thinking_level=self.agent.state.thinking_level,
        )

    async def _before_tool_call(self, context: BeforeToolCallContext, signal: AbortSignal | None) -> Any:
        return await self._tool_call_hook(context.tool_call, context.args, None)

    async def _tool_call_hook(self, call: dict[str, Any], args: Any, parent: str | None) -> Any:
        if not self._hooks.has_handlers("tool_call"):
            return None
        event: dict[str, Any] = {"type": "tool_call", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event["input"] = args
        return await self._hooks.emit_tool_call(event)

    async def _after_tool_call(self, context: AfterToolCallContext, signal: AbortSignal | None) -> Any:
        return await self._tool_result_hook(context, None)

    async def _tool_result_hook(self, context: AfterToolCallContext, parent: str | None) -> Any:
        if not self._hooks.has_handlers("tool_result"):
            return None
        result = context.result
        call = context.tool_call
        event: dict[str, Any] = {"type": "tool_result", "toolName": call["name"], "toolCallId": call["id"]}
        if parent:
            event["parentToolCallId"] = parent
        event.update(input=context.args, content=result.content, details=result.details)
        if result.has_structured_content:
            event["structuredContent"] = result.structured_content
        event["isError"] = context.is_error
        event["usage"] = result.usage
        return await self._hooks.emit_tool_result(event)

    def _tool_context(self, call: dict[str, Any]) -> ToolContext:
        model = self.agent.state.model
        return ToolContext(
            cwd=self._cwd,
            shell_path=self._settings.get("shellPath"),
            shell_command_prefix=self._settings.get("shellCommandPrefix"),
            session_id=self._session_manager.get_session_id(),
            session_file=self._session_manager.get_session_file(),
            provider=model.provider if model else None,
            model=model.id if model else None,
            model_input=tuple(model.input) if model else None,
            reasoning_level=self.agent.state.thinking_level,
            auto_resize_images=bool(self._settings.get("images.autoResize", True)),
            block_images=bool(self._settings.get("images.blockImages", False)),
        )

    async def _on_payload(self, payload: Any, model: Model) -> Any:
        if not self._hooks.has_handlers("before_provider_request"):
            return payload
        return await self._hooks.emit_before_provider_request(payload)

    async def _on_response(self, status: int, headers: dict[str, str]) -> None:
        await self._emit_hook({"type": "after_provider_response", "status": status, "headers": headers})

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
        from tau.agent.session_nested import run_nested_call

        return await run_nested_call(self, caller_id, name, args, signal=signal, on_update=on_update)

    # -- usage -------------------------------------------------------------------------------

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}``; tokens ``None`` right after a compaction."""
        from tau.agent.session_compaction import context_usage

        return context_usage(self)


def _replace_in_place(target: dict[str, Any], replacement: dict[str, Any]) -> None:
    if target is replacement:
        return
    if replacement.get("role") != target.get("role"):
        return  # message_end replacements must keep the role (pi)
    if replacement.get("content") is None:
        replacement = {**replacement, "content": []}
    target.clear()
    target.update(replacement)
