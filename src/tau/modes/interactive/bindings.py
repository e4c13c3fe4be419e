"""The interactive mode's keys (docs/interactive.md, "Keys").

While an overlay is shown, one eager catch-all binding hands every key to it as raw data (and a
bracketed paste through ``handle_paste``); otherwise each of pi's editor actions runs on its keys
(the user's ``keybindings.json`` over the defaults: Enter sends or steers, Alt+Enter queues a
follow-up, Esc aborts...), and extension shortcuts run their handlers on keys no action took.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from tau.modes.interactive.keybindings import active, prompt_toolkit_keys

if TYPE_CHECKING:
    from tau.modes.interactive.app import InteractiveMode

__all__ = ["key_bindings"]


def _shortcut_keys(key: str) -> tuple[str, ...] | None:
    """pi's key names (``ctrl+t``, ``alt+x``, ``f5``) as prompt_toolkit keys."""
    parts = key.lower().split("+")
    if len(parts) == 1:
        return (parts[0],) if parts[0].startswith("f") and parts[0][1:].isdigit() else None
    if parts[:-1] == ["ctrl"] and len(parts[-1]) == 1:
        return (f"c-{parts[-1]}",)
    if parts[:-1] == ["alt"] and len(parts[-1]) == 1:
        return ("escape", parts[-1])
    return None


Handler = Callable[[KeyPressEvent], None]

# The editor's actions (pi's ids, ``keybindings.json``); the overlays read theirs from the same table.
_EDITOR_ACTIONS = (
    "tui.input.submit",
    "app.message.followUp",
    "tui.input.newLine",
    "app.interrupt",
    "app.tools.expand",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.clear",
    "app.exit",
    "app.model.select",
    "app.session.new",
    "app.session.tree",
    "app.session.fork",
    "app.session.resume",
)
_ACTION_COMMANDS = {
    "app.model.select": "/model",
    "app.session.new": "/new",
    "app.session.tree": "/tree",
    "app.session.fork": "/fork",
    "app.session.resume": "/resume",
}


def key_bindings(mode: InteractiveMode, overlay_active: Condition) -> KeyBindings:
    """The keys of the mode (the user's ``keybindings.json`` over pi's defaults); everything goes to
    the overlay while one is shown."""
    kb = KeyBindings()
    editing = ~overlay_active
    keys = active()

    @kb.add(Keys.Any, filter=overlay_active, eager=True)
    def _to_overlay(event: KeyPressEvent) -> None:
        first = event.key_sequence[0]
        if first.key == Keys.BracketedPaste:
            mode.overlays.paste(first.data)
        else:
            mode.overlays.feed("".join(press.data for press in event.key_sequence))

    def _enter(event: KeyPressEvent) -> None:
        buffer = mode.editor.buffer
        if buffer.complete_state and buffer.complete_state.current_completion:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        mode.submit(mode.editor.take(), "steer")

    def _follow_up(event: KeyPressEvent) -> None:
        mode.submit(mode.editor.take(), "followUp")

    def _newline(event: KeyPressEvent) -> None:
        mode.editor.buffer.insert_text("\n")

    def _escape(event: KeyPressEvent) -> None:
        mode.escape()

    def _expand(event: KeyPressEvent) -> None:
        mode.toggle_expanded()

    def _next_model(event: KeyPressEvent) -> None:
        mode.spawn(mode.cycle_model("forward"))

    def _previous_model(event: KeyPressEvent) -> None:
        mode.spawn(mode.cycle_model("backward"))

    def _ctrl_c(event: KeyPressEvent) -> None:
        now = mode.clock()
        if mode.editor.get_text():
            mode.editor.set_text("")
            mode.last_ctrl_c = 0.0  # clearing text is not the first of the two presses that quit
        elif now - mode.last_ctrl_c < 1.0:
            mode.exit()
        else:
            mode.controller.notice(
                f"Press {keys.text('app.clear', capitalize=True) or 'Ctrl+C'} again to quit"
            )
            mode.last_ctrl_c = now

    def _ctrl_d(event: KeyPressEvent) -> None:
        if not mode.editor.get_text():
            mode.exit()
        else:
            mode.editor.buffer.delete()

    def _command(command: str) -> Handler:
        def run(event: KeyPressEvent) -> None:
            mode.submit(command)

        return run

    handlers: dict[str, Handler] = {
        "tui.input.submit": _enter,
        "app.message.followUp": _follow_up,
        "tui.input.newLine": _newline,
        "app.interrupt": _escape,
        "app.tools.expand": _expand,
        "app.model.cycleForward": _next_model,
        "app.model.cycleBackward": _previous_model,
        "app.clear": _ctrl_c,
        "app.exit": _ctrl_d,
        **{action: _command(command) for action, command in _ACTION_COMMANDS.items()},
    }
    bound: set[tuple[str, ...]] = set()
    for action in _EDITOR_ACTIONS:
        for key in keys.keys(action):
            sequence = prompt_toolkit_keys(key)
            if sequence is None:
                continue  # a key this terminal input cannot tell apart (shift+enter, super+x)
            kb.add(*sequence, filter=editing)(handlers[action])
            bound.add(sequence)

    # A SIGINT is the terminal's Ctrl+C outside raw mode (while prompt_toolkit prints above the live
    # area) or a `kill -INT`: it counts as a press of app.clear whatever keys that has.
    kb.add(Keys.SIGINT, filter=editing)(_ctrl_c)

    @kb.add(Keys.BracketedPaste, filter=editing)
    def _paste(event: KeyPressEvent) -> None:
        mode.editor.insert_text(event.data)

    _extension_shortcuts(mode, kb, editing, bound)
    return kb


def _extension_shortcuts(
    mode: InteractiveMode, kb: KeyBindings, editing: Any, reserved: set[tuple[str, ...]]
) -> None:
    if mode.runner is None:
        return
    for key, shortcut in mode.runner.get_shortcuts().items():
        keys = _shortcut_keys(key)
        if keys is None or keys in reserved:
            continue

        def run(event: KeyPressEvent, shortcut: dict[str, Any] = shortcut) -> None:
            mode.spawn(_run_shortcut(mode, shortcut))

        kb.add(*keys, filter=editing)(run)


async def _run_shortcut(mode: InteractiveMode, shortcut: dict[str, Any]) -> None:
    try:
        result = shortcut["handler"](mode.runner.create_context())
        if asyncio.iscoroutine(result):
            await result
    except Exception as exc:  # boundary: an extension's failure is reported, the app goes on
        mode.controller.notice(f"Shortcut failed ({shortcut.get('extensionPath', '?')}): {exc}", "error")
