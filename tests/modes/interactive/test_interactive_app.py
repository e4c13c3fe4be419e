"""The interactive mode in process: real key input, the screen rendered by pyte, a faux session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from interactive_support import Screen, faux_session

from tau.extension.loader import load_factory
from tau.extension.runner import ExtensionRunner

ENTER, ESC, ALT_ENTER, UP = "\r", "\x1b", "\x1b\r", "\x1b[A"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_prompt_answer_and_tool_row(tmp_path):
    session = faux_session(tmp_path, [{"text": "Hello from **faux**"}, {"bash": "echo hi"}, {"text": "done"}])

    async def scenario() -> str:
        screen = Screen(session)
        await screen.start()
        screen.send("hello" + ENTER)
        await screen.wait_text("Hello from faux")
        screen.send("run it" + ENTER)
        await screen.wait_text("✓ $ echo hi")
        await screen.wait_for(lambda: session.is_idle() and "done" in screen.text())
        await screen.quit()
        return screen.text()

    text = run(scenario())
    assert text.index("hello") < text.index("Hello from faux") < text.index("$ echo hi") < text.index("done")


def test_enter_steers_alt_enter_follows_up_and_esc_returns_them_to_the_editor(tmp_path):
    session = faux_session(tmp_path, [{"bash": "sleep 30"}, {"text": "never"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("sleep" + ENTER)
        await screen.wait_text("⋯ $ sleep 30")
        screen.send("steer me" + ENTER)
        await screen.wait_text("steer: steer me")
        screen.send("later" + ALT_ENTER)
        await screen.wait_text("follow-up: later")
        assert session.get_steering_messages() == ["steer me"]
        assert session.get_follow_up_messages() == ["later"]
        screen.send(ESC)
        await screen.wait_for(
            lambda: session.is_idle() and "Aborted: This operation was aborted" in screen.text()
        )
        assert "✗ $ sleep 30" in screen.text()
        assert screen.mode.editor.get_text() == "steer me\n\nlater"
        assert session.get_steering_messages() == [] and session.get_follow_up_messages() == []
        await screen.quit()

    run(scenario())
    roles = [m["role"] for m in session.messages]
    assert roles.count("user") == 1  # the queued texts were never sent


def test_tree_navigation_moves_the_leaf_and_returns_the_prompt(tmp_path):
    session = faux_session(tmp_path, [{"text": "one"}, {"text": "two"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("first" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "one" in screen.text())
        screen.send("second" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "two" in screen.text())
        screen.send("/tree" + ENTER)
        await screen.wait_text("Session tree")
        screen.send(UP)  # from the leaf ("two") to the prompt "second"
        await screen.wait_for(
            lambda: any(
                line.startswith("›") and "user: second" in line for line in screen.text().splitlines()
            )
        )
        screen.send(ENTER)
        await screen.wait_text("Summarize branch?")
        screen.send(ENTER)  # No summary
        await screen.wait_text("Navigated to the selected point")
        assert screen.mode.editor.get_text() == "second"
        await screen.quit()

    run(scenario())
    leaf = session.session_manager.get_leaf_entry()
    assert leaf["message"]["content"][0]["text"] == "one"


def test_extension_command_custom_overlay_and_status(tmp_path):
    session = faux_session(tmp_path, [])
    runner = ExtensionRunner(cwd=str(tmp_path), mode="tui")
    results: list[Any] = []

    class Picker:
        def __init__(self) -> None:
            self.keys: list[str] = []

        def render(self, width: int) -> list[str]:
            return [f"picker keys={len(self.keys)}"]

        def handle_input(self, data: str) -> None:
            self.keys.append(data)
            if data == "\r":
                self.done(self.keys[:-1])
            else:
                self.request_render()

        def handle_paste(self, text: str) -> None:
            self.keys.append(f"paste:{text}")
            self.request_render()

    def extension(tau: Any) -> None:
        async def pick(args: str, ctx: Any) -> None:
            ctx.ui.set_status("demo", f"picking {args}")
            results.append(await ctx.ui.custom(Picker()))
            ctx.ui.notify("picked")

        tau.register_command("pick", "Pick something", pick)

    async def scenario() -> None:
        await load_factory(runner, extension, path="demo.py")
        runner.bind(session)
        screen = Screen(session, runner)
        await screen.start()
        screen.send("/pi")
        await screen.wait_text("Pick something")  # completion menu lists the extension command
        screen.send("\x7f\x7fpick now" + ENTER)
        await screen.wait_text("picker keys=0")
        assert "picking now" in screen.text()
        screen.send("a")
        await screen.wait_text("picker keys=1")
        screen.send("\x1b[200~x\x1b[2Jy\x1b[201~")
        await screen.wait_text("picker keys=2")
        screen.send(UP)
        await screen.wait_text("picker keys=3")
        screen.send(ENTER)
        await screen.wait_text("picked")
        await screen.quit()

    run(scenario())
    assert results == [["a", "paste:x\x1b[2Jy", "\x1b[A"]]


def test_pasted_control_characters_and_bidi_never_reach_screen_or_file(tmp_path):
    session = faux_session(tmp_path, [{"text": "ok"}])

    async def scenario() -> str:
        screen = Screen(session)
        await screen.start()
        screen.send("\x1b[200~safe\x1b[2J\x1b]0;title\x07 \u202etxt\x00\x1b[201~")
        await screen.wait_for(lambda: "safe" in screen.mode.editor.get_text())
        screen.send(ENTER)
        await screen.wait_for(lambda: session.is_idle() and "ok" in screen.text())
        await screen.quit()
        return screen.text()

    text = run(scenario())
    assert "safe txt" in text
    path = session.session_manager.get_session_file()
    lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    users = [e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert users[0]["content"][0]["text"] == "safe txt"


def test_command_line_messages_run_in_order_and_a_resumed_session_is_shown(tmp_path):
    session = faux_session(tmp_path, [{"text": "answer one"}, {"text": "answer two"}])

    async def first_run() -> None:
        screen = Screen(session)
        await screen.start("message one", ("message two",))
        await screen.wait_for(lambda: session.is_idle() and "answer two" in screen.text())
        await screen.quit()

    run(first_run())
    texts = [m["content"][0]["text"] for m in session.messages if m["role"] == "user"]
    assert texts == ["message one", "message two"]

    async def second_run() -> str:
        screen = Screen(session)
        await screen.start()
        await screen.wait_text("answer two")
        text = screen.text()
        await screen.quit()
        return text

    text = run(second_run())
    assert text.index("message one") < text.index("answer one") < text.index("message two")


def test_tree_navigation_with_a_branch_summary(tmp_path):
    session = faux_session(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "what the branch did"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start("first", ("second",))
        await screen.wait_for(lambda: session.is_idle() and "two" in screen.text())
        screen.send("/tree" + ENTER)
        await screen.wait_text("Session tree")
        screen.send(UP)
        screen.send(ENTER)
        await screen.wait_text("Summarize branch?")
        screen.send("\x1b[B" + ENTER)  # Summarize
        await screen.wait_text("Navigated to the selected point")
        assert "[branch summary]" in screen.text()
        await screen.quit()

    run(scenario())
    summaries = [e for e in session.session_manager.get_entries() if e["type"] == "branch_summary"]
    assert len(summaries) == 1 and "what the branch did" in summaries[0]["summary"]


def test_a_full_disk_is_shown_the_run_closes_and_the_next_prompt_is_refused(tmp_path, monkeypatch):
    """Issue 16: the error names the session file; the app goes on; nothing runs while unsaved."""
    from full_disk import FullDisk

    # (Twice: whether the aborted run's follow-up request takes a step is not this test's business.)
    session = faux_session(tmp_path, [{"bash": "echo hi"}, {"text": "saved again"}, {"text": "saved again"}])
    disk = FullDisk(monkeypatch, 2)
    screens: list[Screen] = []

    def shown(text: str) -> bool:  # whatever the wrapping of the long message
        return text in " ".join(screens[0].text().split())

    async def scenario() -> str:
        screen = Screen(session)
        screens.append(screen)
        await screen.start()
        screen.send("run it" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and shown("no longer being saved"))
        assert screen.mode.editor.get_text() == "run it"  # kept, to send again once there is room
        screen.mode.editor.set_text("")
        screen.send("again" + ENTER)
        await screen.wait_for(lambda: shown("cannot run the prompt"))
        disk.full = False
        screen.mode.editor.set_text("")
        screen.send("now" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and shown("saved again"))
        await screen.quit()
        return screen.text()

    run(scenario())
    assert shown("cannot write session file") and shown("still cannot be written")
    assert session.session_manager.unsaved_count == 0  # written before the prompt that had room
