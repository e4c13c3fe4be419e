"""The session-level run (pi ``_startRun``, pi-host §4.4): from a trigger to ``agent_settled``.

A run prepares its starting messages (the pre-prompt compaction check, ``before_agent_start``, the
system-prompt patch, held ``nextTurn`` messages), runs the agent, and after each low-level run
decides whether to continue (a retry, an overflow recovery, queued messages, the
``agent_before_settle`` boundary). It always ends with ``agent_settled {aborted}``; work requested
inside ``agent_settled`` handlers runs after them. Between turns it compacts when the context is
over the threshold (``prepare_next_turn``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.agent.agent import Agent
from tau.agent.hooks import AgentContext, TurnContext, TurnUpdate
from tau.agent.session.boundaries import Boundaries
from tau.agent.session.bus import EventBus
from tau.agent.session.compaction import Compactor
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.loadout import Loadout
from tau.agent.session.retry import Retrier, is_retryable
from tau.agent.session.run_state import RunState
from tau.agent.session.store import SessionStore
from tau.agent.session.user_input import custom_message, last_assistant, user_message
from tau.agent.session_tools import options_from_json, options_to_json
from tau.agent.settings import Settings
from tau.llm.registry import clamp_thinking_level
from tau.llm.stream import AbortSignal
from tau.session.branch_scans import last_of_type

__all__ = ["RunController"]


class RunController:
    """Runs, aborts and settles the runs of one session.

    Args:
        store: the session file (held messages are appended to it, write failures end the run).
        agent: the agent whose low-level runs make up a session-level run.
        settings: image settings.
        bus: events and extension hooks.
        run: the run state.
        queues: the held input.
        loadout: the tools and system prompt (and a run's overrides).
        retrier: the automatic retry.
        compactor: the compaction checks after responses and between turns.
        boundaries: the ``agent_before_settle`` boundary.
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        settings: Settings,
        bus: EventBus,
        run: RunState,
        queues: InputQueues,
        loadout: Loadout,
        retrier: Retrier,
        compactor: Compactor,
        boundaries: Boundaries,
    ) -> None:
        self._store = store
        self._agent = agent
        self._settings = settings
        self._bus = bus
        self._run = run
        self._queues = queues
        self._loadout = loadout
        self._retrier = retrier
        self._compactor = compactor
        self._boundaries = boundaries

    async def abort(self) -> None:
        """Abort the run (and any retry wait, compaction or branch summary); returns once idle."""
        if self._run.active:
            self._run.abort_requested = True
        self._retrier.abort()
        self._run.abort_operations()
        self._boundaries.abort()
        self._agent.abort()
        await self._run.wait_for_idle()

    def flush_held(self) -> None:
        """Append the user bash results and custom messages held during the run."""
        bash = self._queues.take_bash()
        for message in bash:
            self._store.save(self._store.manager.append_message, message)
        if bash:
            self._store.refresh()
        self._store.append_custom_messages(self._queues.take_custom())

    async def start(self, trigger: dict[str, Any], on_started: Callable[[], None] | None = None) -> None:
        self._store.refuse_run_while_unsaved()
        self._run.begin()
        self._store.save_failure = None
        try:
            messages = await self._prepare(trigger)
        except BaseException:
            self._run.active = False
            self.flush_held()
            self._run.mark_idle_if_idle()
            raise
        # Held messages go before the run's starting messages, as they would have while idle.
        self.flush_held()
        if on_started is not None:
            on_started()
        self._record_thinking_level()
        self._loadout.tools.clear_pending()
        try:
            await self._agent.prompt(messages)
            while not self._run.abort_requested:
                if await self._continue_after_run():
                    if self._run.abort_requested:
                        break
                    await self._agent.continue_run()
                    continue
                if self._run.abort_requested or not await self._boundaries.before_settle():
                    break
                if self._run.abort_requested:
                    break
                await self._agent.continue_run()
        finally:
            if self._run.abort_requested:
                self._retrier.finish_cancelled()
            self._loadout.end_run()
            self.flush_held()
            await self._settle()
        self._store.raise_save_failure()

    def _record_thinking_level(self) -> None:
        """Record the live level when the branch implies another one (tree navigation can leave the
        latest ``thinking_level_change`` on another branch), so a resume restores it (pi #11451)."""
        branch = self._store.manager.get_branch()
        recorded = last_of_type(branch, "thinking_level_change")
        if recorded is None:
            return
        model = self._agent.state.model
        level = recorded.get("thinkingLevel")
        effective = (
            clamp_thinking_level(model, level) if model is not None and isinstance(level, str) else level
        )
        if effective != self._agent.state.thinking_level:
            self._store.save(
                self._store.manager.append_thinking_level_change, self._agent.state.thinking_level
            )

    async def _prepare(self, trigger: dict[str, Any]) -> list[dict[str, Any]]:
        last = last_assistant(self._agent.state.messages)
        if last is not None:
            await self._compactor.check(last, skip_aborted=False)
        result = await self._before_agent_start(trigger)
        if trigger["messageType"] == "custom":
            messages = [trigger["message"]]
        else:
            # As pi: images are normalized after before_agent_start (which may switch the model);
            # what could not be sent is said in the text instead.
            auto_resize = self._settings.get("images.autoResize", True)
            messages = [user_message(trigger["prompt"], trigger.get("images"), auto_resize)]
        messages.extend(self._queues.take_next_turn())
        messages.extend(custom_message(extra) for extra in result.get("messages") or [])
        self._loadout.forced_prompt = result.get("systemPrompt")
        patch = self._loadout.system_patch()
        if patch is not None:
            messages.insert(0, patch)
        return messages

    async def _before_agent_start(self, trigger: dict[str, Any]) -> dict[str, Any]:
        """``before_agent_start``: handlers may add custom messages, force a prompt for this run, or
        edit ``systemPromptOptions`` in place (an edited ``selectedTools`` changes the active tools)."""
        if not self._bus.hooks.has_handlers("before_agent_start"):
            return {}
        base = self._loadout.options()
        options = options_to_json(base)
        selected_before = list(options["selectedTools"])
        event = dict(trigger)
        event["type"] = "before_agent_start"
        event["systemPrompt"] = self._loadout.system_prompt()
        event["systemPromptOptions"] = options
        result = await self._bus.hooks.emit_before_agent_start(event) or {}
        edited = options_from_json(options, base)
        if edited.selected_tools != selected_before:
            self._loadout.tools.set_active(edited.selected_tools)
        self._loadout.edit_run_options(edited)
        return result

    async def _settle(self) -> None:
        self._run.active = False
        self._run.emitting_settled = True
        try:
            event = {"type": "agent_settled", "aborted": self._run.abort_requested}
            await self._bus.emit_hook(event)
            self._bus.emit(event)
        finally:
            self._run.emitting_settled = False
        deferred, self._run.deferred_settled = self._run.deferred_settled, []
        ran = 0
        try:
            for action in deferred:
                ran += 1
                await action()
        finally:
            # Actions a failure left unrun no longer wait: their prompts are not waiting either.
            self._run.deferred_prompts -= sum(bool(getattr(a, "human_prompt", False)) for a in deferred[ran:])
            self._run.mark_idle_if_idle()

    async def _continue_after_run(self) -> bool:
        """After a low-level run: whether to continue (retry, overflow recovery, queued messages)."""
        message, self._run.last_assistant = self._run.last_assistant, None
        if self._run.abort_requested:
            self._retrier.finish_cancelled()
            return False
        if message is None:
            return self._agent.has_queued_messages()
        if is_retryable(message, self._agent.state.model) and await self._retrier.prepare(
            message, self._store.omit_attempt
        ):
            if self._run.abort_requested:
                self._retrier.finish_cancelled()
            return not self._run.abort_requested
        if self._run.abort_requested:
            self._retrier.finish_cancelled()
            return False
        self._retrier.give_up(message)
        if await self._compactor.check(message):
            return not self._run.abort_requested
        return not self._run.abort_requested and self._agent.has_queued_messages()

    async def prepare_next_turn(self, turn: TurnContext, signal: AbortSignal | None) -> TurnUpdate:
        messages = await self._compactor.compact_before_next_response()
        patch = self._loadout.system_patch(messages)
        return TurnUpdate(
            context=AgentContext(list(messages), list(self._agent.state.tools)),
            messages=[patch] if patch else None,
            model=self._agent.state.model,
            thinking_level=self._agent.state.thinking_level,
        )
