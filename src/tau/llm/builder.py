"""Build one assistant message while a provider streams it, emitting pi's event protocol.

Every provider adapter drives a :class:`MessageBuilder`: it owns the partial ``AssistantMessage``,
turns "a text block started / grew / ended" into pi-ai's ``AssistantMessageEvent``s, and finishes
with exactly one ``done`` or ``error`` event, so the contract of :mod:`tau.llm.stream` (never raise,
always end) holds however the adapter fails.

Event shapes (pi-ai ``AssistantMessageEvent``)::

    {"type": "start", "partial"}
    {"type": "text_start" | "thinking_start" | "toolcall_start", "contentIndex", "partial"}
    {"type": "text_delta" | "thinking_delta" | "toolcall_delta", "contentIndex", "delta", "partial"}
    {"type": "text_end" | "thinking_end", "contentIndex", "content", "partial"}
    {"type": "toolcall_end", "contentIndex", "toolCall", "partial"}
    {"type": "done", "reason", "message"}
    {"type": "error", "reason": "error" | "aborted", "error"}

``partial`` is the message at that event, as pi's ``{ ...partial }``: the top-level dict, its usage and
the content list are copied, text and thinking blocks are shared; a tool call being streamed is
copied (with ``parallel_blocks``, every open tool call: its arguments are small). A text or thinking
block that is still streaming keeps growing after the event, as pi's partials do, so a consumer that
wants the text at an event reads it then; the text grows in place, in time linear in its size (a
copy per delta would be quadratic: a 20 MB answer is 1.3 million 16-character deltas).

Streamed tool-call arguments are JSON text: while they arrive, ``arguments`` holds the value of the
text so far (:func:`parse_streaming_json`); at the end the whole text is parsed once
(:func:`parse_tool_call_arguments`), and malformed text gives ``arguments: {}`` plus
``argumentsError``, which tool validation reports back to the model.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

from tau.common.jsstr import ms_now
from tau.llm.cost import calculate_cost
from tau.llm.partial_json import (
    ToolArgumentsStream,
    parse_streaming_json,
    parse_tool_call_arguments,
    repair_json,
)
from tau.llm.stream import AssistantMessageEventStream
from tau.llm.types import (
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    empty_usage,
)

__all__ = [
    "ABORTED_MESSAGE",
    "SIGNAL_ABORTED_MESSAGE",
    "MessageBuilder",
    "ToolArgumentsStream",
    "aborted_before_request",
    "parse_streaming_json",
    "parse_tool_call_arguments",
    "repair_json",
]

ABORTED_MESSAGE = "Request was aborted"
# What an already-aborted signal throws in Node (``signal.throwIfAborted()``): pi's text for a
# request that was never sent.
SIGNAL_ABORTED_MESSAGE = "This operation was aborted"

_BLOCK_KINDS = {"text": "text", "thinking": "thinking", "toolCall": "toolcall"}


class MessageBuilder:
    """The partial assistant message of one request and the events that describe its growth.

    Typical use in an adapter::

        builder = MessageBuilder(model)          # timestamp = request start
        stream = builder.stream                  # return this to the caller at once
        try:
            ... builder.start(); builder.append_text("Hi"); builder.set_usage(...)
            builder.finish("stop")
        except Exception as exc:                 # the one boundary of the adapter
            builder.fail(exc, aborted=signal.aborted)

    Args:
        model: the model being called (``api``, ``provider``, ``id`` and prices).
        stream: the stream to push into; a new one by default (needs a running event loop).
        api, provider, model_id: override what the message records (faux, custom providers).
        timestamp: the message timestamp in ms; now by default.
        usage: an initial usage record (faux knows its usage before streaming).
        template: a whole message to start from, fields and key order kept (faux replays one).
        started_ms: when the request started, if before now (for ``durationMs``).
    """

    def __init__(
        self,
        model: Model,
        stream: AssistantMessageEventStream | None = None,
        *,
        api: str | None = None,
        provider: str | None = None,
        model_id: str | None = None,
        timestamp: int | None = None,
        usage: Usage | None = None,
        template: Mapping[str, Any] | None = None,
        started_ms: int | None = None,
    ) -> None:
        self.model = model
        self.stream = stream if stream is not None else AssistantMessageEventStream()
        now_ms, now_monotonic = ms_now(), time.monotonic()
        self._started_ms = now_ms if started_ms is None else started_ms
        self._started_monotonic = now_monotonic - max(0, now_ms - self._started_ms) / 1000
        self.message: AssistantMessage = {
            "role": "assistant",
            "content": [],
            "api": api or model.api,
            "provider": provider or model.provider,
            "model": model_id or model.id,
            "usage": usage if usage is not None else empty_usage(),
            "stopReason": "pending",
            "timestamp": timestamp if timestamp is not None else self._started_ms,
        }
        if template is not None:
            # Keep the template's fields and key order (a scripted message), but stream from empty.
            self.message = {**template, "content": [], "stopReason": "pending"}  # type: ignore[typeddict-item]
        self._arguments: dict[int, ToolArgumentsStream] = {}
        # Deltas of open text/thinking blocks not yet joined into the block (only while nobody
        # reads the events: then no snapshot needs the text so far, and ``+=`` per delta would
        # copy the whole text each time).
        self._pieces: dict[int, list[str]] = {}
        self._open: set[int] = set()
        self._current: int | None = None
        self._finished = False
        # Whether several blocks stay open at once (Chat Completions: pi ends every block after
        # the stream); by default a new block ends the current one.
        self.parallel_blocks = False

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """Whether ``done`` or ``error`` has been emitted."""
        return self._finished

    def start(self) -> None:
        """Emit ``start`` (once the provider accepted the request)."""
        self._push({"type": "start", "partial": self._snapshot()})

    def finish(self, stop_reason: StopReason | None = None) -> AssistantMessage:
        """Close open blocks, set ``stopReason`` (default: ``toolUse`` with tool calls, else ``stop``), emit ``done``.

        A stop reason of ``error`` or ``aborted`` ends with an ``error`` event instead, as pi does.
        """
        self.end_open_blocks()
        if stop_reason is None:
            stop_reason = self.message["stopReason"]
        if stop_reason == "pending":
            has_calls = any(block["type"] == "toolCall" for block in self.message["content"])
            stop_reason = "toolUse" if has_calls else "stop"
        if stop_reason == "error":
            return self._end_with_error(
                "error", self.message.get("errorMessage") or "An unknown error occurred"
            )
        if stop_reason == "aborted":
            return self._end_with_error("aborted", self.message.get("errorMessage") or ABORTED_MESSAGE)
        self.message["stopReason"] = stop_reason
        self._time()
        self._push({"type": "done", "reason": stop_reason, "message": self.message})
        return self._end()

    def fail(self, error: BaseException | str, aborted: bool = False) -> AssistantMessage:
        """End with an ``error`` event: ``stopReason`` ``error``, or ``aborted`` with ``Request was aborted``.

        Blocks already streamed stay in the message. Calling it after the end does nothing.
        """
        if aborted:
            return self._end_with_error("aborted", ABORTED_MESSAGE)
        return self._end_with_error("error", _error_text(error))

    def abort(self) -> AssistantMessage:
        """End as aborted (``Request was aborted``)."""
        return self.fail(ABORTED_MESSAGE, aborted=True)

    # -- blocks by index -------------------------------------------------------------------

    def text_start(self, text: str = "", **extra: Any) -> int:
        """Open a text block; returns its ``contentIndex``."""
        return self._open_block({"type": "text", "text": text, **extra})

    def thinking_start(self, thinking: str = "", **extra: Any) -> int:
        """Open a thinking block (``thinkingSignature``, ``redacted`` may be given); returns its index."""
        return self._open_block({"type": "thinking", "thinking": thinking, **extra})

    def toolcall_start(
        self, id: str, name: str, arguments: dict[str, Any] | None = None, **extra: Any
    ) -> int:
        """Open a tool-call block; its arguments then stream as JSON text. Returns its index."""
        block = {"type": "toolCall", "id": id, "name": name, "arguments": arguments or {}, **extra}
        index = self._open_block(block)
        self._arguments[index] = ToolArgumentsStream()
        return index

    def text_delta(self, index: int, delta: str) -> None:
        block = self._block(index, "text")
        if not self.stream.wants_events:
            self._pieces.setdefault(index, []).append(delta)
            return
        _grow(block, "text", delta)
        self._push(
            {"type": "text_delta", "contentIndex": index, "delta": delta, "partial": self._snapshot(index)}
        )

    def thinking_delta(self, index: int, delta: str) -> None:
        block = self._block(index, "thinking")
        if not self.stream.wants_events:
            self._pieces.setdefault(index, []).append(delta)
            return
        _grow(block, "thinking", delta)
        event = {"type": "thinking_delta", "contentIndex": index, "delta": delta}
        self._push({**event, "partial": self._snapshot(index)})

    def thinking_signature(self, index: int, signature: str) -> None:
        """Append to a thinking block's signature (no event, as in pi)."""
        block = self._block(index, "thinking")
        block.setdefault("thinkingSignature", "")
        _grow(block, "thinkingSignature", signature)

    def toolcall_delta(self, index: int, delta: str) -> None:
        """Append a piece of the arguments' JSON text."""
        block = self._block(index, "toolCall")
        block["arguments"] = self._arguments[index].append(delta)
        event = {"type": "toolcall_delta", "contentIndex": index, "delta": delta}
        self._push({**event, "partial": self._snapshot(index)})

    def text_end(self, index: int) -> None:
        block = self._block(index, "text")
        self._close(index)
        event = {"type": "text_end", "contentIndex": index, "content": block["text"]}
        self._push({**event, "partial": self._snapshot(index)})

    def thinking_end(self, index: int) -> None:
        block = self._block(index, "thinking")
        self._close(index)
        event = {"type": "thinking_end", "contentIndex": index, "content": block["thinking"]}
        self._push({**event, "partial": self._snapshot(index)})

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> None:
        """Close a tool call: parse the streamed JSON text, or take ``arguments`` as given."""
        block = self._block(index, "toolCall")
        self._close(index)
        stream = self._arguments.pop(index)
        if arguments is not None:
            block["arguments"] = arguments
            block.pop("argumentsError", None)
        elif stream.text or not block["arguments"]:
            parsed, error = stream.finish()
            block["arguments"] = parsed
            if error is not None:
                block["argumentsError"] = error
        event = {"type": "toolcall_end", "contentIndex": index, "toolCall": block}
        self._push({**event, "partial": self._snapshot(index)})

    def end_block(self, index: int) -> None:
        """Close the block at ``index`` with the end event of its kind."""
        kind = self.message["content"][index]["type"]
        {"text": self.text_end, "thinking": self.thinking_end, "toolCall": self.toolcall_end}[kind](index)

    def end_open_blocks(self) -> None:
        """Close every block still open, in order."""
        for index in sorted(self._open):
            self.end_block(index)

    def keep_open_blocks(self) -> None:
        """Leave the blocks still open as they are, without end events.

        For a stream that never stopped a block (pi's Anthropic adapter closes a block only on its
        ``content_block_stop``): a tool call cut off by the output limit keeps the arguments parsed
        from its partial text, with no ``argumentsError``.
        """
        for index in sorted(self._open):
            block = self.message["content"][index]
            stream = self._arguments.pop(index, None)
            if block["type"] == "toolCall" and stream is not None and stream.text:
                value = parse_streaming_json(stream.text)
                block["arguments"] = value if isinstance(value, dict) else {}
        self._open.clear()
        self._current = None

    # -- the "current block" style of OpenAI-like streams ------------------------------------

    def append_text(self, delta: str) -> int:
        """Append to the current text block, closing another current block first; returns its index."""
        index = self._current_of("text")
        if index is None:
            index = self.text_start()
        self.text_delta(index, delta)
        return index

    def append_thinking(self, delta: str, **extra: Any) -> int:
        """Append to the current thinking block, closing another current block first; returns its index."""
        index = self._current_of("thinking")
        if index is None:
            index = self.thinking_start(**extra)
        self.thinking_delta(index, delta)
        return index

    # -- usage -----------------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        cache_write_1h: int | None = None,
        reasoning: int | None = None,
    ) -> Usage:
        """Update the token counts given (``None`` keeps a count), recompute the total and the cost."""
        usage = self.message["usage"]
        for key, value in (
            ("input", input),
            ("output", output),
            ("cacheRead", cache_read),
            ("cacheWrite", cache_write),
            ("cacheWrite1h", cache_write_1h),
            ("reasoning", reasoning),
        ):
            if value is not None:
                usage[key] = value  # type: ignore[literal-required]
        usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        calculate_cost(self.model, usage)
        return usage

    # -- blocks an adapter completes with what its stream reports late (ids, names, signatures) --

    def text_block(self, index: int) -> TextContent:
        """The text block at ``index`` (``ValueError`` when that block is of another type)."""
        block = self.message["content"][index]
        if block["type"] == "text":
            return block
        raise _other_block(index, block["type"], "text")

    def thinking_block(self, index: int) -> ThinkingContent:
        """The thinking block at ``index`` (``ValueError`` when that block is of another type)."""
        block = self.message["content"][index]
        if block["type"] == "thinking":
            return block
        raise _other_block(index, block["type"], "thinking")

    def tool_call_block(self, index: int) -> ToolCall:
        """The tool call at ``index`` (``ValueError`` when that block is of another type)."""
        block = self.message["content"][index]
        if block["type"] == "toolCall":
            return block
        raise _other_block(index, block["type"], "toolCall")

    # -- internals -------------------------------------------------------------------------

    def _open_block(self, block: dict[str, Any]) -> int:
        if not self.parallel_blocks and self._current is not None and self._current in self._open:
            self.end_block(self._current)
        self.message["content"].append(block)  # type: ignore[arg-type]
        index = len(self.message["content"]) - 1
        self._open.add(index)
        self._current = index
        kind = _BLOCK_KINDS[block["type"]]
        self._push({"type": f"{kind}_start", "contentIndex": index, "partial": self._snapshot(index)})
        return index

    def _current_of(self, block_type: str) -> int | None:
        index = self._current
        if index is None or index not in self._open:
            return None
        if self.message["content"][index]["type"] == block_type:
            return index
        self.end_block(index)
        return None

    def _block(self, index: int, block_type: str) -> dict[str, Any]:
        block: dict[str, Any] = self.message["content"][index]  # type: ignore[assignment]
        if block["type"] != block_type:
            raise _other_block(index, block["type"], block_type)
        return block

    def _join_pieces(self) -> None:
        for index, pieces in self._pieces.items():
            block = self.message["content"][index]
            key = "text" if block["type"] == "text" else "thinking"
            block[key] = block[key] + "".join(pieces)  # type: ignore[literal-required]
        self._pieces.clear()

    def _close(self, index: int) -> None:
        if self._pieces:
            self._join_pieces()
        self._open.discard(index)
        if self._current == index:
            self._current = None

    def _snapshot(self, index: int | None = None) -> AssistantMessage:
        if self._pieces:
            self._join_pieces()
        snapshot: dict[str, Any] = dict(self.message)
        content = list(self.message["content"])
        if index is not None and content[index]["type"] == "toolCall":
            # Small, and its arguments are replaced at each delta: each event keeps its own.
            content[index] = content[index].copy()
        if self.parallel_blocks:
            for open_index in self._open:  # open tool calls change after this event too
                if open_index != index and content[open_index]["type"] == "toolCall":
                    content[open_index] = content[open_index].copy()
        snapshot["content"] = content
        usage = dict(self.message["usage"])
        usage["cost"] = dict(self.message["usage"]["cost"])
        snapshot["usage"] = usage
        return snapshot  # type: ignore[return-value]

    def _time(self) -> None:
        # pi's AssistantMessageEventStream: a message that started before this request stays untimed.
        if "durationMs" in self.message or self.message["timestamp"] < self._started_ms:
            return
        self.message["durationMs"] = max(0, round((time.monotonic() - self._started_monotonic) * 1000))

    def _end_with_error(self, reason: StopReason, text: str) -> AssistantMessage:
        if self._finished:
            return self.message
        if self._pieces:
            self._join_pieces()
        self.message["stopReason"] = reason
        self.message["errorMessage"] = text
        self._time()
        self._push({"type": "error", "reason": reason, "error": self.message})
        return self._end()

    def _push(self, event: dict[str, Any]) -> None:
        if not self._finished:
            self.stream.push(event)

    def _end(self) -> AssistantMessage:
        if self._pieces:
            self._join_pieces()
        self._finished = True
        self.stream.end(self.message)
        return self.message


