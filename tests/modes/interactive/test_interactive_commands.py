"""Slash commands and completion in the interactive mode (in process, faux session)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from interactive_support import Screen, faux_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tau.modes.interactive.commands import Command
from tau.modes.interactive.editor import PromptCompleter

ENTER, CTRL_C = "\r", "\x03"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_name_session_model_fork_and_new(tmp_path):
    session = faux_session(tmp_path, [{"text": "first answer"}, {"text": "second answer"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        for prompt, answer in (("one", "first answer"), ("two", "second answer")):
            screen.send(prompt + ENTER)
            await screen.wait_for(lambda answer=answer: session.is_idle() and answer in screen.text())

        screen.send("/name my work" + ENTER)
        await screen.wait_text("Session name set: my work")
        assert session.get_session_name() == "my work"
        await screen.wait_text("• my work")  # the footer names the session

        screen.send("/session" + ENTER)
        await screen.wait_text("Messages: 2 user, 2 assistant")

        screen.send("/model faux-1" + ENTER)
        await screen.wait_text("Model: faux/faux-1")

        first_file = session.session_file
        screen.send("/fork" + ENTER)
        await screen.wait_text("Fork from message")
        screen.send(ENTER)  # the last user message is preselected
        await screen.wait_text("Forked to a new session")
        assert session.session_file != first_file
        assert screen.mode.editor.get_text() == "two"
        assert [m["role"] for m in session.messages if m["role"] != "system"] == ["user", "assistant"]

        screen.mode.editor.set_text("")
        screen.send("/new" + ENTER)
        await screen.wait_text("Started a new session")
        assert [m for m in session.messages if m["role"] != "system"] == []
        await screen.quit()

    run(scenario())


def test_quit_ends_the_mode(tmp_path):
    session = faux_session(tmp_path, [])

    async def scenario() -> int:
        screen = Screen(session)
        await screen.start()
        screen.send("/quit" + ENTER)
        return await asyncio.wait_for(screen.task, 30)

    assert run(scenario()) == 0


def test_a_refused_prompt_is_shown_and_kept_in_the_editor(tmp_path):
    session = faux_session(tmp_path, [])
    session.agent.state.model = None

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("hello" + ENTER)
        await screen.wait_text("No model selected")
        assert screen.mode.editor.get_text() == "hello"
        await screen.quit()

    run(scenario())


def _complete(completer: PromptCompleter, text: str) -> list[str]:
    return [
        c.text
        for c in completer.get_completions(
            Document(text, len(text)), CompleteEvent(completion_requested=True)
        )
    ]


def test_completion_of_commands_and_paths(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    commands = [Command("tree", "Navigate"), Command("todo", "Checklist"), Command("model", "Select")]
    completer = PromptCompleter(lambda: commands, str(tmp_path))
    assert _complete(completer, "/t") == ["tree", "todo"]
    assert _complete(completer, "/tree x") == []
    assert _complete(completer, "look at ./sr") == ["c"]
    assert _complete(completer, "look at @src/ma") == ["in.py"]
    assert _complete(completer, "plain words") == []


def test_stray_prints_become_notices_instead_of_breaking_the_screen(tmp_path):
    session = faux_session(tmp_path, [])

    async def scenario() -> str:
        screen = Screen(session)
        await screen.start()
        screen.mode.spawn(_print_later())
        await screen.wait_text("printed by a library")
        await screen.quit()
        return screen.stdout.getvalue()

    async def _print_later() -> None:
        import sys

        print("printed by a library \x1b[2J")
        sys.stderr.write("and a warning\n")

    raw = run(scenario())
    assert "\x1b[2J" not in raw and "and a warning" in raw


def test_compact_command_summarizes_and_reports(tmp_path):
    steps = [
        {"text": "answer one"},
        {"text": "answer two"},
        {"text": "## Goal\nsummary"},
        {"text": "prefix summary"},
    ]
    session = faux_session(tmp_path, steps, compaction={"keepRecentTokens": 1})

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start("one", ("two",))
        await screen.wait_for(lambda: session.is_idle() and "answer two" in screen.text())
        screen.send("/compact keep it short" + ENTER)
        await screen.wait_text("Compacted context")
        await screen.quit()

    run(scenario())
    kinds = [e["type"] for e in session.session_manager.get_entries()]
    assert "compaction" in kinds


def test_help_lists_the_commands_and_sends_nothing(tmp_path):
    """Issue 19: `/help` and a mistyped command were sent to the model (and cost a request)."""
    session = faux_session(tmp_path, [{"text": "never asked"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("/help" + ENTER)
        await screen.wait_text("Commands (never sent to the model):")
        text = screen.text()
        for name in ("/compact", "/tree", "/hotkeys", "/quit", "/help"):
            assert name in text
        screen.send("/halp me" + ENTER)
        await screen.wait_text("Unknown command /halp: /help lists the commands")
        assert screen.mode.editor.get_text() == "/halp me"  # kept, to be corrected
        await screen.quit()

    run(scenario())
    assert [m for m in session.messages if m["role"] == "user"] == []
    assert session.session_file is None or not Path(session.session_file).exists()  # no request


def test_a_path_at_the_start_of_a_prompt_is_still_a_prompt(tmp_path):
    session = faux_session(tmp_path, [{"text": "looked"}])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("/etc/hosts looks wrong" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "looked" in screen.text())
        await screen.quit()

    run(scenario())
    assert [m["content"][0]["text"] for m in session.messages if m["role"] == "user"] == [
        "/etc/hosts looks wrong"
    ]


def test_ctrl_c_that_clears_text_is_not_the_first_of_the_two_quit_presses(tmp_path):
    session = faux_session(tmp_path, [])

    async def scenario() -> int:
        screen = Screen(session)
        screen.mode.clock = lambda: 1000.0  # every press at the same instant
        await screen.start()
        screen.send("draft")
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "draft")
        screen.send(CTRL_C)
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "")
        screen.send(CTRL_C)  # the first press on an empty editor
        await screen.wait_text("Press Ctrl+C again to quit")
        assert not screen.task.done()
        screen.send(CTRL_C)
        return await asyncio.wait_for(screen.task, 30)

    assert run(scenario()) == 0


def _resources(tmp_path):
    from tau.agent.prompt_templates import PromptTemplate
    from tau.agent.resources import Resources
    from tau.agent.skills import Skill

    skill_file = tmp_path / "skills" / "pdf" / "SKILL.md"
    skill_file.parent.mkdir(parents=True)
    skill_file.write_text("---\nname: pdf\ndescription: PDFs.\n---\nPDF body.\n")
    template = PromptTemplate(
        "review", "Review changes", "Review: ${1:-all}", str(tmp_path / "review.md"), {}, "[focus]"
    )
    skill = Skill("pdf", "PDFs.", str(skill_file), str(skill_file.parent))
    return Resources(skills=[skill], prompts=[template])


def test_completion_lists_templates_with_their_hint_and_skills_unless_turned_off(tmp_path):
    from tau.agent.settings import Settings
    from tau.modes.interactive.commands import command_list, unknown_command

    session = faux_session(tmp_path, [], resources=_resources(tmp_path))
    completer = PromptCompleter(lambda: command_list(None, session), str(tmp_path))
    assert _complete(completer, "/rev") == ["review"]
    (shown,) = completer.get_completions(Document("/rev", 4), CompleteEvent(completion_requested=True))
    assert shown.display_text == "/review [focus]" and shown.display_meta_text == "Review changes"
    assert _complete(completer, "/skill:") == ["skill:pdf"]
    session._settings = Settings.in_memory({"enableSkillCommands": False})
    assert _complete(completer, "/skill:") == []
    assert unknown_command("/skill:pdf go", None, session) is None  # typed by hand it still works
    assert unknown_command("/skill:nope go", None, session) == "skill:nope"


def test_a_template_and_a_skill_command_reach_the_model_expanded(tmp_path):
    session = faux_session(tmp_path, [{"text": "one"}, {"text": "two"}], resources=_resources(tmp_path))

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("/review speed" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "one" in screen.text())
        screen.send("/skill:pdf now" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "two" in screen.text())
        await screen.quit()

    run(scenario())
    texts = [m["content"][0]["text"] for m in session.messages if m["role"] == "user"]
    assert texts[0] == "Review: speed"
    assert texts[1].startswith('<skill name="pdf"') and texts[1].endswith("PDF body.\n</skill>\n\nnow")
