"""What the interactive mode shows before the conversation: pi's header and startup report.

``quietStartup`` decides how much (pi: only ``true`` hides the header; its default, ``false``,
lists what was loaded); ``--verbose`` shows everything whatever the setting. Theme warnings and
extensions that failed to load are shown in every case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tau.modes.interactive.editor import relative_cwd
from tau.modes.interactive.keybindings import active
from tau.modes.interactive.model import ChatController, NoticeBlock
from tau.modes.themes import ThemeSet

__all__ = ["loaded_report", "show_startup_report"]


def show_startup_report(
    controller: ChatController,
    session: Any,
    runner: Any,
    themes: ThemeSet,
    *,
    verbose: bool,
    hold_back: Sequence[str | None] = (),
) -> None:
    """Add the header, what was loaded, the model scope and the startup problems to ``controller``
    (``hold_back``: theme warnings shown later, once extensions' themes are known)."""
    model = session.model
    name = f"{model.provider}/{model.id}" if model is not None else "no model (use /model)"
    quiet = session.settings.get("quietStartup")
    if verbose or quiet is not True:  # pi: only quietStartup true hides the header
        controller.add(NoticeBlock(f"tau · {name} · /hotkeys for keys, /quit to leave", "info"))
    if verbose or quiet not in (True, "header"):
        loaded = loaded_report(session, runner, themes)  # pi's default (quietStartup: false)
        if loaded:
            controller.add(NoticeBlock(loaded, "dim"))
        scoped = getattr(session, "scoped_models", None) or []
        if scoped:
            names = ", ".join(
                s.model.id + (f":{s.thinking_level}" if s.thinking_level else "") for s in scoped
            )
            cycle = active().text("app.model.cycleForward", capitalize=True)
            hint = f" ({cycle} to cycle)" if cycle else ""
            controller.add(NoticeBlock(f"Model scope: {names}{hint}", "dim"))
    for warning in themes.warnings:
        if warning not in hold_back:
            controller.notice(warning, "warning")
    for failure in getattr(runner, "load_errors", None) or []:
        controller.notice(
            f"Extension failed to load ({failure.get('path')}): {failure.get('error')}", "error"
        )


def loaded_report(session: Any, runner: Any, themes: ThemeSet) -> str:
    """pi's startup details: context files, skills, prompt templates, themes, extensions, tools
    (``""`` when there is nothing to list)."""
    files = list(getattr(session, "context_file_paths", []))
    lines = ["[Context]", *(f"  {relative_cwd(path)}" for path in files)] if files else []
    resources = getattr(session, "resources", None)
    if resources is not None and resources.skills:
        lines += ["[Skills]", "  " + ", ".join(skill.name for skill in resources.skills)]
    if resources is not None and resources.prompts:
        lines += ["[Prompts]", "  " + ", ".join(f"/{template.name}" for template in resources.prompts)]
    if themes.themes:
        lines += ["[Themes]", "  " + ", ".join(sorted(themes.themes))]
    extensions = [getattr(e, "path", "?") for e in getattr(runner, "extensions", None) or []]
    if extensions:
        lines += ["[Extensions]", "  " + ", ".join(sorted(extensions))]
    tools = list(session.get_active_tool_names())
    if tools:
        lines += ["[Tools]", "  " + ", ".join(tools)]
    return "\n".join(lines)
