"""``faux``: the scripted provider for tests and demos (``--model faux/faux-1``).

Each model call takes the next step of a script (a JSON array, from ``TAU_FAUX_SCRIPT``,
``--faux-script FILE``, or a list given in code). A step is one of:

- a pi assistant message shape: ``{"content": [...], "stopReason": "stop"}`` (other fields kept);
- the shorthand ``{"text": "...", "thinking": "...", "tool": "NAME", "args": {...}}``, or
  ``{"bash": "CMD"}`` for a ``bash`` call, or ``{"error": "TEXT"}`` for a failed call;
- ``{"factory": "FILE.py:FUNC"}``: FUNC is called with the request as plain JSON
  (``{"systemPrompt", "messages" (system messages left out), "tools"}``) and returns a step or a
  list of steps; the first answers this call, the rest go to the front of the queue.

Replies stream in 16-character deltas (text, thinking, tool-call JSON); tool calls without an id
get ``call_<n>``, counting from 1 per provider (per session). Usage is estimated exactly as pi-ai
1.6's faux provider does (see :func:`estimate_usage`, in :mod:`._faux_request` with the bill and the
payload ``before_provider_request`` shows), costs are 0. When the script runs out the call ends
with ``stopReason: "error"`` and ``No more faux responses queued``, as in pi; when no script was
given at all (neither ``--faux-script`` nor ``TAU_FAUX_SCRIPT``), the error says how to give one.

Whose script: there is no script of the process. Each :class:`~tau.llm.registry.ModelRegistry`
answers from a provider of its own (``ModelRegistry(faux=provider_for(script))``, what
``--faux-script`` and the SDK's ``faux_script=`` do; without one, ``$TAU_FAUX_SCRIPT`` read when its
first faux call is made), so two sessions of one process never take each other's steps, also when
both read the same file. Code without a registry (an ``Agent``'s ``stream_fn``) uses a provider's
:meth:`FauxProvider.stream`, as pi's ``fauxProvider()`` hands out its own ``streamSimple``.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import inspect
import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from tau.common import jsjson
from tau.common.jsstr import ms_now
from tau.llm.builder import MessageBuilder, aborted_before_request
from tau.llm.providers._faux_request import (
    bill,
    chat_completions_payload,
    estimate_usage,
    message_memo,
    render_prompt,
)
from tau.llm.providers._message_memo import MessageMemo, json_copy
from tau.llm.stream import AssistantMessageEventStream, DeferredPayload, StreamOptions
from tau.llm.transcript import current_system_prompt, current_tools
from tau.llm.types import Model, TranscriptContext, empty_usage

__all__ = [
    "CHUNK_CHARS",
    "NO_MORE_RESPONSES",
    "NO_PROVIDER",
    "NO_SCRIPT",
    "FauxProvider",
    "FauxScriptError",
    "chat_completions_payload",
    "estimate_usage",
    "load_script",
    "message_memo",
    "provider_for",
    "render_prompt",
    "stream",
]

CHUNK_CHARS = 16
# The loop gets a turn before each of a block's first EAGER_DELTAS deltas (a consumer can act, an
# abort lands, between any two of them), then before every DELTA_BATCH-th: a turn costs more than
# a delta, and a 20 MB answer is 1.3 million deltas.
EAGER_DELTAS = 4096
DELTA_BATCH = 64
NO_MORE_RESPONSES = "No more faux responses queued"
SCRIPT_ENV = "TAU_FAUX_SCRIPT"
NO_SCRIPT = (
    "The faux model needs a script: --faux-script FILE or TAU_FAUX_SCRIPT=FILE "
    "(a JSON array of steps, see docs/models.md)"
)
NO_PROVIDER = (
    "The faux model answers from a script of its own: call it through a ModelRegistry "
    "(ModelRegistry(faux=faux.provider_for(script)), or $TAU_FAUX_SCRIPT) or a FauxProvider's stream"
)
_MAX_FACTORY_DEPTH = 32

Step = Mapping[str, Any]


class FauxScriptError(ValueError):
    """The faux script cannot be read or a step is malformed; the message names the file and the step."""


# -- the script ----------------------------------------------------------------------------


def load_script(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read and check a script file: a JSON array of steps."""
    file = Path(path)
    try:
        data = jsjson.loads(file.read_bytes())
    except FileNotFoundError:
        raise FauxScriptError(
            f"faux script not found: {str(file)!r}; set {SCRIPT_ENV} or --faux-script"
        ) from None
    except ValueError as exc:
        raise FauxScriptError(f"faux script {str(file)!r} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise FauxScriptError(
            f"faux script {str(file)!r} must be a JSON array of steps, got {type(data).__name__}"
        )
    for number, step in enumerate(data, 1):
        _check_step(step, f"{file}: step {number}")
    return data


