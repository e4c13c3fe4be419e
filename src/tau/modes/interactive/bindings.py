"""The interactive mode's keys (docs/interactive.md, "Keys").

While an overlay is shown, one eager catch-all binding hands every key to it as raw data (and a
bracketed paste through ``handle_paste``); otherwise Enter sends or steers, Alt+Enter queues a
follow-up, Esc aborts, and extension shortcuts run their handlers.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

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


def key_bindings(mode: InteractiveMode, overlay_active: Condition) -> KeyBindings:
    """The keys of the mode; everything goes to the overlay while one is shown."""
    kb = KeyBindings()
    editing = ~overlay_active

    @kb.add(Keys.Any, filter=overlay_active, eager=True)
    def _to_overlay(event: KeyPressEvent) -> None:
        first = event.key_sequence[0]
        if first.key == Keys.BracketedPaste:
            mode.overlays.paste(first.data)
        else:
            mode.overlays.feed("".join(press.data for press in event.key_sequence))

    @kb.add("enter", filter=editing)
    def _enter(event: KeyPressEvent) -> None:
        buffer = mode.editor.buffer
        if buffer.complete_state and buffer.complete_state.current_completion:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        mode.submit(mode.editor.take(), "steer")

    @kb.add("escape", "enter", filter=editing)
    def _follow_up(event: KeyPressEvent) -> None:
        mode.submit(mode.editor.take(), "followUp")

    @kb.add("c-j", filter=editing)
    def _newline(event: KeyPressEvent) -> None:
        mode.editor.buffer.insert_text("\n")

    @kb.add("escape", filter=editing)
    def _escape(event: KeyPressEvent) -> None:
        mode.escape()

    @kb.add("c-o", filter=editing)
    def _expand(event: KeyPressEvent) -> None:
        mode.toggle_expanded()

    # pi's model cycling: Ctrl+P forward; backward is pi's Shift+Ctrl+P, which most terminals send as
    # Ctrl+P, so Alt+P (pi's key for it on Windows) too.
    @kb.add("c-p", filter=editing)
    def _next_model(event: KeyPressEvent) -> None:
        mode.spawn(mode.cycle_model("forward"))

    @kb.add("escape", "p", filter=editing)
    def _previous_model(event: KeyPressEvent) -> None:
        mode.spawn(mode.cycle_model("backward"))

    # A SIGINT is the terminal's Ctrl+C outside raw mode (while prompt_toolkit prints above the live
    # area) or a `kill -INT`: it counts as a press.
    @kb.add("c-c", filter=editing)
    @kb.add(Keys.SIGINT, filter=editing)
    def _ctrl_c(event: KeyPressEvent) -> None:
        now = mode.clock()
        if mode.editor.get_text():
            mode.editor.set_text("")
            mode.last_ctrl_c = 0.0  # clearing text is not the first of the two presses that quit
        elif now - mode.last_ctrl_c < 1.0:
            mode.exit()
        else:
            mode.controller.notice("Press Ctrl+C again to quit")
            mode.last_ctrl_c = now

    @kb.add("c-d", filter=editing)
    def _ctrl_d(event: KeyPressEvent) -> None:
        if not mode.editor.get_text():
            mode.exit()
        else:
            mode.editor.buffer.delete()

    @kb.add(Keys.BracketedPaste, filter=editing)
    def _paste(event: KeyPressEvent) -> None:
        mode.editor.insert_text(event.data)

    _extension_shortcuts(mode, kb, editing)
    return kb


def _extension_shortcuts(mode: InteractiveMode, kb: KeyBindings, editing: Any) -> None:
    if mode.runner is None:
        return
    for key, shortcut in mode.runner.get_shortcuts().items():
        keys = _shortcut_keys(key)
        if keys is None or keys in (("c-c",), ("c-d",), ("c-o",), ("c-j",), ("c-p",), ("escape", "p")):
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
