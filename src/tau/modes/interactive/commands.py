"""The interactive mode's slash commands (pi-host §5): tau's own, then every extension command.

Each built-in command is an async function of the mode and the text after the name. Extension
commands run through the session's prompt path (``/name args``), as pi does. Unlike pi 1.6, which
sends any other ``/word`` to the model as a prompt, tau answers an unknown command on screen
(``/help`` lists them): a typo should not cost a request.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tau.common.dataclass import dataclass
from tau.llm.messages import entry_message
from tau.modes.interactive import more_commands as more
from tau.modes.interactive.model import NoticeBlock, content_text
from tau.modes.interactive.tree import TreeSelector

if TYPE_CHECKING:
    from tau.modes.interactive.app import InteractiveMode

__all__ = ["BUILTIN_COMMANDS", "SUMMARY_CHOICES", "Command", "command_list", "unknown_command"]

SUMMARY_CHOICES = ["No summary", "Summarize", "Summarize with custom prompt"]


@dataclass
class Command:
    """A slash command as the completer lists it."""

    name: str
    description: str
    run: Callable[[InteractiveMode, str], Awaitable[None]] | None = None
    argument_hint: str | None = None


async def _compact(mode: InteractiveMode, args: str) -> None:
    try:
        await mode.session.compact(args.strip() or None)
    except Exception as exc:  # boundary: the reason goes on screen (once: compaction_end may have said it)
        shown = [b.text for b in mode.controller.blocks[-3:] if isinstance(b, NoticeBlock)]
        if not any(str(exc) in text for text in shown):
            mode.controller.notice(f"Compaction failed: {exc}", "error")


async def _tree(mode: InteractiveMode, args: str) -> None:
    manager = mode.session.session_manager
    tree = manager.get_tree()
    if not tree:
        mode.controller.notice("No entries in session")
        return
    selected = await mode.overlays.show(TreeSelector(tree, manager.get_leaf_id()))
    if selected is None:
        return
    if selected == manager.get_leaf_id():
        mode.controller.notice("Already at this point")
        return
    choice = await mode.ui.select("Summarize branch?", SUMMARY_CHOICES)
    if choice is None:
        return
    instructions = None
    if choice == SUMMARY_CHOICES[2]:
        instructions = await mode.ui.editor("Custom summarization instructions")
        if instructions is None:
            return
    if mode.session.is_streaming:
        mode.restore_queue_to_editor()
        await mode.session.abort()
    result = await mode.session.navigate_tree(
        selected, summarize=choice != SUMMARY_CHOICES[0], custom_instructions=instructions
    )
    if result.get("aborted"):
        mode.controller.notice("Branch summarization cancelled", "warning")
        return
    if result.get("cancelled"):
        mode.controller.notice("Navigation cancelled")
        return
    mode.reload_view()
    if result.get("editorText") and not mode.editor.get_text().strip():
        mode.editor.set_text(result["editorText"])
    mode.controller.notice("Navigated to the selected point")


def _user_messages(session: Any) -> list[tuple[str, str]]:
    found = []
    for entry in session.session_manager.get_branch():
        message = entry_message(entry)
        if message and message.get("role") == "user":
            text = content_text(message.get("content")).strip()
            if text:
                found.append((entry["id"], text))
    return found


async def _fork(mode: InteractiveMode, args: str) -> None:
    messages = _user_messages(mode.session)
    if not messages:
        mode.controller.notice("No messages to fork from")
        return
    labels = [f"{i + 1}. {text.splitlines()[0][:120]}" for i, (_, text) in enumerate(messages)]
    choice = await mode.ui.select("Fork from message", labels, selected=len(labels) - 1)
    if choice is None:
        return
    entry_id = messages[labels.index(choice)][0]
    result = await mode.session.fork(entry_id)
    if result.get("cancelled"):
        mode.controller.notice("Fork cancelled")
        return
    mode.reload_view()
    if result.get("selectedText"):
        mode.editor.set_text(result["selectedText"])
    mode.controller.notice("Forked to a new session")


async def _model(mode: InteractiveMode, args: str) -> None:
    models = mode.session.model_registry.get_available()
    names = [f"{m.provider}/{m.id}" for m in models]
    pattern = args.strip()
    matches = [n for n in names if pattern.lower() in n.lower()] if pattern else names
    choice = (
        matches[0]
        if pattern and len(matches) == 1
        else await mode.ui.select("Select model", matches or names)
    )
    if choice is None:
        return
    model = models[names.index(choice)]
    try:
        await mode.session.set_model(model)
    except Exception as exc:  # boundary: e.g. no API key
        mode.controller.notice(str(exc), "error")
        return
    mode.refresh_footer()
    mode.controller.notice(f"Model: {choice}")


async def _session(mode: InteractiveMode, args: str) -> None:
    session = mode.session
    manager = session.session_manager
    roles: dict[str, int] = {}
    for message in session.messages:
        roles[message.get("role", "?")] = roles.get(message.get("role", "?"), 0) + 1
    lines = [
        f"Session: {manager.get_session_id()}",
        f"File: {manager.get_session_file() or '(in memory)'}",
        f"Name: {session.get_session_name() or '(none)'}",
        f"Messages: {roles.get('user', 0)} user, {roles.get('assistant', 0)} assistant, "
        f"{roles.get('toolResult', 0)} tool results",
        f"Entries: {manager.get_entry_count()}",
    ]
    usage = session.get_context_usage()
    if usage and usage.get("tokens") is not None:
        lines.append(f"Context: {usage['tokens']:,} of {usage.get('contextWindow', 0):,} tokens")
    mode.controller.notice("\n".join(lines))


async def _name(mode: InteractiveMode, args: str) -> None:
    name = args.strip()
    if not name:
        current = mode.session.get_session_name()
        mode.controller.notice(f"Session name: {current}" if current else "Usage: /name <name>")
        return
    mode.session.set_session_name(name)
    mode.controller.notice(f"Session name set: {name}")


async def _new(mode: InteractiveMode, args: str) -> None:
    result = await mode.session.new_session()
    if result.get("cancelled"):
        mode.controller.notice("New session cancelled")
        return
    mode.reload_view()
    mode.controller.notice("Started a new session")


async def _resume(mode: InteractiveMode, args: str) -> None:
    await pick_session(mode, rename=True)


async def pick_session(mode: InteractiveMode, *, rename: bool = False) -> bool:
    """Pick a session and switch to it (``/resume``, ``tau -r``); False when none was picked.

    The picker opens on this directory's sessions; Tab shows every directory's, as in pi 1.6. A
    session of another directory resumes in its own directory. Ctrl+D deletes a listed session
    (never the open one); Ctrl+R renames one when ``rename`` (``/resume``: pi's ``-r`` has no rename).
    """
    from tau.modes.interactive.session_picker import SessionPicker
    from tau.session.file_actions import delete_session_file
    from tau.session.manager import SessionManager
    from tau.session.paths import sessions_root

    manager = mode.session.session_manager
    every_dir = manager.get_session_dir() if not manager.uses_default_session_dir() else None
    open_file = manager.get_session_file()
    listed = [manager.get_session_dir(), every_dir if every_dir is not None else sessions_root()]
    folders = [folder for folder in listed if folder]  # "" (no session dir) must never mean "here"
    picker = SessionPicker(
        lambda: SessionManager.list(mode.session.cwd, manager.get_session_dir()),
        lambda: SessionManager.list_all(every_dir),
        current=open_file,
        delete=lambda path: delete_session_file(path, folders=folders, open_file=open_file),
        rename=(lambda path, name: _rename(mode, path, name)) if rename else None,
    )
    path = await mode.ui.custom(picker)
    if path is None:
        return False
    switch = getattr(mode.session, "switch_session", None)
    if switch is not None:
        result = await switch(path)
        if (result or {}).get("cancelled"):
            mode.controller.notice("Resume cancelled")
            return False
        mode.reload_view()
    elif mode.can_switch:
        mode.controller.notice(f"Resuming {path}")
        mode.switch_session(path)
    else:
        mode.controller.notice(f"Resume with: tau --session {path}", "warning")
    return True


def _rename(mode: InteractiveMode, path: str, name: str) -> None:
    """Name the session in ``path``: the open one through the running session (this process holds its
    file's lock, and the footer shows the name at once), another by appending to its file."""
    from tau.session.file_actions import rename_session_file

    current = mode.session.session_manager.get_session_file()
    if current and os.path.realpath(current) == os.path.realpath(path):
        mode.session.set_session_name(name)
    else:
        rename_session_file(path, name)


async def _quit(mode: InteractiveMode, args: str) -> None:
    mode.exit()


async def _help(mode: InteractiveMode, args: str) -> None:
    commands = command_list(mode.runner, mode.session)
    width = max(len(command.name) for command in commands) + 1
    lines = ["Commands (never sent to the model):"]
    lines += [f"  /{command.name.ljust(width)} {command.description}" for command in commands]
    lines.append("!cmd runs a shell command and sends it with its output; !!cmd runs it without sending.")
    lines.append("Other text is sent to the model. /hotkeys lists the keys.")
    mode.controller.notice("\n".join(lines))


_HOTKEYS = (
    ("tui.input.submit", "send (steer while running)"),
    ("app.message.followUp", "follow-up"),
    ("tui.input.newLine", "new line"),
    ("app.interrupt", "abort (queued messages return to the editor)"),
    ("app.tools.expand", "expand tool output"),
    ("app.model.cycleForward", "next model (--models)"),
    ("app.model.cycleBackward", "previous model"),
    ("app.model.select", "select model"),
    ("app.clear", "clear, twice to quit"),
    ("app.exit", "quit on an empty editor"),
    ("app.session.new", "new session"),
    ("app.session.tree", "session tree"),
    ("app.session.fork", "fork"),
    ("app.session.resume", "resume"),
)


async def _hotkeys(mode: InteractiveMode, args: str) -> None:
    """The keys in use (the user's keybindings.json over the defaults); unbound actions are left out."""
    from tau.modes.interactive.keybindings import active

    keys = active()
    parts = [f"{keys.text(a, capitalize=True)} {what}" for a, what in _HOTKEYS if keys.keys(a)]
    mode.controller.notice(" · ".join([*parts, "Tab complete"]))


BUILTIN_COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("compact", "Compact the context now (optional: instructions)", _compact),
        Command("tree", "Navigate the session tree (optionally summarizing the branch left)", _tree),
        Command("fork", "Continue from an earlier message in a new session", _fork),
        Command("clone", "Duplicate the session at its current position in a new one", more.clone),
        Command("model", "Select the model", _model),
        Command("thinking", "Set the thinking level (optional: the level)", more.thinking),
        Command("settings", "Change a setting (saved to your settings.json)", more.settings),
        Command("session", "Show session information", _session),
        Command("name", "Set the session name", _name),
        Command("new", "Start a new session", _new),
        Command("resume", "Resume another session", _resume),
        Command("copy", "Copy the last answer to the clipboard", more.copy),
        Command("export", "Export the session as HTML (or JSONL: a path ending in .jsonl)", more.export),
        Command("trust", "Save a trust decision for this project", more.trust),
        Command("reload", "Reload settings, context files, skills, prompts and extensions", more.reload),
        Command("help", "List the commands", _help),
        Command("hotkeys", "Show the keys", _hotkeys),
        Command("quit", "Quit tau", _quit),
    )
}


