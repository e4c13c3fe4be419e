"""How each event's handlers run and how their results combine (the :class:`SessionHooks` half of the runner).

Handlers run in extension load order, then in registration order; each may be ``def`` or
``async def``. Result semantics follow pi 1.6 (pi-host §5.4): chains (``context``, ``tool_result``,
``input``, ``before_provider_request``, ``message_end``), the first block (``tool_call``),
cancellation (``session_before_*``), boundaries (``turn_end``, ``agent_before_settle``). A raising
handler is reported with its extension and event and the others still run; a raising ``tool_call``
handler blocks the call with its message instead.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.agent.hooks import resolve
from tau.extension.context_copies import ContextCopies
from tau.extension.events import ContextEvent, event_from_payload
from tau.extension.registry import Extension, Handler
from tau.extension.tracked import WatchedList
from tau.llm.messages import plain
from tau.llm.transcript import current_system_message

if TYPE_CHECKING:
    from tau.extension.context import ExtensionContext

__all__ = ["HookDispatch", "error_text"]

_SESSION_BEFORE = frozenset(
    {"session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"}
)


def error_text(exc: BaseException) -> str:
    """What a failure report says: the exception's message, or its type when it has none."""
    return str(exc) or type(exc).__name__


def _same_messages(left: list[Any], right: list[Any]) -> bool:
    return len(left) == len(right) and all(map(operator.is_, left, right))


