"""The render model of the interactive mode: what the screen shows, built from session events.

:class:`ChatController` consumes the session's public events (the same stream the JSON and RPC
modes write) and keeps a list of blocks (user prompts, assistant answers, tool rows, notices)
plus the footer state. Blocks that are finished, in order from the top, are *committed*: the view
prints them once into the terminal's scrollback (:meth:`ChatController.take_committed`); the rest
stay in the live area above the editor and are redrawn as they change. Nothing here touches a
terminal, so tests assert on it directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field
from typing import Any, Literal

from tau.bundled.todo_loop.marker import MARKER_TYPE
from tau.common.dataclass import dataclass
from tau.modes.interactive.sanitize import sanitize_text

__all__ = [
    "CONTINUED",
    "AssistantBlock",
    "Block",
    "ChatController",
    "CustomBlock",
    "FooterState",
    "NoticeBlock",
    "ToolBlock",
    "UserBlock",
    "content_text",
]

ToolStatus = Literal["running", "done", "error"]
# a hidden todo-loop continuation in a resumed history (live, the loop's own notice says more)
CONTINUED = "todo-loop: continued (hidden message)"


def content_text(content: Any) -> str:
    """The text of a message's content (a string, or text blocks; images as ``[image]``)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append(f"[image: {block.get('mimeType', '?')}]")
    return "\n".join(parts)


@dataclass
class UserBlock:
    """A prompt the user (or an extension) sent."""

    text: str
    done: bool = True


@dataclass
class AssistantBlock:
    """An assistant message: streamed text and thinking, then its stop reason."""

    text: str = ""
    thinking: str = ""
    done: bool = False
    stop_reason: str | None = None
    error: str | None = None


@dataclass
class ToolBlock:
    """A row per tool call: name, arguments, status, output (collapsed when long)."""

    call_id: str
    name: str
    args: Any
    status: ToolStatus = "running"
    output: str = ""
    details: Any = None
    result: Any = None
    expanded: bool = False
    previous_details: Any = None  # details of the last successful call of the same tool (a diff base)
    # The row's clock (the controller's, in seconds): set from the call's tool_execution_start, so
    # rows of a loaded history have none; ``duration_ms`` is the duration the tool loop recorded.
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None

    @property
    def done(self) -> bool:
        return self.status != "running"


@dataclass
class NoticeBlock:
    """A line from tau or an extension: ``info``, ``warning``, ``error``, or ``dim`` (``ui.notice``)."""

    text: str
    level: str = "info"
    done: bool = True


@dataclass
class CustomBlock:
    """A displayed custom message, a compaction or a branch summary."""

    label: str
    text: str
    custom_type: str = ""
    message: Any = None
    done: bool = True


Block = UserBlock | AssistantBlock | ToolBlock | NoticeBlock | CustomBlock


@dataclass
class FooterState:
    """What the footer shows: model, context use, session name, extension statuses, queues."""

    model: str = "no model"
    thinking: str = "off"
    context: dict[str, Any] | None = None
    session_name: str | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    widgets: dict[str, list[str]] = field(default_factory=dict)
    steering: list[str] = field(default_factory=list)
    follow_up: list[str] = field(default_factory=list)
    working: bool = False
    working_message: str | None = None


