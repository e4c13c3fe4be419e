"""Overlays: tau's dialogs and extension components get raw keys and pastes, and return a result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.modes.interactive.dialogs import ConfirmDialog, EditorDialog, InputDialog, SelectDialog
from tau.modes.interactive.keys import parse_key
from tau.modes.interactive.model import ChatController
from tau.modes.interactive.overlay import OverlayHost
from tau.modes.interactive.tree import TreeSelector
from tau.modes.interactive.ui import InteractiveUI

UP, DOWN, ENTER, ESC = "\x1b[A", "\x1b[B", "\r", "\x1b"


async def _answer(host: OverlayHost, show: Any, keys: list[str], paste: str | None = None) -> Any:
    task = asyncio.ensure_future(show)
    for _ in range(1000):
        if host.active is not None:
            break
        await asyncio.sleep(0)
    if paste is not None:
        host.paste(paste)
    for key in keys:
        assert host.feed(key)
    return await asyncio.wait_for(task, 60)


def run_dialog(component: Any, keys: list[str], paste: str | None = None) -> Any:
    async def scenario() -> Any:
        host = OverlayHost()
        result = await _answer(host, host.show(component), keys, paste)
        assert host.active is None
        return result

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ("\r", "enter"),
        ("\x1b", "escape"),
        ("\x1b[A", "up"),
        ("\x1bOB", "down"),
        ("\x1b[13;2u", "shift+enter"),
        ("\x1b[27u", "escape"),
        ("\x1b[99;5u", "ctrl+c"),
        ("\x03", "ctrl+c"),
        ("x", "x"),
    ],
)
def test_raw_keys_are_decoded_for_tau_dialogs(data, key):
    assert parse_key(data) == key


def test_select_moves_filters_and_picks():
    assert run_dialog(SelectDialog("Pick", ["alpha", "beta", "gamma"]), [DOWN, DOWN, ENTER]) == "gamma"
    assert run_dialog(SelectDialog("Pick", ["alpha", "beta", "gamma"]), ["g", "a", ENTER]) == "gamma"
    assert run_dialog(SelectDialog("Pick", ["alpha", "beta"]), [UP, ENTER]) == "beta"  # wraps
    assert run_dialog(SelectDialog("Pick", ["alpha"]), [ESC]) is None


def test_confirm_input_and_editor():
    assert run_dialog(ConfirmDialog("Sure?", "really"), ["y"]) is True
    assert run_dialog(ConfirmDialog("Sure?", "really"), ["\x1b[C", ENTER]) is False
    assert run_dialog(InputDialog("Name"), ["a", "b", "\x7f", "c", ENTER]) == "ac"
    assert run_dialog(InputDialog("Name"), [ENTER], paste="one\ntwo\x1b[2J\u202e") == "one two"
    assert run_dialog(EditorDialog("Text", "x"), ["\x1b\r", "y", ENTER]) == "x\ny"
    assert run_dialog(EditorDialog("Text"), [ESC]) is None


class Counter:
    """An extension component: counts keys, shows pastes, closes on ``q`` with the count."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.pasted: list[str] = []
        self.renders = 0

    def render(self, width: int) -> list[str]:
        return [f"\x1b[1mkeys {len(self.keys)}\x1b[0m\x1b[2J", f"pasted {self.pasted}"]

    def handle_input(self, data: str) -> None:
        self.keys.append(data)
        if data == "q":
            self.done(len(self.keys))
        else:
            self.request_render()

    def handle_paste(self, text: str) -> None:
        self.pasted.append(text)


def test_custom_component_owns_input_until_done():
    renders: list[int] = []
    host = OverlayHost(request_render=lambda: renders.append(1))
    component = Counter()

    async def scenario() -> Any:
        return await _answer(host, host.show(component), ["\x1b[13;2u", "\x1b[A", "q"], paste="pasted\ntext")

    assert asyncio.run(scenario()) == 3
    assert component.keys == ["\x1b[13;2u", "\x1b[A", "q"]  # raw, undecoded
    assert component.pasted == ["pasted\ntext"]  # pastes never arrive as keys
    assert renders and host.active is None and host.feed("x") is False


def test_component_lines_keep_styling_but_lose_other_sequences():
    host = OverlayHost()

    async def scenario() -> list[str]:
        task = asyncio.ensure_future(host.show(Counter()))
        await asyncio.sleep(0)
        lines = host.lines(40)
        host.close_all()
        await task
        return lines

    assert asyncio.run(scenario())[0] == "\x1b[1mkeys 0\x1b[0m"


def test_a_failing_component_closes_with_none_and_is_reported():
    errors: list[str] = []

    class Broken(Counter):
        def handle_input(self, data: str) -> None:
            raise ValueError("boom")

    host = OverlayHost(on_error=lambda component, exc: errors.append(str(exc)))

    async def scenario() -> Any:
        return await _answer(host, host.show(Broken()), ["x"])

    assert asyncio.run(scenario()) is None
    assert errors == ["boom"]


def test_ui_dialogs_go_through_the_overlay_and_time_out_to_their_default():
    async def scenario() -> tuple[Any, Any, Any]:
        controller = ChatController()
        host = OverlayHost()
        ui = InteractiveUI(controller, host)
        picked = await _answer(host, ui.select("Pick", ["a", "b"]), [DOWN, ENTER])
        timed_out = await ui.confirm("Sure?", "nobody answers", timeout=0.05)
        nothing = await ui.input("Name", timeout=0.05)
        assert host.active is None
        ui.notify("hello \x1b[2J", "warning")
        ui.set_status("ext", "busy")
        ui.set_widget("w", ["line"])
        assert (controller.blocks[-1].text, controller.blocks[-1].level) == ("hello ", "warning")
        assert controller.footer.statuses == {"ext": "busy"} and controller.footer.widgets == {"w": ["line"]}
        return picked, timed_out, nothing

    assert asyncio.run(scenario()) == ("b", False, None)


def test_the_editor_dialog_opens_when_the_ui_has_a_prompt_editor():
    """``ui.editor(...)`` is the multi-line dialog (``/tree``'s custom summary instructions,
    ``ctx.ui.editor``) also when the UI holds the prompt editor: that one is not called in its place."""

    class PromptEditor:
        def __init__(self) -> None:
            self.text = "draft prompt"

        def get_text(self) -> str:
            return self.text

        def set_text(self, text: str) -> None:
            self.text = text

        def insert_text(self, text: str) -> None:
            self.text += text

    async def scenario() -> tuple[Any, str]:
        host = OverlayHost()
        ui = InteractiveUI(ChatController(), host, PromptEditor())
        answer = await _answer(host, ui.editor("Custom summarization instructions", "keep"), [ENTER])
        return answer, ui.get_editor_text()

    assert asyncio.run(scenario()) == ("keep", "draft prompt")


def _tree() -> list[dict[str, Any]]:
    def node(entry_id: str, text: str, *children: dict[str, Any]) -> dict[str, Any]:
        entry = {"type": "message", "id": entry_id, "message": {"role": "user", "content": text}}
        return {"entry": entry, "children": list(children)}

    return [node("a", "first", node("b", "left"), node("c", "right", node("d", "deeper")))]


def test_tree_selector_starts_at_the_leaf_and_picks_an_entry():
    selector = TreeSelector(_tree(), "d")
    lines = selector.render(60)
    assert any("● user: deeper" in line for line in lines)
    assert run_dialog(selector, [UP, UP, ENTER]) == "b"
    assert run_dialog(TreeSelector(_tree(), "d"), [ESC]) is None
