"""Input to a session (pi-host §4.4): prompts, steers, follow-ups, extension messages, user bash results.

A prompt goes through extension commands and ``input`` handlers, then ``/skill:`` and ``/template``
expansion; while a run streams it is queued (``streaming_behavior`` steer or followUp), else it
starts a run (:class:`~tau.agent.session.controller.RunController`). Input that arrives while the
``agent_settled`` handlers run waits until they return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tau.agent.agent import Agent
from tau.agent.resources import Resources
from tau.agent.session.bus import EventBus
from tau.agent.session.controller import RunController
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.run_state import RunState
from tau.agent.session.store import SessionStore
from tau.agent.session.user_input import NO_MODEL_MESSAGE, custom_message, user_message
from tau.agent.settings import Settings
from tau.common.jsstr import ms_now
from tau.llm.messages import content_text
from tau.llm.registry import ModelRegistry

__all__ = ["Prompter"]


def _ignore(disposition: str) -> None:
    """The default ``preflight_result``: nobody is asking."""


class Prompter:
    """The input side of one session.

    Args:
        store: the session file (input appended at once while idle).
        agent: the agent whose queues hold steers and follow-ups.
        settings: image settings.
        registry: whether the model has credentials.
        bus: events and extension hooks (commands, ``input``).
        run: whether a run streams, and the work held while ``agent_settled`` handlers run.
        queues: the queued texts and held messages.
        resources: the skills and prompt templates ``/skill:`` and ``/template`` expand.
        controller: starts runs.
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        settings: Settings,
        registry: ModelRegistry,
        bus: EventBus,
        run: RunState,
        queues: InputQueues,
        resources: Resources,
        controller: RunController,
    ) -> None:
        self._store = store
        self._agent = agent
        self._settings = settings
        self._registry = registry
        self._bus = bus
        self._run = run
        self._queues = queues
        self._resources = resources
        self._controller = controller

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
            await self._controller.start(trigger, lambda: report("started"))

    async def _try_command(self, text: str) -> bool:
        run_command = getattr(self._bus.hooks, "execute_command", None)
        if run_command is None:
            return False
        return bool(await run_command(text))

    async def _run_input(
        self, text: str, images: Sequence[dict[str, Any]] | None, source: str, behavior: str | None
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
        self,
        text: str,
        images: Any,
        behavior: str | None,
        source: str,
        report: Callable[[str], None],
        expand: bool = True,
    ) -> dict[str, Any] | None:
        processed = await self._run_input(text, images, source, behavior if self._run.active else None)
        if processed is None:
            report("handled")
            return None
        text, images = processed
        if expand:
            text = self._expand_commands(text)
        if self._run.active:
            if not behavior:
                raise RuntimeError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                    "to queue the message."
                )
            self._queue(text, images, behavior)
            report("queued")
            return None
        model = self._agent.state.model
        if model is None:
            raise RuntimeError(NO_MODEL_MESSAGE)
        if not self._registry.has_configured_auth(model):
            from tau.llm.registry import _missing_key_message

            raise RuntimeError(_missing_key_message(model.provider, self._registry.agent_dir))
        return {"messageType": "user", "prompt": text, "images": images}

    def _queue(self, text: str, images: Any, behavior: str) -> None:
        message = user_message(text, images, self._settings.get("images.autoResize", True))
        self._queues.add_text(behavior, text)
        if behavior == "followUp":
            self._agent.follow_up(message)
        else:
            self._agent.steer(message)

    async def steer(
        self, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered after the current turn's tool calls; returns the disposition."""
        return await self._queue_input(text, images, "steer", source)

    async def follow_up(
        self, text: str, images: Sequence[dict[str, Any]] | None = None, *, source: str = "interactive"
    ) -> str:
        """Queue a message delivered when the agent would otherwise stop."""
        return await self._queue_input(text, images, "followUp", source)

    async def _queue_input(self, text: str, images: Any, behavior: str, source: str) -> str:
        get_command = getattr(self._bus.hooks, "get_command", None)
        if text.startswith("/") and get_command is not None:
            name = text[1:].split(" ", 1)[0]
            if get_command(name) is not None:
                raise RuntimeError(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                    "when not streaming."
                )
        processed = await self._run_input(text, images, source, behavior if self._run.active else None)
        if processed is None:
            return "handled"
        self._queue(self._expand_commands(processed[0]), processed[1], behavior)
        return "queued"

    def _expand_commands(self, text: str) -> str:
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
            self._bus.emit_error(skill.file_path if skill else text, "skill_expansion", message)
        return expand_prompt_template(text, resources.prompts)

    async def send_user_message(
        self, content: str | list[dict[str, Any]], *, deliver_as: str | None = None
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
        self, message: dict[str, Any], *, trigger_turn: bool | None = None, deliver_as: str | None = None
    ) -> None:
        """An extension message that reaches the model as a user message (pi ``sendCustomMessage``).

        ``deliver_as="nextTurn"`` holds it for the next prompt; while streaming it is steered (or
        queued as a follow-up) unless ``trigger_turn=False``, which appends it after the current turn;
        when idle ``trigger_turn=True`` starts a run with it, otherwise it is appended at once.
        """
        custom = custom_message(message)
        if deliver_as == "nextTurn":
            self._queues.next_turn.append(custom)
        elif self._run.active and trigger_turn is not False:
            (self._agent.follow_up if deliver_as == "followUp" else self._agent.steer)(custom)
        elif trigger_turn:
            if self._run.emitting_settled:
                self._run.deferred_settled.append(
                    lambda: self.send_custom_message(
                        message, trigger_turn=trigger_turn, deliver_as=deliver_as
                    )
                )
                return
            await self._controller.start({"messageType": "custom", "message": custom})
        elif self._run.active:
            self._queues.custom.append(custom)
        else:
            self._store.append_custom_messages([custom])

    def record_bash_result(
        self, command: str, result: dict[str, Any], *, exclude_from_context: bool = False
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
        if self._run.active:
            self._queues.bash.append(message)
        else:
            self._store.manager.append_message(message)
            self._store.refresh()

    @property
    def has_pending_bash_messages(self) -> bool:
        """Whether user bash results wait for the current run to end."""
        return bool(self._queues.bash)

    def clear_queue(self) -> dict[str, list[str]]:
        """Empty both queues; returns their texts."""
        self._agent.clear_queues()
        return self._queues.clear_texts()
