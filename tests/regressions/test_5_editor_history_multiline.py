"""Issue 5 (interactive mode): the editor's history and multi-line input, through real key input.

Up recalls the previous prompt into the editor; Ctrl-J inserts a newline instead of submitting, so
a two-line prompt reaches the model and the session file as one user message; a bracketed paste of
several lines does not submit either.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "modes" / "interactive"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from interactive_support import Screen, faux_session  # noqa: E402

ENTER, UP, CTRL_J = "\r", "\x1b[A", "\n"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def _user_texts(session: Any) -> list[str]:
    return [
        "".join(block.get("text", "") for block in m["content"])
        if isinstance(m["content"], list)
        else m["content"]
        for m in session.messages
        if m["role"] == "user"
    ]


def test_up_recalls_the_previous_prompt_and_ctrl_j_makes_a_multi_line_prompt(tmp_path):
    session = faux_session(tmp_path, [{"text": "first answer"}, {"text": "second answer"}, {"text": "third"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("first prompt" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "first answer" in screen.text())

        screen.send(UP)
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "first prompt")
        screen.mode.editor.set_text("")

        screen.send("line one" + CTRL_J + "line two")
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "line one\nline two")
        assert len(_user_texts(session)) == 1  # Ctrl-J did not submit
        screen.send(ENTER)
        await screen.wait_for(lambda: session.is_idle() and "second answer" in screen.text())

        screen.send("\x1b[200~pasted a\npasted b\x1b[201~")
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "pasted a\npasted b")
        assert len(_user_texts(session)) == 2  # the pasted newline did not submit
        screen.send(ENTER)
        await screen.wait_for(lambda: session.is_idle() and "third" in screen.text())
        await screen.quit()

    run(scenario())
    assert _user_texts(session) == ["first prompt", "line one\nline two", "pasted a\npasted b"]
    stored = [
        e["message"]["content"][0]["text"]
        for e in session.session_manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert stored == ["first prompt", "line one\nline two", "pasted a\npasted b"]