def aborted_before_request(model: Model, signal: Any) -> AssistantMessageEventStream | None:
    """The ended stream of a request whose ``signal`` is already aborted, else ``None``.

    Providers call it before any work (credentials, SDK import, scripted steps): such a request is
    never sent. The message is pi's for a request that failed before it started: no content, zero
    usage, ``stopReason: "aborted"``, ``This operation was aborted``.
    """
    if signal is None or not signal.aborted:
        return None
    builder = MessageBuilder(model)
    timestamp = builder.message["timestamp"]
    # the same fields with the stop reason replaced, and the timestamp moved last as pi orders it
    aborted: dict[str, Any] = {key: value for key, value in builder.message.items() if key != "timestamp"}
    aborted.update(stopReason="aborted", errorMessage=SIGNAL_ABORTED_MESSAGE, timestamp=timestamp)
    builder.message = cast("AssistantMessage", aborted)
    builder.finish("aborted")
    return builder.stream


def _other_block(index: int, found: str, wanted: str) -> ValueError:
    return ValueError(f"content block {index} is {found!r}, not {wanted!r}")


def _grow(block: dict[str, Any], key: str, delta: str) -> None:
    """``block[key] += delta``, in place when nothing else holds the text.

    CPython appends to a string in place (amortized linear) only while one reference holds it:
    the block's entry is emptied first (its key keeps its place), the local then appends, and the
    grown text goes back. A consumer that kept the old text keeps it; the append then copies.
    """
    text = block[key]
    block[key] = ""
    text += delta
    block[key] = text


def _error_text(error: BaseException | str) -> str:
    if isinstance(error, str):
        return error
    text = str(error) or type(error).__name__
    cause = error.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {cause}"
    return text