def _check_step(step: Any, where: str) -> None:
    if not isinstance(step, dict):
        raise FauxScriptError(f"{where} must be an object, got {jsjson.dumps_str(step)[:80]}")
    if "factory" in step:
        spec = step["factory"]
        if not isinstance(spec, str) and not callable(spec):
            raise FauxScriptError(f'{where}: "factory" must be "FILE.py:FUNC", got {spec!r}')
        if isinstance(spec, str) and ":" not in spec:
            raise FauxScriptError(f'{where}: "factory" must be "FILE.py:FUNC", got {spec!r}')
    elif "content" in step:
        if not isinstance(step["content"], list | str):
            raise FauxScriptError(f'{where}: "content" must be a list of blocks or a string')
    elif not any(key in step for key in ("text", "thinking", "tool", "bash", "error")):
        raise FauxScriptError(
            f'{where} has none of "content", "text", "thinking", "tool", "bash", "error", "factory": '
            f"{jsjson.dumps_str(step)[:120]}"
        )
    if "tool" in step and not isinstance(step["tool"], str):
        raise FauxScriptError(f'{where}: "tool" must be a tool name string')
    if "args" in step and not isinstance(step["args"], dict):
        raise FauxScriptError(f'{where}: "args" must be an object')


NewId = Callable[[], str]


def _message_from_step(step: Step, new_id: NewId) -> dict[str, Any]:
    """A step (pi shape or shorthand) as an assistant message in pi's key order, without usage yet.

    ``new_id`` names a tool call that has no id (the provider's ``call_<n>``).
    """
    if "content" in step:
        return _from_pi_shape(step, new_id)
    content: list[dict[str, Any]] = []
    if step.get("thinking"):
        content.append({"type": "thinking", "thinking": step["thinking"]})
    if step.get("text") is not None and (step.get("text") or not (step.get("tool") or step.get("bash"))):
        content.append({"type": "text", "text": step["text"]})
    if step.get("tool"):
        content.append(_tool_call(step["tool"], step.get("args") or {}, step.get("id") or new_id()))
    if step.get("bash") is not None:
        content.append(_tool_call("bash", {"command": step["bash"]}, step.get("id") or new_id()))
    if "error" in step:
        return _assistant(content, "error", error_message=str(step["error"]))
    has_calls = any(block["type"] == "toolCall" for block in content)
    return _assistant(content, step.get("stopReason") or ("toolUse" if has_calls else "stop"))


def _tool_call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _from_pi_shape(step: Step, new_id: NewId) -> dict[str, Any]:
    message = copy.deepcopy(dict(step))
    raw = message.get("content")
    blocks = [{"type": "text", "text": raw}] if isinstance(raw, str) else list(raw or [])
    content = []
    for block in blocks:
        if block.get("type") == "toolCall":
            block = {
                "type": "toolCall",
                "id": block.get("id") or new_id(),
                "name": block["name"],
                "arguments": block.get("arguments") or {},
                **{k: v for k, v in block.items() if k not in ("type", "id", "name", "arguments")},
            }
        content.append(block)
    has_calls = any(block.get("type") == "toolCall" for block in content)
    stop_reason = message.get("stopReason") or ("toolUse" if has_calls else "stop")
    base = _assistant(content, stop_reason, error_message=message.get("errorMessage"))
    # Other fields of the step (responseId, diagnostics, ...) follow, as a spread in pi would keep them.
    for key, value in message.items():
        if key not in base and key not in ("content", "stopReason", "errorMessage"):
            base[key] = value
    return base


def _assistant(
    content: list[dict[str, Any]], stop_reason: str, error_message: str | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": None,
        "stopReason": stop_reason,
    }
    if error_message is not None:
        message["errorMessage"] = error_message
    message["timestamp"] = None
    return message


# -- the provider --------------------------------------------------------------------------


