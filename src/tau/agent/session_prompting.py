"""Prompting and the session-level run (pi-host §4.4): prompts, queues, custom messages, abort, settle.

A session-level run (pi ``_startRun``) prepares its starting messages (pre-prompt compaction check,
``before_agent_start``, the system-prompt patch, held ``nextTurn`` messages), runs the agent, and
after each low-level run decides whether to continue (retry, overflow recovery, queued messages,
the ``agent_before_settle`` boundary). It always ends with ``agent_settled {aborted}``; work
requested inside ``agent_settled`` handlers runs after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tau.agent.session.retry import is_retryable
from tau.agent.session_tools import options_from_json, options_to_json
from tau.common.jsstr import ms_now
from tau.llm.messages import content_text
from tau.llm.registry import clamp_thinking_level
from tau.session.errors import SessionWriteError

__all__ = ["NO_MODEL_MESSAGE", "PromptMixin"]

NO_MODEL_MESSAGE = (
    "No model selected. Use --model provider/id (or set defaultProvider/defaultModel in settings.json); "
    "`--model faux/faux-1 --faux-script FILE` runs offline."
)


def _ignore(disposition: str) -> None:
    """The default ``preflight_result``: nobody is asking."""


def normalize_prompt_images(images: Any, auto_resize: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """A prompt's image blocks as pi 1.6 sends them: converted and resized, or left out with a note."""
    if not images:
        return [], []
    import base64
    import binascii

    from tau.tools.images import prepare_image

    normalized: list[dict[str, Any]] = []
    hints: list[str] = []
    for image in images:
        try:
            data = base64.b64decode(image.get("data") or "")
        except (binascii.Error, ValueError):
            data = b""
        prepared = prepare_image(data, str(image.get("mimeType") or ""), auto_resize=bool(auto_resize))
        if prepared.omitted:
            hints.append(prepared.omitted)
            continue
        normalized.append({"type": "image", "data": prepared.data, "mimeType": prepared.mime_type})
        hints += prepared.hints
    return normalized, hints


