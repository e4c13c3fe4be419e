"""The overlay host: shows components (``ctx.ui.custom``, dialogs, ``/tree``) that own the keyboard.

The top component gets every key (raw data) and bracketed paste until it calls ``done(result)``;
``show`` returns that result. Its lines are sanitized (SGR styling kept) and a failing component
is closed with ``None`` rather than breaking the screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tau.modes.interactive.sanitize import sanitize_styled_line

__all__ = ["OverlayHost"]


class OverlayHost:
    """A stack of overlay components; the top one is shown and owns input.

    Args:
        request_render: Asks the view for a new frame.
        on_error: Told about a component that raised (``(component, exception)``).
    """

    def __init__(
        self,
        request_render: Callable[[], None] | None = None,
        on_error: Callable[[Any, BaseException], None] | None = None,
    ) -> None:
        self._request_render = request_render or (lambda: None)
        self._on_error = on_error or (lambda component, exc: None)
        self._stack: list[tuple[Any, asyncio.Future[Any]]] = []

    @property
    def active(self) -> Any:
        """The component that owns the keyboard, or ``None``."""
        return self._stack[-1][0] if self._stack else None

    async def show(self, component: Any) -> Any:
        """Show ``component`` until it calls ``done(result)``; returns ``result``."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(result: Any = None) -> None:
            if not future.done():
                future.set_result(result)
            self._remove(component)

        self._bind(component, done)
        self._stack.append((component, future))
        self._request_render()
        try:
            return await future
        finally:
            self._remove(component)

    def _bind(self, component: Any, done: Callable[..., None]) -> None:
        bind = getattr(component, "bind", None)
        if callable(bind):
            bind(self._request_render, done)
        else:
            component.request_render = self._request_render
            component.done = done

    def _remove(self, component: Any) -> None:
        before = len(self._stack)
        self._stack = [item for item in self._stack if item[0] is not component]
        if len(self._stack) != before:
            self._request_render()

    def close_all(self) -> None:
        """Close every overlay with ``None`` (shutdown, session switch)."""
        for _component, future in reversed(self._stack):
            if not future.done():
                future.set_result(None)
        self._stack.clear()
        self._request_render()

    def _fail(self, component: Any, exc: BaseException) -> None:
        for item, future in self._stack:
            if item is component and not future.done():
                future.set_result(None)
        self._remove(component)
        self._on_error(component, exc)

    def feed(self, data: str) -> bool:
        """Give raw key data to the top component; ``False`` when no overlay is shown."""
        component = self.active
        if component is None:
            return False
        try:
            component.handle_input(data)
        except Exception as exc:  # boundary: a broken component closes, the app goes on
            self._fail(component, exc)
        return True

    def paste(self, text: str) -> bool:
        """Give a bracketed paste to the top component; ``False`` when no overlay is shown."""
        component = self.active
        if component is None:
            return False
        handler = getattr(component, "handle_paste", None)
        try:
            if handler is not None:
                handler(text)
        except Exception as exc:  # boundary: as in feed
            self._fail(component, exc)
        return True

    def lines(self, width: int) -> list[str]:
        """The top component's lines, sanitized, or ``[]``."""
        component = self.active
        if component is None:
            return []
        try:
            lines = component.render(width)
        except Exception as exc:  # boundary: as in feed
            self._fail(component, exc)
            return []
        return [sanitize_styled_line(str(line)) for line in lines or []]