class FauxProvider:
    """A queue of scripted steps and the simulated prompt cache; :meth:`stream` answers one call.

    Args:
        steps: the script as a list of steps.
        script_path: where the steps came from (factories are found relative to it).
        scripted: whether a script was given at all (``False``: running out says how to give one).
    """

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        script_path: str | os.PathLike[str] | None = None,
        scripted: bool = True,
    ) -> None:
        self.script_path = Path(script_path) if script_path is not None else None
        self.scripted = scripted
        self.steps: deque[Step] = deque(steps)
        self.prompt_cache: dict[str, list[str]] = {}
        self._memo = message_memo()
        self.call_count = 0
        self.requests: list[TranscriptContext] = []
        self._modules: dict[Path, ModuleType] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._call_ids = itertools.count(1)  # call_<n> per provider: a session's ids are its own

    def _new_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> FauxProvider:
        """A provider for the script file at ``path`` (checked now: :class:`FauxScriptError`)."""
        return cls(load_script(path), script_path=path)

    @classmethod
    def from_env(cls) -> FauxProvider:
        """A provider for ``$TAU_FAUX_SCRIPT``, or an empty script when it is unset."""
        path = os.environ.get(SCRIPT_ENV)
        return cls.from_file(path) if path else cls(scripted=False)

    def push(self, *steps: Step) -> None:
        """Append steps to the end of the script."""
        self.scripted = True
        self.steps.extend(steps)

    @property
    def pending(self) -> int:
        """Steps not used yet."""
        return len(self.steps)

    def stream(
        self, model: Model, context: TranscriptContext, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Answer one call with the next step; returns the event stream at once.

        A call whose signal is already aborted is not made: no step is used and nothing is counted.
        """
        options = options or StreamOptions()
        aborted = aborted_before_request(model, options.signal)
        if aborted is not None:
            return aborted
        builder_stream = AssistantMessageEventStream()
        self.call_count += 1
        self.requests.append(context)
        step = self.steps.popleft() if self.steps else None
        task = self._answer(model, context, options, step, builder_stream, ms_now())
        running = asyncio.get_running_loop().create_task(task)
        self._tasks.add(running)  # keep a reference: the loop holds tasks only weakly
        running.add_done_callback(self._tasks.discard)
        return builder_stream

    async def _answer(
        self,
        model: Model,
        context: TranscriptContext,
        options: StreamOptions,
        step: Step | None,
        out: AssistantMessageEventStream,
        started: int,
    ) -> None:
        direct = step is None  # pi ends an exhausted or failed call with a lone error event
        try:
            # The request's messages, compared once with the last call's: the payload and the
            # usage below are derived from them as they are now.
            self._memo.refresh(context["messages"])
            if options.on_payload:
                # faux sends nothing; the hook lets the agent emit before_provider_request (decisions.md),
                # with the payload made only for a handler that reads it.
                memo = self._memo
                payload = DeferredPayload(lambda: chat_completions_payload(model, context, memo))
                try:
                    await _maybe_await(options.on_payload(payload, model))
                finally:  # read later, it is made from the messages alone (the memo moves on)
                    payload.rebind(lambda: chat_completions_payload(model, context))
            if options.on_response:
                await _maybe_await(options.on_response(200, {}))
            if step is None:
                message = _assistant(
                    [], "error", error_message=NO_MORE_RESPONSES if self.scripted else NO_SCRIPT
                )
            else:
                step = await self._resolve(step, context, self._memo)
                message = _message_from_step(step, self._new_call_id)
            message.update(api=model.api, provider=model.provider, model=model.id)
            if message.get("timestamp") is None:
                message["timestamp"] = ms_now()
            message["usage"] = estimate_usage(
                context["messages"],
                message["content"],
                session_id=options.session_id,
                cache_retention=options.cache_retention,
                prompt_cache=self.prompt_cache,
                memo=self._memo,
            )
            bill(context, options, message["usage"], model.id)
        except Exception as exc:  # boundary: a broken step or factory ends this call with an error
            message = _assistant([], "error", error_message=str(exc) or type(exc).__name__)
            message.update(api=model.api, provider=model.provider, model=model.id, timestamp=ms_now())
            message["usage"] = empty_usage()
            direct = True
        builder = MessageBuilder(model, out, template=message, started_ms=started)
        if direct:
            builder.finish("error")
            return
        try:
            await _stream_message(builder, message, options)
        except Exception as exc:  # boundary: a malformed block must still end the stream
            builder.fail(exc)

    async def _resolve(self, step: Step, context: TranscriptContext, memo: MessageMemo | None = None) -> Step:
        for _ in range(_MAX_FACTORY_DEPTH):
            if "factory" not in step:
                return step
            request = _factory_request(context, memo)
            produced = await _maybe_await(self._factory(step["factory"])(request))
            steps = list(produced) if isinstance(produced, list) else [produced]
            if not steps or steps[0] is None:
                raise FauxScriptError(f"faux factory {step['factory']!r} returned no step")
            for number, item in enumerate(steps, 1):
                _check_step(item, f"faux factory {step['factory']!r}: step {number}")
            self.steps.extendleft(reversed(steps[1:]))
            step = steps[0]
        raise FauxScriptError(f"faux factories nested more than {_MAX_FACTORY_DEPTH} deep")

    def _factory(self, spec: str | Callable[..., Any]) -> Callable[..., Any]:
        if callable(spec):
            return spec
        file_name, _, func_name = spec.rpartition(":")
        path = Path(file_name)
        if not path.is_absolute():
            base = self.script_path.parent if self.script_path else Path.cwd()
            path = base / path if (base / path).exists() else Path.cwd() / path
        path = path.resolve()
        module = self._modules.get(path)
        if module is None:
            if not path.is_file():
                raise FauxScriptError(f"faux factory file not found: {str(path)!r} (from {spec!r})")
            module_spec = importlib.util.spec_from_file_location(
                f"tau_faux_factory_{len(self._modules)}", path
            )
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            self._modules[path] = module
        func = getattr(module, func_name, None)
        if not callable(func):
            raise FauxScriptError(f"faux factory {spec!r}: {str(path)!r} has no function {func_name!r}")
        return func


def _factory_request(context: TranscriptContext, memo: MessageMemo | None = None) -> dict[str, Any]:
    """The request a ``factory`` step is given: plain JSON it may keep or change freely.

    With ``memo`` (refreshed with this request's messages) each message's copy is kept between the
    calls of a run while the message and the copy are unchanged: a long run's factory calls do not
    copy the whole context each time.
    """
    messages = context["messages"]
    copies = memo.column("factory") if memo is not None else [json_copy(m) for m in messages]
    return {
        "systemPrompt": current_system_prompt(messages),
        "messages": [copy for copy in copies if copy.get("role") != "system"],
        "tools": json_copy(current_tools(messages)),
    }


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]


async def _stream_message(builder: MessageBuilder, message: dict[str, Any], options: StreamOptions) -> None:
    """Replay a finished message as pi's faux does: start, each block in 16-character deltas, the end."""
    signal = options.signal

    def aborted() -> bool:
        if signal is not None and signal.aborted:
            builder.abort()
            return True
        return False

    if aborted():
        return
    builder.start()
    for block in message["content"]:
        if aborted():
            return
        kind = block["type"]
        if kind == "toolCall":
            extra = {k: v for k, v in block.items() if k not in ("type", "id", "name", "arguments")}
            index = builder.toolcall_start(block["id"], block["name"], **extra)
            pieces, delta = _chunks(jsjson.dumps_str(block["arguments"])), builder.toolcall_delta
        elif kind == "thinking":
            index = builder.thinking_start(
                **{k: v for k, v in block.items() if k not in ("type", "thinking")}
            )
            pieces, delta = _chunks(block["thinking"]), builder.thinking_delta
        else:
            index = builder.text_start(**{k: v for k, v in block.items() if k not in ("type", "text")})
            pieces, delta = _chunks(block.get("text", "")), builder.text_delta
        for number, piece in enumerate(pieces):
            if number < EAGER_DELTAS or number % DELTA_BATCH == 0:
                await asyncio.sleep(0)
            if aborted():
                return
            delta(index, piece)
        if kind == "toolCall":
            builder.toolcall_end(index, arguments=block["arguments"])
        else:
            builder.end_block(index)
    builder.finish(message["stopReason"])


# -- whose script ----------------------------------------------------------------------------

Script = str | os.PathLike[str] | Iterable[Step] | FauxProvider


def provider_for(script: Script) -> FauxProvider:
    """A provider of its own for ``script``: a file (checked now), a list of steps, or a provider as is.

    Give it to one registry (``ModelRegistry(faux=...)``) and only that registry's calls take its steps.
    """
    if isinstance(script, FauxProvider):
        return script
    if isinstance(script, str | os.PathLike):
        return FauxProvider.from_file(script)
    return FauxProvider(script)


def stream(
    model: Model, context: TranscriptContext, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """The api's entry point for a call made without a provider: it fails, saying where a script goes.

    faux has no script of the process: a :class:`~tau.llm.registry.ModelRegistry` answers from its
    own provider (given, or ``$TAU_FAUX_SCRIPT`` read when it is first asked), and code without a
    registry calls a provider's :meth:`FauxProvider.stream` (``provider_for(script).stream``).
    """
    out = AssistantMessageEventStream()
    MessageBuilder(model, out).fail(NO_PROVIDER)
    return out
