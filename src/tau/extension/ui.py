"""``ctx.ui``: what an extension may ask of the user interface, and the non-interactive versions.

Each mode supplies an :class:`ExtensionUI`. Outside the interactive and RPC modes nobody can answer:
dialogs resolve at once (``None`` / ``False``), ``custom()`` returns ``None``, and notifications go
to stderr in print mode and nowhere in JSON mode (decisions.md, "Modes and UI"). ``notice()`` lines
(what the agent does on its own, such as a hidden continuation) go to stderr in print, JSON and RPC
modes, never to stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, TextIO

__all__ = ["ExtensionUI", "JsonUI", "NoUI", "PrintUI", "PromptTrackingUI", "stderr_notice", "ui_for_mode"]


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

    def notice(self, message: str) -> None:
        """One low-key line about work the agent does on its own (a hidden continuation, a stop):
        dim in the terminal, on stderr in print, JSON and RPC modes; never stdout, never the session."""
        ...

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

    def notice(self, message: str) -> None:
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

    # -- terminal-only calls: no-ops outside the interactive mode (as in pi) -------------------

    def set_working_visible(self, visible: bool) -> None:
        return None

    def set_working_indicator(self, options: Any = None) -> None:
        return None

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        return None

    def set_footer(self, factory: Any) -> None:
        return None

    def set_header(self, factory: Any) -> None:
        return None

    def set_editor_component(self, factory: Any) -> None:
        return None

    def get_editor_component(self) -> Any:
        return None

    def add_autocomplete_provider(self, provider: Any) -> None:
        return None

    def on_terminal_input(self, handler: Any) -> Callable[[], None]:
        return lambda: None

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        return None

    def get_all_themes(self) -> list[Any]:
        return []

    def get_theme(self, name: str) -> Any:
        return None


_PREFIXES = {"info": "", "warning": "Warning: ", "error": "Error: "}


def stderr_notice(message: str, stream: TextIO | None = None) -> None:
    """A :meth:`ExtensionUI.notice` line where there is no terminal view: one line on stderr."""
    target = stream or sys.stderr
    target.write(" ".join(str(message).split()) + "\n")
    target.flush()


class PrintUI(NoUI):
    """Print mode: notifications and notices are written to stderr, one line each (``Warning: …``)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def notify(self, message: str, type: str = "info") -> None:
        stream = self._stream or sys.stderr
        stream.write(f"{_PREFIXES.get(type, '')}{message}\n")
        stream.flush()

    def notice(self, message: str) -> None:
        stderr_notice(message, self._stream)


class JsonUI(NoUI):
    """JSON mode: stdout is the event stream, so notifications go nowhere and notices to stderr."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def notice(self, message: str) -> None:
        stderr_notice(message, self._stream)


class PromptTrackingUI:
    """A mode's UI whose blocking dialogs are announced to extensions (pi's ``withUIPrompt``).

    The outermost dialog emits ``ui_prompt_start`` when it opens and ``ui_prompt_end`` when it
    closes (``{"reason": "ui_prompt", "kind", "title"?}``); nested dialogs add nothing.
    """

    def __init__(self, ui: Any, runner: Any) -> None:
        self._ui = ui
        self._runner = runner
        self._depth = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ui, name)

    def _announce(self, kind: str, title: str | None, phase: str) -> Any:
        event: dict[str, Any] = {"type": f"ui_prompt_{phase}", "reason": "ui_prompt", "kind": kind}
        if title:
            event["title"] = title
        return self._runner.emit(event)

    async def _prompt(self, kind: str, title: str | None, run: Callable[[], Any]) -> Any:
        outer = self._depth == 0
        self._depth += 1
        if outer:
            await self._announce(kind, title, "start")
        try:
            return await run()
        finally:
            self._depth -= 1
            if outer:
                await self._announce(kind, title, "end")

    async def select(self, title: str, options: list[str], **options_: Any) -> str | None:
        return await self._prompt("select", title, lambda: self._ui.select(title, options, **options_))

    async def confirm(self, title: str, message: str, **options: Any) -> bool:
        return await self._prompt("confirm", title, lambda: self._ui.confirm(title, message, **options))

    async def input(self, title: str, placeholder: str | None = None, **options: Any) -> str | None:
        return await self._prompt("input", title, lambda: self._ui.input(title, placeholder, **options))

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return await self._prompt("editor", title, lambda: self._ui.editor(title, prefill))

    async def custom(self, component: Any, **options: Any) -> Any:
        return await self._prompt("custom", None, lambda: self._ui.custom(component, **options))


def ui_for_mode(mode: str) -> ExtensionUI:
    """The non-interactive UI of ``mode`` (``print`` or ``json``); other modes bring their own."""
    if mode == "print":
        return PrintUI()
    return JsonUI() if mode == "json" else NoUI()
