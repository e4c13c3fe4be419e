"""``ctx.ui``: what an extension may ask of the user interface, and the non-interactive versions.

Each mode supplies an :class:`ExtensionUI`. Outside the interactive and RPC modes nobody can answer:
dialogs resolve at once (``None`` / ``False``), ``custom()`` returns ``None``, and notifications go
to stderr in print mode and nowhere in JSON mode (decisions.md, "Modes and UI").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, TextIO

__all__ = ["ExtensionUI", "NoUI", "PrintUI", "ui_for_mode"]


class ExtensionUI(Protocol):
    """The UI an extension talks to (pi's ``ExtensionUIContext``, snake_case).

    Dialogs are coroutines; the rest return at once. ``custom(component)`` shows an overlay that owns
    the keyboard until the component calls ``done(result)``; it returns that result (interactive mode
    only, ``None`` elsewhere). The component has ``render(width) -> list[str]``,
    ``handle_input(data)``, ``handle_paste(text)``, and is given ``request_render()`` and ``done()``.
    """

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool: ...

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None: ...

    async def editor(self, title: str, prefill: str | None = None) -> str | None: ...

    async def custom(self, component: Any, **options: Any) -> Any: ...

    def notify(self, message: str, type: str = "info") -> None: ...

    def set_status(self, key: str, text: str | None = None) -> None: ...

    def set_widget(
        self, key: str, lines: list[str] | Callable[..., Any] | None, *, placement: str | None = None
    ) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...

    def paste_to_editor(self, text: str) -> None: ...

    def set_working_message(self, message: str | None = None) -> None: ...


class NoUI:
    """No user interface (JSON mode, tests): every call is a no-op, dialogs answer nothing at once."""

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return False

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return None

    async def custom(self, component: Any, **options: Any) -> Any:
        return None

    def notify(self, message: str, type: str = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_widget(self, key: str, lines: Any, *, placement: str | None = None) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    def paste_to_editor(self, text: str) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None


_PREFIXES = {"info": "", "warning": "Warning: ", "error": "Error: "}


class PrintUI(NoUI):
    """Print mode: notifications are written to stderr, one line each (``Warning: …``, ``Error: …``)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def notify(self, message: str, type: str = "info") -> None:
        stream = self._stream or sys.stderr
        stream.write(f"{_PREFIXES.get(type, '')}{message}\n")
        stream.flush()


def ui_for_mode(mode: str) -> ExtensionUI:
    """The non-interactive UI of ``mode`` (``print`` or ``json``); other modes bring their own."""
    return PrintUI() if mode == "print" else NoUI()