class ChatController:
    """Turns session events into blocks and footer state.

    Args:
        on_change: Called after every change (the view schedules a redraw).
        clock: Seconds of a monotonic clock, for the tool rows' timers (tests give a fake one).
    """

    def __init__(
        self, on_change: Callable[[], None] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self.blocks: list[Block] = []
        self.footer = FooterState()
        self.committed = 0
        self.tools_expanded = False
        self._on_change = on_change or (lambda: None)
        self._tools: dict[str, ToolBlock] = {}
        self._assistant: AssistantBlock | None = None
        self._last_details: dict[str, Any] = {}

    # -- reading ----------------------------------------------------------------------------

    def take_committed(self) -> list[Block]:
        """The finished blocks at the top not yet handed out (the view prints them once)."""
        start = self.committed
        end = start
        while end < len(self.blocks) and self.blocks[end].done:
            end += 1
        self.committed = end
        return self.blocks[start:end]

    def live_blocks(self) -> list[Block]:
        """The blocks still shown in the live area (from the first unfinished one)."""
        return self.blocks[self.committed :]

    def last_tool(self) -> ToolBlock | None:
        return next((b for b in reversed(self.blocks) if isinstance(b, ToolBlock)), None)

    # -- changes from the view --------------------------------------------------------------

    def changed(self) -> None:
        """Tell the view something in the footer changed."""
        self._on_change()

    def add(self, block: Block) -> None:
        self.blocks.append(block)
        self._on_change()

    def notice(self, text: str, level: str = "info") -> None:
        self.add(NoticeBlock(sanitize_text(text), level))

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self.footer.statuses[key] = sanitize_text(text).replace("\n", " ")
        else:
            self.footer.statuses.pop(key, None)
        self._on_change()

    def set_widget(self, key: str, lines: list[str] | None) -> None:
        if lines:
            self.footer.widgets[key] = [sanitize_text(str(line)).replace("\n", " ") for line in lines]
        else:
            self.footer.widgets.pop(key, None)
        self._on_change()

    def set_model(self, model: Any, thinking: str) -> None:
        self.footer.model = f"{model.provider}/{model.id}" if model is not None else "no model"
        self.footer.thinking = thinking
        self._on_change()

    def set_context(self, usage: dict[str, Any] | None) -> None:
        self.footer.context = usage
        self._on_change()

    def reset(self) -> None:
        """Forget the conversation shown (new session, tree navigation): the view reprints history."""
        self.blocks.clear()
        self.committed = 0
        self._tools.clear()
        self._assistant = None
        self._last_details.clear()
        self._on_change()

    def load_messages(self, messages: list[dict[str, Any]]) -> None:
        """Show an existing conversation (a resumed session, a new branch) as finished blocks."""
        for message in messages:
            self._add_message(message)
        for block in self.blocks:
            if isinstance(block, AssistantBlock):
                block.done = True
            if isinstance(block, ToolBlock) and block.status == "running":
                block.status = "error"
        self._on_change()

    def _add_message(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        if role == "assistant":
            self._message_start(message)
            self._message_end(message)
            for part in message.get("content") or []:
                if part.get("type") == "toolCall":
                    self._tool_start(
                        {
                            "toolCallId": part.get("id"),
                            "toolName": part.get("name"),
                            "args": part.get("arguments"),
                        },
                        live=False,
                    )
        elif role == "toolResult":
            self._tool_end(
                {
                    "toolCallId": message.get("toolCallId"),
                    "result": message,
                    "isError": message.get("isError"),
                    "durationMs": message.get("durationMs"),
                }
            )
        elif (
            role == "custom" and message.get("customType") == MARKER_TYPE and not message.get("display", True)
        ):
            # Live, todo-loop's notice shows each continuation; a loaded history keeps only its marker.
            self.blocks.append(NoticeBlock(CONTINUED, "dim"))
        else:
            self._message_start(message)

    def toggle_tools_expanded(self) -> None:
        """Expand or collapse the output of every tool row (pi's Ctrl+O)."""
        self.tools_expanded = not self.tools_expanded
        for block in self.blocks:
            if isinstance(block, ToolBlock):
                block.expanded = self.tools_expanded
        self._on_change()

    # -- session events ---------------------------------------------------------------------

    def handle_event(self, event: dict[str, Any]) -> None:
        """Apply one public session event."""
        handler = _HANDLERS.get(str(event.get("type")))
        if handler is not None:
            handler(self, event)
            self._on_change()

    def _agent_start(self, event: dict[str, Any]) -> None:
        self.footer.working = True

    def _agent_settled(self, event: dict[str, Any]) -> None:
        self.footer.working = False
        self.footer.working_message = None
        for block in self._tools.values():
            if block.status == "running":
                block.status = "error"
                block.output = block.output or "(aborted)"
                block.ended_at = self.clock()
        self._tools.clear()

    def _message_start(self, event_or_message: dict[str, Any]) -> None:
        message = event_or_message.get("message", event_or_message)
        role = message.get("role")
        if role == "user":
            self.blocks.append(UserBlock(sanitize_text(content_text(message.get("content")))))
        elif role == "assistant":
            self._assistant = AssistantBlock()
            self.blocks.append(self._assistant)
            self._fill_assistant(message)
        elif role == "custom" and message.get("display", True):
            label = str(message.get("customType", "custom"))
            text = sanitize_text(content_text(message.get("content")))
            self.blocks.append(CustomBlock(label, text, label, message))
        elif role == "compactionSummary":
            self.blocks.append(CustomBlock("compaction", sanitize_text(str(message.get("summary", "")))))
        elif role == "branchSummary":
            self.blocks.append(CustomBlock("branch summary", sanitize_text(str(message.get("summary", "")))))
        elif role == "bashExecution":
            text = f"$ {message.get('command', '')}\n{message.get('output', '')}"
            self.blocks.append(CustomBlock("bash", sanitize_text(text)))

    def _fill_assistant(self, message: dict[str, Any], block: AssistantBlock | None = None) -> None:
        block = block or self._assistant
        if block is None:
            return
        texts, thoughts = [], []
        for part in message.get("content") or []:
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif part.get("type") == "thinking":
                thoughts.append(str(part.get("thinking", "")))
        block.text = sanitize_text("".join(texts))
        block.thinking = sanitize_text("\n".join(thoughts))

    def _message_update(self, event: dict[str, Any]) -> None:
        self._fill_assistant(event.get("message") or {})

    def _message_end(self, event_or_message: dict[str, Any]) -> None:
        message = event_or_message.get("message", event_or_message)
        if message.get("role") != "assistant" or self._assistant is None:
            return
        block, self._assistant = self._assistant, None
        self._fill_assistant(message, block)
        block.done = True
        block.stop_reason = message.get("stopReason")
        if block.stop_reason in ("error", "aborted"):
            block.error = sanitize_text(str(message.get("errorMessage") or block.stop_reason))

    def _tool_start(self, event: dict[str, Any], *, live: bool = True) -> None:
        if event.get("parentToolCallId"):
            return  # nested calls are part of their parent's row
        call_id = str(event.get("toolCallId"))
        name = str(event.get("toolName"))
        block = ToolBlock(call_id, name, event.get("args"), expanded=self.tools_expanded)
        block.previous_details = self._last_details.get(name)
        if live:  # pi's timer starts when execution starts; a loaded history's calls have no clock
            block.started_at = self.clock()
        self._tools[call_id] = block
        self.blocks.append(block)

    def _tool_update(self, event: dict[str, Any]) -> None:
        block = self._tools.get(str(event.get("toolCallId")))
        partial = event.get("partialResult")
        if block is not None and isinstance(partial, dict):
            block.output = sanitize_text(content_text(partial.get("content")))
            # As pi's renderResult with isPartial: a tool's renderer draws its progress (codemode's
            # nested calls as they run).
            block.result = partial

    def _tool_end(self, event: dict[str, Any]) -> None:
        block = self._tools.pop(str(event.get("toolCallId")), None)
        if block is None:
            return
        result = event.get("result") or {}
        if isinstance(result, dict) and "isError" not in result:
            result = {**result, "isError": bool(event.get("isError"))}  # renderers see the outcome too
        block.result = result
        block.output = sanitize_text(content_text(result.get("content")))
        block.details = result.get("details")
        block.status = "error" if event.get("isError") else "done"
        block.ended_at = self.clock()
        duration = event.get("durationMs")
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
            block.duration_ms = float(duration)
        if block.status == "done" and block.details is not None:
            self._last_details[block.name] = block.details

    def _queue_update(self, event: dict[str, Any]) -> None:
        self.footer.steering = [sanitize_text(t) for t in event.get("steering") or []]
        self.footer.follow_up = [sanitize_text(t) for t in event.get("followUp") or []]

    def _compaction_start(self, event: dict[str, Any]) -> None:
        self.footer.working_message = "Compacting context…"

    def _compaction_end(self, event: dict[str, Any]) -> None:
        self.footer.working_message = None
        if event.get("aborted"):
            self.blocks.append(NoticeBlock("Compaction cancelled", "warning"))
        elif event.get("errorMessage"):
            self.blocks.append(NoticeBlock(sanitize_text(str(event["errorMessage"])), "error"))
        elif event.get("result"):
            before = (event["result"] or {}).get("tokensBefore")
            text = (
                f"Compacted context ({before:,} tokens before)"
                if isinstance(before, int)
                else "Compacted context"
            )
            self.blocks.append(NoticeBlock(text))

    def _retry_start(self, event: dict[str, Any]) -> None:
        attempt, most = event.get("attempt"), event.get("maxAttempts")
        error = sanitize_text(str(event.get("errorMessage", "")))
        wait = _seconds(event.get("delayMs"))
        self.blocks.append(NoticeBlock(f"Retrying ({attempt}/{most}) in {wait}: {error}", "warning"))
        self.footer.working_message = f"Retrying ({attempt}/{most}) in {wait}…"

    def _retry_end(self, event: dict[str, Any]) -> None:
        self.footer.working_message = None
        if not event.get("success"):
            # pi's words: the retries gave up, and why.
            error = sanitize_text(str(event.get("finalError") or "Unknown error"))
            self.blocks.append(
                NoticeBlock(f"Retry failed after {event.get('attempt')} attempts: {error}", "error")
            )

    def _extension_error(self, event: dict[str, Any]) -> None:
        text = f"Extension error ({event.get('extensionPath')}): {event.get('error')}"
        self.blocks.append(NoticeBlock(sanitize_text(text), "error"))

    def _session_info(self, event: dict[str, Any]) -> None:
        name = event.get("name")
        self.footer.session_name = sanitize_text(str(name)).replace("\n", " ") if name else None

    def _thinking(self, event: dict[str, Any]) -> None:
        self.footer.thinking = str(event.get("level", self.footer.thinking))


def _seconds(delay_ms: Any) -> str:
    """A retry's wait as a person reads it: ``2s``, ``0.5s``, ``1m 30s``."""
    if not isinstance(delay_ms, int | float) or delay_ms < 0:
        return "a moment"
    seconds = delay_ms / 1000
    if seconds < 10:
        return f"{seconds:.1f}".rstrip("0").rstrip(".") + "s"
    whole = round(seconds)
    return f"{whole // 60}m {whole % 60}s" if whole >= 60 else f"{whole}s"


_HANDLERS: dict[str, Callable[[ChatController, dict[str, Any]], None]] = {
    "agent_start": ChatController._agent_start,
    "agent_settled": ChatController._agent_settled,
    "message_start": ChatController._message_start,
    "message_update": ChatController._message_update,
    "message_end": ChatController._message_end,
    "tool_execution_start": ChatController._tool_start,
    "tool_execution_update": ChatController._tool_update,
    "tool_execution_end": ChatController._tool_end,
    "queue_update": ChatController._queue_update,
    "compaction_start": ChatController._compaction_start,
    "compaction_end": ChatController._compaction_end,
    "auto_retry_start": ChatController._retry_start,
    "auto_retry_end": ChatController._retry_end,
    "extension_error": ChatController._extension_error,
    "session_info_changed": ChatController._session_info,
    "thinking_level_changed": ChatController._thinking,
}