class HookDispatch:
    """The emit methods of :class:`~tau.extension.runner.ExtensionRunner`."""

    extensions: list[Extension]
    context_head_rebuilt: bool
    context_copies: ContextCopies

    def create_context(self) -> ExtensionContext:
        raise NotImplementedError

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        raise NotImplementedError

    # -- handlers ------------------------------------------------------------------------------

    def add_handler(self, extension: Extension, event_type: str, handler: Handler) -> Callable[[], None]:
        handlers = extension.handlers.setdefault(event_type, [])
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def has_handlers(self, event_type: str) -> bool:
        return any(ext.handlers.get(event_type) for ext in self.extensions)

    def _snapshot(self, event_type: str) -> list[tuple[Extension, list[Handler]]]:
        return [(ext, list(ext.handlers.get(event_type, ()))) for ext in self.extensions]

    async def _call(self, handler: Handler, event: Any, ctx: Any) -> Any:
        return await resolve(handler(event, ctx))

    # -- SessionHooks --------------------------------------------------------------------------

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Notification events, ``session_before_*`` (cancel short-circuits, last result wins),
        ``cache_warming_decision`` (``{"action"}``, last wins) and ``resources_discover`` (combined paths)."""
        event_type = event.get("type", "")
        if event_type == "resources_discover":
            return await self._emit_resources_discover(event)
        ctx = self.create_context()
        typed = event_from_payload(event)
        result: dict[str, Any] | None = None
        for ext, handlers in self._snapshot(event_type):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, event_type, error_text(exc))
                    continue
                if event_type in _SESSION_BEFORE and answer:
                    result = answer
                    if answer.get("cancel"):
                        return answer
                elif event_type == "cache_warming_decision" and answer and answer.get("action") is not None:
                    result = {"action": answer["action"]}
        if event_type == "session_start":
            self.report_unhandled_mcp_servers()
        return result

    def report_unhandled_mcp_servers(self) -> None:
        raise NotImplementedError

    async def _emit_resources_discover(self, event: dict[str, Any]) -> dict[str, Any]:
        ctx = self.create_context()
        typed = event_from_payload(event)
        found: dict[str, list[dict[str, str]]] = {"skillPaths": [], "promptPaths": [], "themePaths": []}
        for ext, handlers in self._snapshot("resources_discover"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx) or {}
                except Exception as exc:
                    self.emit_error(ext.path, "resources_discover", error_text(exc))
                    continue
                for key, paths in found.items():
                    paths.extend({"path": path, "extensionPath": ext.path} for path in answer.get(key) or ())
        return found

    async def emit_input(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Transforms chain; the first ``handled`` stops. Answers ``continue`` or the final ``transform``."""
        ctx = self.create_context()
        text, images = event.get("text", ""), event.get("images")
        for ext, handlers in self._snapshot("input"):
            for handler in handlers:
                typed = event_from_payload({**event, "text": text, "images": images})
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "input", error_text(exc))
                    continue
                action = (answer or {}).get("action")
                if action == "handled":
                    return answer
                if action == "transform":
                    text = answer.get("text", text)
                    images = answer.get("images") or images
        if text != event.get("text", "") or images is not event.get("images"):
            return {"action": "transform", "text": text, "images": images}
        return {"action": "continue"}

    async def emit_before_agent_start(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Collects ``message`` results; a ``systemPrompt`` result replaces the prompt that later handlers see."""
        ctx = self.create_context()
        messages: list[dict[str, Any]] = []
        system_prompt: str | None = None
        current = dict(event)
        for ext, handlers in self._snapshot("before_agent_start"):
            for handler in handlers:
                typed = event_from_payload(current)
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "before_agent_start", error_text(exc))
                    continue
                if not answer:
                    continue
                if answer.get("message"):
                    messages.append(answer["message"])
                if answer.get("systemPrompt") is not None:
                    system_prompt = answer["systemPrompt"]
                    current["systemPrompt"] = system_prompt
        result: dict[str, Any] = {"messages": messages}
        if system_prompt is not None:
            result["systemPrompt"] = system_prompt
        return result

    async def emit_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``context`` then ``context_with_system`` (pi's ``emitContext``); returns what the request sends.

        ``context`` handlers see editable copies without system messages (``context_copies``). When
        no handler replaced that list (in-place edits only), the system messages stay where they were;
        when one did, the request head is rebuilt: ``[current system message] + returned`` (pi-host §5.5). Without
        handlers the given list comes back as it is.
        """
        self.context_head_rebuilt = False
        if not self.has_handlers("context") and not self.has_handlers("context_with_system"):
            return messages
        ctx = self.create_context()
        current = self.context_copies.copy(messages)
        step = 0
        # While no handler replaced the list, the next one sees the same messages: the view handed
        # to the previous handler as it was before that handler ran (a role never changes in place).
        # Each handler gets a watched copy of it, which tells whether the handler changed the list.
        seen: tuple[list[Any] | None, list[Any]] = (None, [])
        for ext, handlers in self._snapshot("context"):
            for handler in handlers:
                given = seen[1] if seen[0] is current else self.context_copies.visible(step, current)
                visible = WatchedList(given)
                step += 1
                seen = (current, given)
                payload = {"type": "context", "messages": visible}
                event = ContextEvent(messages=visible, changes=self.context_copies.changes, raw=payload)
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "context", error_text(exc))
                    continue
                returned = (answer or {}).get("messages")
                if returned is None:
                    returned = visible if visible.changed else None
                if returned is None or (returned is visible and not visible.changed):
                    continue
                if _same_messages(returned, given):
                    continue
                head = current_system_message(current)
                current = [plain(head), *returned] if head else list(returned)
                self.context_head_rebuilt = True
        return await self._emit_context_with_system(current, ctx)

    async def _emit_context_with_system(
        self, current: list[dict[str, Any]], ctx: Any
    ) -> list[dict[str, Any]]:
        for ext, handlers in self._snapshot("context_with_system"):
            for handler in handlers:
                had_head = bool(current) and current[0].get("role") == "system"
                event = event_from_payload({"type": "context_with_system", "messages": current})
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "context_with_system", error_text(exc))
                    continue
                current = (answer or {}).get("messages") or current
                if had_head and (not current or current[0].get("role") != "system"):
                    self.emit_error(
                        ext.path,
                        "context_with_system",
                        "Handler removed the leading system message; the request has no prompt or initial "
                        "tool declarations. Keep it at index 0.",
                    )
        return current

    async def emit_before_provider_request(self, payload: Any) -> Any:
        """Any non-``None`` answer replaces the payload; later handlers see the replacement."""
        ctx = self.create_context()
        for ext, handlers in self._snapshot("before_provider_request"):
            for handler in handlers:
                event = event_from_payload({"type": "before_provider_request", "payload": payload})
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "before_provider_request", error_text(exc))
                    continue
                if answer is not None:
                    payload = answer
        return payload

    async def emit_tool_call(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The first ``{"block": True}`` wins; a raising handler blocks the call with its message."""
        ctx = self.create_context()
        typed = event_from_payload(event)
        for _ext, handlers in self._snapshot("tool_call"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                except Exception as exc:  # pi: the error becomes the blocked call's result
                    return {"block": True, "reason": error_text(exc)}
                if answer and answer.get("block"):
                    return answer
        return None

    async def emit_tool_result(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Partial patches chain; new ``content`` without ``structuredContent`` drops the structured content."""
        ctx = self.create_context()
        current = dict(event)
        modified = False
        for ext, handlers in self._snapshot("tool_result"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event_from_payload(current), ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "tool_result", error_text(exc))
                    continue
                if answer:
                    modified = self._patch_tool_result(current, answer) or modified
        if not modified:
            return None
        keys = ("content", "details", "structuredContent", "isError", "usage")
        return {key: current[key] for key in keys if key in current}

    @staticmethod
    def _patch_tool_result(current: dict[str, Any], answer: dict[str, Any]) -> bool:
        changed = False
        if answer.get("content") is not None:
            current["content"] = answer["content"]
            if answer.get("structuredContent") is None:
                current.pop("structuredContent", None)
            changed = True
        for key in ("details", "structuredContent", "isError", "usage"):
            if answer.get(key) is not None:
                current[key] = answer[key]
                changed = True
        return changed

    async def emit_message_end(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Replacements chain; one with another ``role`` is reported and ignored."""
        ctx = self.create_context()
        message = event.get("message") or {}
        modified = False
        for ext, handlers in self._snapshot("message_end"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event_from_payload({**event, "message": message}), ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "message_end", error_text(exc))
                    continue
                replacement = (answer or {}).get("message")
                if not replacement:
                    continue
                if replacement.get("role") != message.get("role"):
                    self.emit_error(
                        ext.path,
                        "message_end",
                        "message_end handlers must return a message with the same role",
                    )
                    continue
                message, modified = replacement, True
        return {"message": message} if modified else None

    async def emit_boundary(self, event: dict[str, Any], build_context: Any) -> dict[str, Any]:
        """``turn_end`` / ``agent_before_settle``: drafts and ``continue`` chain, the context is rebuilt after each handler."""
        event_type = event.get("type", "")
        ctx = self.create_context()
        entries: list[dict[str, Any]] = []
        should_continue = False
        context = await build_context(entries)
        valid = True
        for ext, handlers in self._snapshot(event_type):
            for handler in handlers:
                payload = {**event, "entries": entries, "continue": should_continue, "context": context}
                try:
                    answer = await self._call(handler, event_from_payload(payload), ctx) or {}
                    if answer.get("entries") is not None:
                        entries = list(answer["entries"])
                    if answer.get("continue") is not None:
                        should_continue = bool(answer["continue"])
                except Exception as exc:
                    self.emit_error(ext.path, event_type, error_text(exc))
                try:
                    context = await build_context(entries)
                    valid = True
                except Exception as exc:
                    valid = False
                    self.emit_error(ext.path, event_type, f"Invalid boundary entries: {error_text(exc)}")
        if not valid:
            return {"entries": [], "continue": False, "context": context, "valid": False}
        return {"entries": entries, "continue": should_continue, "context": context, "valid": True}

    # -- events outside the SessionHooks seam -----------------------------------------------

    async def emit_project_trust(self, cwd: str) -> dict[str, Any] | None:
        """``project_trust``: the first ``yes``/``no`` answer wins (``undecided`` falls through)."""
        ctx = self.create_context()
        event = event_from_payload({"type": "project_trust", "cwd": cwd})
        for ext, handlers in self._snapshot("project_trust"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, event, ctx)
                except Exception as exc:
                    self.emit_error(ext.path, "project_trust", error_text(exc))
                    continue
                if answer and answer.get("trusted") in ("yes", "no"):
                    return answer
        return None

    async def emit_user_bash(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``user_bash``: the first ``{"operations"}`` or ``{"result"}`` wins; a handler error is reported and re-raised."""
        ctx = self.create_context()
        typed = event_from_payload(event)
        for ext, handlers in self._snapshot("user_bash"):
            for handler in handlers:
                try:
                    answer = await self._call(handler, typed, ctx)
                    if answer is None:
                        continue
                    if not isinstance(answer, dict) or ("operations" in answer) == ("result" in answer):
                        raise ValueError(
                            "Invalid user_bash handler result: return None for local execution or exactly one "
                            "valid {operations} or {result} dict"
                        )
                    return answer
                except Exception as exc:
                    self.emit_error(ext.path, "user_bash", error_text(exc))
                    raise
        return None
