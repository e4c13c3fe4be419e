"""The themes of one interactive run: loaded from the theme files and the ``theme`` setting (or
``--use-theme``), completed by the paths extensions give in ``resources_discover``, the active theme's
file watched for edits, and switched by ``/settings`` and ``ctx.ui.set_theme``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from tau.modes.interactive.model import ChatController
from tau.modes.themes import ThemeSet, load_themes

__all__ = ["POLL_SECONDS", "RunThemes"]

POLL_SECONDS = 1.0  # how often the active theme's file is looked at (one stat)


class RunThemes:
    """``themes``: the run's :class:`~tau.modes.themes.ThemeSet`; ``pending``: extensions may still add
    themes, so an unknown theme name is not warned about yet."""

    def __init__(
        self,
        session: Any,
        controller: ChatController,
        invalidate: Callable[[], None],
        *,
        paths: Sequence[str],
        no_themes: bool,
        use_theme: str | None,
        pending: bool,
    ) -> None:
        from tau.common.paths import agent_dir

        self._session = session
        self._controller = controller
        self._invalidate = invalidate
        settings = session.settings
        trusted = bool(getattr(session, "project_trusted", False))
        self.themes: ThemeSet = load_themes(
            cwd=str(session.cwd),
            agent_dir=str(agent_dir()),
            trusted=trusted,
            user_settings=settings.global_settings,
            project_settings=settings.project_settings if trusted else {},
            paths=paths,
            no_themes=no_themes,
            setting=use_theme if use_theme is not None else settings.get("theme"),
        )
        self.pending = pending

    def add_paths(self, paths: Sequence[str]) -> None:
        """The theme paths extensions gave in ``resources_discover`` (after the others, as pi): their
        themes are listed and usable, and a ``theme`` setting naming one of them applies now."""
        warnings = self.themes.add_paths(paths, cwd=str(self._session.cwd))
        if self.pending and self.themes.unresolved:
            warnings.append(self.themes.unresolved)
        self.pending = False
        for warning in warnings:
            self._controller.notice(warning, "warning")
        self._controller.changed()

    def check_file(self) -> None:
        """Redraw in the active theme's new colours if its file changed; a broken edit keeps the
        colours in use and says why (``ThemeSet.reload_changed``). Rows already printed keep theirs."""
        change = self.themes.reload_changed()
        if change is None:
            return
        if change.warning:
            self._controller.notice(change.warning, "warning")
        self._controller.changed()

    async def watch_file(self) -> None:
        # Polled (one stat a second) rather than an OS watcher: no thread, no dependency, any filesystem.
        while True:
            await asyncio.sleep(POLL_SECONDS)
            self.check_file()

    def use(self, name: str, *, save: bool = True) -> dict[str, Any]:
        """Use theme ``name`` for what is drawn from now on (rows already in the terminal's scrollback
        keep their colours); ``save`` keeps it as the ``theme`` setting, as pi's ``/settings`` and
        ``ctx.ui.set_theme`` do."""
        from tau.modes.themes import ThemeError

        try:
            self.themes.use(name)
        except ThemeError as exc:
            return {"success": False, "error": str(exc)}
        settings = self._session.settings
        if save and settings.get("theme") != name:
            settings.save_global("theme", name)
        self._controller.changed()
        self._invalidate()
        return {"success": True}
