"""pi 1.6's other slash commands: ``/settings``, ``/thinking``, ``/copy``, ``/export``, ``/reload``,
``/trust``, ``/clone``; and the editor's ``!cmd`` / ``!!cmd`` (a shell command of the user's own).

Each command is an async function of the mode and the text after its name, as in
:mod:`tau.modes.interactive.commands`, which lists them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tau.modes.interactive.model import NoticeBlock, ToolBlock

if TYPE_CHECKING:
    from tau.modes.interactive.app import InteractiveMode

__all__ = ["run_user_bash"]


async def settings(mode: InteractiveMode, args: str) -> None:
    """pi's settings list (:mod:`tau.modes.interactive.settings_panel`); each change is saved at once."""
    from tau.modes.interactive.settings_panel import setting_items

    changed = await mode.ui.custom(setting_items(mode))
    if changed:
        where = mode.session.settings.global_path
        mode.controller.notice(
            f"Settings saved to {where}: " + "; ".join(changed)
            if where is not None
            else "Settings changed for this run only: " + "; ".join(changed)
        )
    mode.refresh_footer()


async def thinking(mode: InteractiveMode, args: str) -> None:
    """``/thinking [level]``: set the thinking level (the levels the model has)."""
    levels = mode.session.get_available_thinking_levels()
    level = args.strip()
    if not level:
        current = mode.session.thinking_level
        picked = await mode.ui.select(
            "Thinking level", levels, selected=levels.index(current) if current in levels else 0
        )
        if picked is None:
            return
        level = picked
    if level not in levels:
        mode.controller.notice(
            f"Unknown thinking level {level!r}; this model has: {', '.join(levels)}", "warning"
        )
        return
    mode.session.set_thinking_level(level)
    mode.refresh_footer()
    mode.controller.notice(f"Thinking level: {mode.session.thinking_level}")


async def copy(mode: InteractiveMode, args: str) -> None:
    """``/copy``: the last answer to the clipboard (a native tool, else the terminal's OSC 52)."""
    from tau.modes.interactive.clipboard import ClipboardError, copy_to_clipboard

    text = mode.session.get_last_assistant_text()
    if not text:
        mode.controller.notice("No agent messages to copy yet.", "error")
        return
    try:
        copy_to_clipboard(text, mode.write_terminal_control)
    except ClipboardError as exc:
        mode.controller.notice(str(exc), "error")
        return
    mode.controller.notice("Copied last agent message to clipboard")


async def export(mode: InteractiveMode, args: str) -> None:
    """``/export [path]``: the session as an HTML page, or as JSONL when the path ends in ``.jsonl``."""
    from tau.modes.export_html import export_session

    path = args.strip() or None
    try:
        if path and path.endswith(".jsonl"):
            written = _export_jsonl(mode.session, path)
        else:
            written = export_session(mode.session, path)
    except (ValueError, OSError) as exc:
        mode.controller.notice(f"Export failed: {exc}", "error")
        return
    mode.controller.notice(f"Session exported to: {written}")


def _export_jsonl(session: Any, path: str) -> str:
    """The header and the entries of the current branch, one JSON line each (pi's ``exportToJsonl``)."""
    from tau.common import jsjson

    manager = session.session_manager
    header = manager.get_header()
    if header is None:
        raise ValueError("Nothing to export yet - start a conversation first")
    lines = [jsjson.dumps_str(header), *(jsjson.dumps_str(entry) for entry in manager.get_branch())]
    target = os.path.abspath(os.path.expanduser(path))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return target


async def reload(mode: InteractiveMode, args: str) -> None:
    """``/reload``: settings, context files, skills, prompt templates and extensions again, on the same session."""
    if mode.session.is_streaming:
        mode.controller.notice("Wait for the agent to finish (or Esc) before /reload", "warning")
        return
    if not mode.can_switch:
        mode.controller.notice("/reload needs tau's own terminal (not an embedded run)", "warning")
        return
    mode.controller.notice("Reloading settings, context files, skills, prompts and extensions…")
    mode.reload()


async def trust(mode: InteractiveMode, args: str) -> None:
    """``/trust``: save (or forget) the trust decision of this project for the next starts."""
    from tau.agent.trust import TrustError, save_decision, saved_decision

    cwd = mode.session.cwd
    try:
        saved = saved_decision(cwd)
    except TrustError as exc:
        mode.controller.notice(str(exc), "error")
        return
    now = {True: "trusted", False: "not trusted", None: "no decision saved"}[saved]
    options = ["Trust this project", "Do not trust this project", "Forget the decision (ask again)"]
    picked = await mode.ui.select(f"Project trust for {cwd} ({now})", options)
    if picked is None:
        return
    decision = {options[0]: True, options[1]: False, options[2]: None}[picked]
    try:
        save_decision(cwd, decision)
    except (TrustError, OSError) as exc:
        mode.controller.notice(f"Could not save the decision: {exc}", "error")
        return
    said = {True: "trusted", False: "untrusted", None: "forgotten"}[decision]
    mode.controller.notice(f"Saved trust decision: {said}. /reload (or a restart) applies it.")


async def clone(mode: InteractiveMode, args: str) -> None:
    """``/clone``: a new session file with this session up to where it is now; tau continues in it."""
    leaf = mode.session.session_manager.get_leaf_id()
    if not leaf:
        mode.controller.notice("Nothing to clone yet")
        return
    result = await mode.session.fork(leaf, position="at")
    if result.get("cancelled"):
        return
    mode.reload_view()
    mode.editor.set_text("")
    mode.controller.notice("Cloned to new session")


# -- !cmd --------------------------------------------------------------------------------------


async def run_user_bash(mode: InteractiveMode, text: str) -> None:
    """``!cmd`` runs ``cmd`` and adds it and its output to the conversation; ``!!cmd`` keeps it out of
    the model's context. The row streams as a tool row does."""
    from tau.modes.rpc.bash import UserBash

    exclude = text.startswith("!!")
    command = text[2:] if exclude else text[1:]
    if not command.strip():
        mode.controller.notice("Usage: !command (sent to the model with its output) or !!command (not sent)")
        return
    mode.user_bash_count += 1
    block = ToolBlock(f"user-bash-{mode.user_bash_count}", "bash", {"command": command})
    mode.controller.add(block)

    def on_event(event: dict[str, Any]) -> None:
        block.output += str(event.get("delta", ""))
        mode.controller.changed()

    bash = UserBash(mode.session, on_event, mode.runner)
    mode.user_bash = bash
    try:
        result = await bash.run(command, exclude_from_context=exclude)
    finally:
        mode.user_bash = None
    block.output = str(result.get("output", ""))
    block.status = "done" if result.get("exitCode") == 0 and not result.get("cancelled") else "error"
    if result.get("cancelled"):
        block.output += "\n(cancelled)"
    elif result.get("exitCode") not in (0, None):
        block.output += f"\n(exit code {result['exitCode']})"
    if exclude:
        mode.controller.add(NoticeBlock("(!! output is not sent to the model)", "dim"))
    mode.controller.changed()