class PromptMixin:
    """Prompting, queues and runs of :class:`~tau.agent.session.AgentSession`."""

    # state of the session these methods set (declared with its type in AgentSession.__init__)
    _save_failure: SessionWriteError | None
    _forced_prompt: str | None
    _pending_custom: list[dict[str, Any]]
    _pending_bash: list[dict[str, Any]]
    _pending_next_turn: list[dict[str, Any]]
    _steering_texts: list[str]
    _follow_up_texts: list[str]
    _deferred_settled: list[Callable[[], Any]]

    # -- prompting ---------------------------------------------------------------------------

    async def prompt(
        self: Any,
        text: str,
        *,
        images: Sequence[dict[str, Any]] | None = None,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        expand_commands: bool = True,
        preflight_result: Callable[[str], None] | None = None,
    ) -> None:
        """Send a prompt: run it, or queue it while streaming (``streaming_behavior`` steer/followUp).

        ``source`` (``interactive``, ``rpc``, ``extension``) reaches ``input`` handlers. A text that
        starts with ``/`` and names an extension command runs the command instead.
        ``preflight_result`` hears what became of the prompt as soon as it is known (pi
        ``preflightResult``, how the RPC mode answers ``prompt``): ``"handled"`` (an extension command
        or an ``input`` handler took it), ``"queued"``, or ``"started"`` (the run's messages are
        prepared; called before its ``agent_start``). A refused prompt raises instead.
        """
        if self._run.emitting_settled:
            human = source != "extension"
            self._run.deferred_prompts += human

            async def deferred() -> None:
                self._run.deferred_prompts -= human
                await self.prompt(
                    text,
                    images=images,
                    streaming_behavior=streaming_behavior,
                    source=source,
                    expand_commands=expand_commands,
                    preflight_result=preflight_result,
                )

            deferred.human_prompt = human  # type: ignore[attr-defined]
            self._run.deferred_settled.append(deferred)
            return
        report = preflight_result or _ignore
        if expand_commands and text.startswith("/") and await self._try_command(text):
            report("handled")
            return
        if self._run.running("manual_compaction") or self._run.running("branch_summary"):
            raise RuntimeError(
                "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
            )
        self._run.prompt_preflight += 1
        try:
            trigger = await self._prepare_prompt(
                text, images, streaming_behavior, source, report, expand_commands
            )
        finally:
            self._run.prompt_preflight -= 1
        if trigger is not None:
            await self._start_run(trigger, lambda: report("started"))

    async def _try_command(self: Any, text: str) -> bool:
        run_command = getattr(self._bus.hooks, "execute_command", None)
        if run_command is None:
            return False
        return bool(await run_command(text))

    async def _run_input(
        self: Any, text: str, images: Sequence[dict[str, Any]] | None, source: str, behavior: str | None
    ) -> tuple[str, Any] | None:
        if not self._bus.hooks.has_handlers("input"):
            return text, images
        event: dict[str, Any] = {"type": "input", "text": text, "images": images, "source": source}
        if behavior is not None:
            event["streamingBehavior"] = behavior
        result = await self._bus.hooks.emit_input(event) or {"action": "continue"}
        if result.get("action") == "handled":
            return None
        if result.get("action") == "transform":
            return result.get("text", text), result.get("images", images)
        return text, images

    async def _prepare_prompt(
        self: Any,
        text: str,
        images: Any,
        behavior: str | None,
        source: str,
        report: Callable[[str], None],
        expand: bool = True,
    ) -> dict[str, Any] | None:
        processed = await self._run_input(text, images, source, behavior if self.is_streaming else None)
        if processed is None:
            report("handled")
            return None
        text, images = processed
        if expand:
            text = self._expand_commands(text)
        if self.is_streaming:
            if not behavior:
                raise RuntimeError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                    "to queue the message."
                )
            self._queue(text, images, behavior)
            report("queued")
            return None
        model = self.agent.state.model
        if model is None:
            raise RuntimeError(NO_MODEL_MESSAGE)
        if not self._registry.has_configured_auth(model):
            from tau.llm.registry import _missing_key_message

            raise RuntimeError(_missing_key_message(model.provider, self._registry.agent_dir))
        return {"messageType": "user", "prompt": text, "images": images}

    def _queue(self: Any, text: str, images: Any, behavior: str) -> None:
        sent_images, hints = normalize_prompt_images(images, self._settings.get("images.autoResize", True))
        sent = f"{text}\n\n" + "\n".join(hints) if hints else text
        content: list[dict[str, Any]] = [{"type": "text", "text": sent}, *sent_images]
        message = {"role": "user", "content": content, "timestamp": ms_now()}
        self._queues.add_text(behavior, text)
        if behavior == "followUp":
            self.agent.follow_up(message)
        else:
            self.agent.steer(message)

    async def steer(
        self: Any, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered after the current turn's tool calls; returns the disposition."""
        return await self._queue_input(text, images, "steer", source)

    async def follow_up(
        self: Any, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered when the agent would otherwise stop."""
        return await self._queue_input(text, images, "followUp", source)

    async def _queue_input(self: Any, text: str, images: Any, behavior: str, source: str) -> str:
        get_command = getattr(self._bus.hooks, "get_command", None)
        if text.startswith("/") and get_command is not None:
            name = text[1:].split(" ", 1)[0]
            if get_command(name) is not None:
                raise RuntimeError(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                    "when not streaming."
                )
        processed = await self._run_input(text, images, source, behavior if self.is_streaming else None)
        if processed is None:
            return "handled"
        self._queue(self._expand_commands(processed[0]), processed[1], behavior)
        return "queued"

    def _expand_commands(self: Any, text: str) -> str:
        """``/skill:name args`` and ``/template args`` as the text they stand for (pi's order: skill, then
        template). A skill file that cannot be read is reported as an extension error; the text stays."""
        from tau.agent.frontmatter import FrontmatterError
        from tau.agent.prompt_templates import expand_prompt_template
        from tau.agent.skills import expand_skill_command

        resources = self._resources
        try:
            text = expand_skill_command(text, resources.skills)
        except (OSError, FrontmatterError) as exc:
            name = text[7:].split(" ", 1)[0]
            skill = next((s for s in resources.skills if s.name == name), None)
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._bus.hooks.emit_error(skill.file_path if skill else text, "skill_expansion", message)
        return expand_prompt_template(text, resources.prompts)

    async def send_user_message(
        self: Any, content: str | list[dict[str, Any]], *, deliver_as: str | None = None
    ) -> None:
        """A user message from an extension: always a turn (queued with ``deliver_as`` while streaming)."""
        if isinstance(content, str):
            text, images = content, None
        else:
            text = content_text(content)
            images = [part for part in content if part.get("type") != "text"] or None
        await self.prompt(
            text, images=images, streaming_behavior=deliver_as, source="extension", expand_commands=False
        )

    async def send_custom_message(
        self: Any, message: dict[str, Any], *, trigger_turn: bool | None = None, deliver_as: str | None = None
    ) -> None:
        """An extension message that reaches the model as a user message (pi ``sendCustomMessage``).

        ``deliver_as="nextTurn"`` holds it for the next prompt; while streaming it is steered (or
        queued as a follow-up) unless ``trigger_turn=False``, which appends it after the current turn;
        when idle ``trigger_turn=True`` starts a run with it, otherwise it is appended at once.
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
            self._queues.next_turn.append(custom)
        elif self.is_streaming and trigger_turn is not False:
            (self.agent.follow_up if deliver_as == "followUp" else self.agent.steer)(custom)
        elif trigger_turn:
            if self._run.emitting_settled:
                self._run.deferred_settled.append(
                    lambda: self.send_custom_message(
                        message, trigger_turn=trigger_turn, deliver_as=deliver_as
                    )
                )
                return
            await self._start_run({"messageType": "custom", "message": custom})
        elif self.is_streaming:
            self._queues.custom.append(custom)
        else:
            self._append_custom_message(custom)

    def _append_custom_message(self: Any, message: dict[str, Any]) -> None:
        self._store.save(
            self._store.manager.append_custom_message_entry,
            message["customType"],
            message["content"],
            message["display"],
            message.get("details"),
        )
        self._store.refresh()
        self._bus.emit({"type": "message_start", "message": message})
        self._bus.emit({"type": "message_end", "message": message})

    def _flush_pending_custom(self: Any) -> None:
        pending, self._queues.custom = self._queues.custom, []
        for message in pending:
            self._append_custom_message(message)

    # -- user bash ---------------------------------------------------------------------------

    def record_bash_result(
        self: Any, command: str, result: dict[str, Any], *, exclude_from_context: bool = False
    ) -> None:
        """Store a user's shell command (``!cmd``, RPC ``bash``) as a ``bashExecution`` message.

        ``result`` is ``{output, exitCode?, cancelled, truncated, fullOutputPath?}``. While a run is
        streaming the message is held until the run ends (before ``agent_settled``), so it never
        lands between a tool call and its result (pi ``recordBashResult``).
        """
        message: dict[str, Any] = {
            "role": "bashExecution",
            "command": command,
            "output": result.get("output", ""),
        }
        if result.get("exitCode") is not None:
            message["exitCode"] = result["exitCode"]
        message["cancelled"] = bool(result.get("cancelled"))
        message["truncated"] = bool(result.get("truncated"))
        if result.get("fullOutputPath"):
            message["fullOutputPath"] = result["fullOutputPath"]
        message["timestamp"] = ms_now()
        if exclude_from_context:
            message["excludeFromContext"] = True
        if self.is_streaming:
            self._queues.bash.append(message)
        else:
            self._store.manager.append_message(message)
            self._store.refresh()

    @property
    def has_pending_bash_messages(self: Any) -> bool:
        """Whether user bash results wait for the current run to end."""
        return bool(self._queues.bash)

    def _flush_pending_bash(self: Any) -> None:
        pending, self._queues.bash = self._queues.bash, []
        for message in pending:
            self._store.save(self._store.manager.append_message, message)
        if pending:
            self._store.refresh()

    def clear_queue(self: Any) -> dict[str, list[str]]:
        """Empty both queues; returns their texts."""
        self.agent.clear_queues()
        return self._queues.clear_texts()

    async def abort(self: Any) -> None:
        """Abort the run (and any retry wait, compaction or branch summary); returns once idle."""
        if self._run.active:
            self._run.abort_requested = True
        self.abort_retry()
        self._run.abort_operations()
        self._boundaries.abort()
        self.agent.abort()
        await self.wait_for_idle()

    async def wait_for_idle(self: Any) -> None:
        await self._run.wait_for_idle()

    # -- a session-level run -----------------------------------------------------------------

    async def _start_run(
        self: Any, trigger: dict[str, Any], on_started: Callable[[], None] | None = None
    ) -> None:
        self._store.refuse_run_while_unsaved()
        self._run.begin()
        self._store.save_failure = None
        try:
            messages = await self._prepare_run(trigger)
        except BaseException:
            self._run.active = False
            self._flush_pending_bash()
            self._flush_pending_custom()
            self._run.mark_idle_if_idle()
            raise
        # Held messages go before the run's starting messages, as they would have while idle.
        self._flush_pending_bash()
        self._flush_pending_custom()
        if on_started is not None:
            on_started()
        self._record_thinking_level()
        self._tools.clear_pending()
        try:
            await self.agent.prompt(messages)
            while not self._run.abort_requested:
                if await self._handle_post_agent_run():
                    if self._run.abort_requested:
                        break
                    await self.agent.continue_run()
                    continue
                if self._run.abort_requested or not await self._boundaries.before_settle():
                    break
                if self._run.abort_requested:
                    break
                await self.agent.continue_run()
        finally:
            if self._run.abort_requested:
                self._retrier.finish_cancelled()
            self._forced_prompt = None
            self._run_prompt_options = None
            self._flush_pending_bash()
            self._flush_pending_custom()
            await self._emit_agent_settled()
        self._store.raise_save_failure()

    def _record_thinking_level(self: Any) -> None:
        """Record the live level when the branch implies another one (tree navigation can leave the
        latest ``thinking_level_change`` on another branch), so a resume restores it (pi #11451)."""
        branch = self._store.manager.get_branch()
        recorded = next((e for e in reversed(branch) if e.get("type") == "thinking_level_change"), None)
        if recorded is None:
            return
        model = self.agent.state.model
        level = recorded.get("thinkingLevel")
        effective = (
            clamp_thinking_level(model, level) if model is not None and isinstance(level, str) else level
        )
        if effective != self.agent.state.thinking_level:
            self._store.save(self._store.manager.append_thinking_level_change, self.agent.state.thinking_level)

    async def _prepare_run(self: Any, trigger: dict[str, Any]) -> list[dict[str, Any]]:
        last = self._find_last_assistant()
        if last is not None:
            await self._compactor.check(last, skip_aborted=False)
        result = await self._before_agent_start(trigger)
        messages: list[dict[str, Any]] = []
        if trigger["messageType"] == "custom":
            messages.append(trigger["message"])
        else:
            # As pi: images are normalized after before_agent_start (which may switch the model);
            # what could not be sent is said in the text instead.
            images, hints = normalize_prompt_images(
                trigger.get("images"), self._settings.get("images.autoResize", True)
            )
            text = f"{trigger['prompt']}\n\n" + "\n".join(hints) if hints else trigger["prompt"]
            content = [{"type": "text", "text": text}, *images]
            messages.append({"role": "user", "content": content, "timestamp": ms_now()})
        messages.extend(self._queues.next_turn)
        self._queues.next_turn = []
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

    async def _before_agent_start(self: Any, trigger: dict[str, Any]) -> dict[str, Any]:
        """``before_agent_start``: handlers may add custom messages, force a prompt for this run, or
        edit ``systemPromptOptions`` in place (an edited ``selectedTools`` changes the active tools)."""
        if not self._bus.hooks.has_handlers("before_agent_start"):
            return {}
        base = self._prompt_options()
        options = options_to_json(base)
        selected_before = list(options["selectedTools"])
        event = dict(trigger)
        event["type"] = "before_agent_start"
        event["systemPrompt"] = self.get_system_prompt()
        event["systemPromptOptions"] = options
        result = await self._bus.hooks.emit_before_agent_start(event) or {}
        edited = options_from_json(options, base)
        if edited.selected_tools != selected_before:
            self._tools.set_active(edited.selected_tools)
        self._run_prompt_options = edited
        return result

    async def _emit_agent_settled(self: Any) -> None:
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

    async def _handle_post_agent_run(self: Any) -> bool:
        """After a low-level run: whether to continue (retry, overflow recovery, queued messages)."""
        message, self._run.last_assistant = self._run.last_assistant, None
        if self._run.abort_requested:
            self._retrier.finish_cancelled()
            return False
        if message is None:
            return self.agent.has_queued_messages()
        if is_retryable(message, self.agent.state.model) and await self._retrier.prepare(
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
        return not self._run.abort_requested and self.agent.has_queued_messages()

    def _find_last_assistant(self: Any) -> dict[str, Any] | None:
        for message in reversed(self.agent.state.messages):
            if message.get("role") == "assistant":
                return message
        return None