_COMMAND_NAME = re.compile(r"[A-Za-z][\w:.-]*")


def unknown_command(text: str, runner: Any, session: Any = None) -> str | None:
    """The name of ``/name …`` when no command has it, else ``None``.

    Text whose first word holds another ``/`` (``/usr/bin/python fails``) is a prompt, not a command.
    A prompt template or a skill (``/skill:name``, typed by hand even when ``enableSkillCommands`` is
    off) is a command.
    """
    match = re.match(r"/(\S*)", text)
    name = match.group(1) if match else ""
    if not _COMMAND_NAME.fullmatch(name):
        return None
    known = {command.name for command in command_list(runner, session, completion=False)}
    return None if name in known else name


def command_list(runner: Any, session: Any = None, *, completion: bool = True) -> list[Command]:
    """tau's commands, the prompt templates, the extension commands (``name:n`` on clashes), then the
    skills as ``skill:name`` (for completion only while ``enableSkillCommands`` is on, as in pi)."""
    commands = list(BUILTIN_COMMANDS.values())
    resources = getattr(session, "resources", None)
    if resources is not None:
        commands += [Command(t.name, t.description, argument_hint=t.argument_hint) for t in resources.prompts]
    if runner is not None:
        for info in runner.get_commands():
            if info["name"] not in BUILTIN_COMMANDS:
                commands.append(Command(info["name"], info.get("description") or "(extension)"))
    if resources is not None and (not completion or session.settings.get("enableSkillCommands", True)):
        commands += [Command(f"skill:{skill.name}", skill.description) for skill in resources.skills]
    return commands
