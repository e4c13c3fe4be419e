"""Where the session's events go: the extension hooks, then the subscribed listeners.

Every collaborator of the session that announces something holds the one :class:`EventBus`; the
hooks are bound late (the extension runner is built after the session), so they are read from the
bus at each event, never kept.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from typing import Any

from tau.agent.session_hooks import NoHooks, SessionHooks

__all__ = ["EventBus", "SessionListener"]

SessionListener = Callable[[dict[str, Any]], Any]


class EventBus:
    """The session's listeners and extension hooks, and the tasks their async answers run in."""

    def __init__(self, hooks: SessionHooks | None = None) -> None:
        self.hooks: SessionHooks = hooks or NoHooks()
        self._listeners: list[SessionListener] = []
        self._tasks: set[asyncio.Future[Any]] = set()

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every session event; returns an unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: dict[str, Any]) -> None:
        """Hand ``event`` to every listener; an async listener runs as a task."""
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                self.keep(asyncio.ensure_future(result))

    def keep(self, task: asyncio.Future[Any]) -> None:
        """Hold ``task`` until it is done (the loop holds tasks weakly)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` as a task of the running loop, held until done."""
        self.keep(asyncio.get_running_loop().create_task(coroutine))

    async def emit_hook(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """``event`` to the extensions (when any listens); their answer."""
        if not self.hooks.has_handlers(event["type"]):
            return None
        return await self.hooks.emit(event)

    def schedule_hook(self, event: dict[str, Any]) -> None:
        """``event`` to the extensions without waiting (from synchronous code)."""
        if not self.hooks.has_handlers(event["type"]):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: called from synchronous setup code
            asyncio.run(self.hooks.emit(event))
            return
        self.keep(loop.create_task(self.hooks.emit(event)))

    def announce(self, event: dict[str, Any]) -> None:
        """``event`` to the listeners, then to the extensions without waiting."""
        self.emit(event)
        self.schedule_hook(event)

    def emit_error(self, extension: str, event_type: str, error: str) -> None:
        self.hooks.emit_error(extension, event_type, error)
