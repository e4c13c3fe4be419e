"""``/resume`` switches the running session to another file (``AgentSession.switch_session``)."""

from __future__ import annotations

import asyncio
from typing import Any

from interactive_support import Screen, faux_session

ENTER = "\r"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_resume_switches_to_the_chosen_session_in_place(tmp_path):
    session = faux_session(tmp_path, [{"text": "first answer"}, {"text": "second answer"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("one" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "first answer" in screen.text())
        first_file = session.session_file
        screen.send("/new" + ENTER)
        await screen.wait_text("Started a new session")
        screen.send("two" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "second answer" in screen.text())
        screen.send("/resume" + ENTER)
        await screen.wait_text("Resume Session")
        # the open session is listed first (the newest), as pi lists it, and cannot be deleted
        screen.send("\x04")
        await screen.wait_text("Cannot delete the currently active session")
        screen.send("\x1b[B" + ENTER)  # the other session
        await screen.wait_for(lambda: session.session_file == first_file)
        # the view shows the resumed branch again, below what was on the screen
        await screen.wait_for(lambda: screen.text().rsplit("second answer", 1)[-1].count("first answer") == 1)
        assert [m["role"] for m in session.messages if m["role"] != "system"] == ["user", "assistant"]
        assert screen.mode.switch_to is None  # switched in place, the mode keeps running
        await screen.quit()

    run(scenario())
