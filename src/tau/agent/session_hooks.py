"""The seam between the run-time session (agent layer) and the extension runner (extension layer).

``AgentSession`` calls these methods at the points where pi 1.6's ``AgentSession`` calls its
``ExtensionRunner`` (pi-host §4, §5.4). The extension layer implements the protocol; the session
never imports it. Payloads are plain dicts with pi's camelCase event fields (``{"type": "tool_call",
"toolCallId": ..., "toolName": ..., "input": ...}``); results are the combined handler result as a
plain dict with pi's keys, or ``None`` for "no change". The runner turns payloads into the event
dataclasses handlers receive, and applies each event's result semantics (chaining, first block wins,
cancel) before answering.

Contract for implementers: never raise. A failing handler is reported through ``emit_error`` and
the run goes on, except for ``tool_call``, where a failure blocks the call (the runner answers
``{"block": True, "reason": <error text>}``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

__all__ = ["BuildBoundaryContext", "NoHooks", "SessionHooks"]

# Given the drafts proposed so far, returns the preview context pi calls BoundaryContextPreview:
# {"contextEntries", "contextMessages", "llmMessages", "pendingMessages", "canContinue", ...}.
# Raises ValueError for an invalid draft (the runner reports it and marks the result invalid).
BuildBoundaryContext = Callable[[list[dict[str, Any]]], Awaitable[dict[str, Any]]]


class SessionHooks(Protocol):
    """What the session asks of the extension layer."""

    def has_handlers(self, event_type: str) -> bool:
        """Whether any extension listens to ``event_type`` (lets the session skip building payloads)."""
        ...

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Notification and ``session_before_*`` events (``event["type"]`` names it).

        For ``session_before_switch|fork|compact|tree`` the answer is the last handler result, and the
        first ``{"cancel": True}`` stops the chain. Other events answer ``None``.
        """
        ...

    async def emit_input(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``input``: ``{"action": "continue"|"transform"|"handled", "text"?, "images"?}`` after chaining."""
        ...

    async def emit_before_agent_start(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``before_agent_start``: ``{"messages": [...custom messages...], "systemPrompt"?: str}``."""
        ...

    async def emit_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``context``: handlers may edit the messages in place or return a new list (chained)."""
        ...

    async def emit_before_provider_request(self, payload: Any) -> Any:
        """``before_provider_request``: the (possibly replaced) provider payload."""
        ...

    async def emit_tool_call(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``tool_call``: ``{"block": True, "reason": ...}`` from the first blocking handler, else ``None``."""
        ...

    async def emit_tool_result(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``tool_result``: chained ``{"content"?, "details"?, "isError"?}`` overrides."""
        ...

    async def emit_message_end(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``message_end``: an optional replacement message ``{"message": ...}``."""
        ...

    async def emit_boundary(
        self, event: dict[str, Any], build_context: BuildBoundaryContext
    ) -> dict[str, Any]:
        """``turn_end`` / ``agent_before_settle`` (pi's ``emitBoundary``).

        Each handler sees ``entries``, ``continue`` and a ``context`` rebuilt from the drafts so far;
        a returned ``entries``/``continue`` replaces that field. Answers
        ``{"entries": [...], "continue": bool, "context": ..., "valid": bool}``; ``valid`` is false when
        the last ``build_context`` raised (then ``entries`` is empty and ``continue`` false).
        """
        ...

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        """Report a failure of an extension (``{"type": "extension_error", ...}`` on the streams)."""
        ...


class NoHooks:
    """The session without extensions: every event passes through unchanged."""

    def has_handlers(self, event_type: str) -> bool:
        return False

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_input(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_before_agent_start(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages

    async def emit_before_provider_request(self, payload: Any) -> Any:
        return payload

    async def emit_tool_call(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_tool_result(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_message_end(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def emit_boundary(
        self, event: dict[str, Any], build_context: BuildBoundaryContext
    ) -> dict[str, Any]:
        context = await build_context([])
        return {"entries": [], "continue": False, "context": context, "valid": True}

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        return None
