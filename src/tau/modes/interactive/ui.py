"""``ctx.ui`` in the interactive mode: dialogs are overlays, notices and statuses go on screen.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) and ``custom`` components are shown by the
overlay host and own the keyboard until answered. A ``timeout`` (seconds) or an aborted
``signal`` closes a dialog with its default (``None`` / ``False``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from tau.extension.ui import NoUI
from tau.modes.interactive.dialogs import ConfirmDialog, EditorDialog, InputDialog, SelectDialog
from tau.modes.interactive.model import ChatController
from tau.modes.interactive.overlay import OverlayHost

__all__ = ["EditorAccess", "InteractiveUI"]


class EditorAccess(Protocol):
    """The editor as the UI needs it."""

    def get_text(self) -> str: ...

    def set_text(self, text: str) -> None: ...

    def insert_text(self, text: str) -> None: ...


class _NoEditor:
    def __init__(self) -> None:
        self.text = ""

    def get_text(self) -> str:
        return self.text

    def set_text(self, text: str) -> None:
        self.text = text

    def insert_text(self, text: str) -> None:
        self.text += text


class InteractiveUI(NoUI):
    """An :class:`~tau.extension.ui.ExtensionUI` on the terminal.

    Args:
        controller: The render model (notices, statuses, widgets, working message).
        overlays: Where dialogs and components are shown.
        editor: The prompt editor (``get_editor_text`` and friends).
        set_terminal_title: Writes the terminal title (sanitized by the caller).
        themes: The run's themes (:class:`~tau.modes.themes.ThemeSet`) for ``get_all_themes`` and
            ``get_theme``; ``on_theme(name)`` switches to one (``set_theme``).
    """

    def __init__(
        self,
        controller: ChatController,
        overlays: OverlayHost,
        editor: EditorAccess | None = None,
        set_terminal_title: Callable[[str], None] | None = None,
        *,
        themes: Any = None,
        on_theme: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self._themes = themes
        self._on_theme = on_theme
        self.controller = controller
        self.overlays = overlays
        # (not ``self.editor``: that name is the editor dialog of the UI protocol)
        self._prompt_editor: EditorAccess = editor or _NoEditor()
        self._set_title = set_terminal_title or (lambda title: None)
        self.tools_expanded = False

    async def _dialog(self, component: Any, default: Any, options: dict[str, Any]) -> Any:
        signal = options.get("signal")
        if signal is not None and signal.aborted:
            return default
        task = asyncio.ensure_future(self.overlays.show(component))
        remove = signal.add_callback(lambda: component.done(default)) if signal is not None else None
        timeout = options.get("timeout")
        try:
            result = (
                await asyncio.wait_for(asyncio.shield(task), timeout)
                if timeout and timeout > 0
                else await task
            )
        except TimeoutError:
            component.done(default)
            await task
            return default
        finally:
            if remove is not None:
                remove()
        return default if result is None and default is not None else result

    # -- dialogs -----------------------------------------------------------------------------

    async def select(self, title: str, options: list[str], **extra: Any) -> str | None:
        selected = int(extra.pop("selected", 0) or 0)
        return await self._dialog(SelectDialog(title, list(options), selected=selected), None, extra)

    async def confirm(self, title: str, message: str, **extra: Any) -> bool:
        return bool(await self._dialog(ConfirmDialog(title, message), False, extra))

    async def input(self, title: str, placeholder: str | None = None, **extra: Any) -> str | None:
        return await self._dialog(InputDialog(title, placeholder), None, extra)

    async def editor(self, title: str, prefill: str | None = None, **extra: Any) -> str | None:
        return await self._dialog(EditorDialog(title, prefill), None, {})

    async def custom(self, component: Any, **options: Any) -> Any:
        if not hasattr(component, "render") and callable(component):
            component = component()  # a factory without arguments
        return await self.overlays.show(component)

    # -- fire and forget ---------------------------------------------------------------------

    def notify(self, message: str, type: str = "info") -> None:
        self.controller.notice(str(message), type if type in ("info", "warning", "error") else "info")

    def notice(self, message: str) -> None:
        self.controller.notice(" ".join(str(message).split()), "dim")

    def set_status(self, key: str, text: str | None = None) -> None:
        self.controller.set_status(key, text)

    def set_widget(self, key: str, lines: Any, *, placement: str | None = None) -> None:
        if lines is not None and not isinstance(lines, (list, tuple)):
            return  # component factories are not offered (docs/extensions.md, differences from pi)
        self.controller.set_widget(key, list(lines) if lines is not None else None)

    def set_title(self, title: str) -> None:
        self._set_title(title)

    def set_editor_text(self, text: str) -> None:
        self._prompt_editor.set_text(text)

    def get_editor_text(self) -> str:
        return self._prompt_editor.get_text()

    def paste_to_editor(self, text: str) -> None:
        self._prompt_editor.insert_text(text)

    def set_working_message(self, message: str | None = None) -> None:
        self.controller.footer.working_message = message
        self.controller.changed()

    def get_tools_expanded(self) -> bool:
        return self.controller.tools_expanded

    def set_tools_expanded(self, expanded: bool) -> None:
        if expanded != self.controller.tools_expanded:
            self.controller.toggle_tools_expanded()

    @property
    def theme(self) -> Any:
        """The theme in use (:class:`~tau.modes.themes.Theme`: ``fg(token)``, ``bg(token)``, ``colors``)."""
        return self._themes.active if self._themes is not None else None

    def get_all_themes(self) -> list[Any]:
        """``[{"name", "path"}]`` of every theme (``system`` first), as pi's ``getAllThemes``."""
        return self._themes.all_themes() if self._themes is not None else []

    def get_theme(self, name: str) -> Any:
        return self._themes.get(name) if self._themes is not None else None

    def set_theme(self, theme: Any) -> dict[str, Any]:
        """Switch to a theme (a name, or a theme from ``get_theme``) and save it as the ``theme`` setting."""
        name = getattr(theme, "name", theme)
        if self._on_theme is None or not isinstance(name, str):
            return {"success": False, "error": "no theme to set"}
        return self._on_theme(name)
