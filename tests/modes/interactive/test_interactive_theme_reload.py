"""A theme that changes while tau runs, on the screen (issue 32's audit, left out: pi's theme file watch
and extensions' ``resources_discover`` themes).

The mode looks at the active theme's file on a timer; these tests make that look themselves
(``mode.check_theme_file()``), so nothing waits for the timer: an edit draws the next rows in the new
colours, a broken edit says why and keeps the colours. An extension's theme paths are listed by
``ctx.ui.get_all_themes()`` and ``/settings``, and the ``theme`` setting naming one of them applies.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from interactive_support import Screen, faux_session

from tau.extension.loader import load_factory
from tau.extension.runner import ExtensionRunner
from tau.modes.themes.tokens import FALLBACKS, TOKENS

ENTER = "\r"


def theme_file(path: Path, background: str, *, tick: int, name: str = "ocean") -> Path:
    colors = {token: "#c0c0c0" for token in TOKENS if token not in FALLBACKS}
    colors.update(userMessageBg=background, text="", userMessageText="")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "appearance": "dark", "colors": colors}))
    stamp = 1_700_000_000_000_000_000 + tick * 1_000_000_000  # a distinct time per edit: no clock needed
    os.utime(path, ns=(stamp, stamp))
    return path


def backgrounds_of(screen: Screen, text: str) -> set[str]:
    """The background colours of the cells showing ``text`` (its last appearance on the screen)."""
    screen.text()
    for row in range(len(screen.screen.display) - 1, -1, -1):
        column = screen.screen.display[row].find(text)
        if column >= 0:
            return {screen.screen.buffer[row][column + offset].bg for offset in range(len(text))}
    raise AssertionError(f"{text!r} is not on the screen:\n{screen.text()}")


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


@pytest.fixture(autouse=True)
def truecolor(monkeypatch):
    monkeypatch.setenv("COLORTERM", "truecolor")  # the file's exact colours in the cells


def test_an_edit_of_the_theme_file_redraws_in_its_colours_and_a_broken_one_keeps_them(tmp_path):
    path = theme_file(tmp_path / "ocean.json", "#123456", tick=0)
    session = faux_session(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])

    async def scenario() -> None:
        screen = Screen(session, theme_paths=[str(path)], use_theme="ocean")
        await screen.start()
        screen.send("first prompt" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "one" in screen.text())
        assert backgrounds_of(screen, "first prompt") == {"123456"}

        theme_file(path, "#654321", tick=1)
        screen.mode.check_theme_file()
        screen.send("second prompt" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "two" in screen.text())
        assert backgrounds_of(screen, "second prompt") == {"654321"}
        assert backgrounds_of(screen, "first prompt") == {"123456"}  # printed rows keep their colours

        path.write_text('{"name": "ocean", "colors": {"accent": "#ffffff"}}')  # half-way through an edit
        os.utime(path, ns=(2, 2))
        screen.mode.check_theme_file()
        await screen.wait_for(lambda: "changedbutcannotbeused" in "".join(screen.text().split()))
        await screen.wait_for(lambda: not screen.mode._flushing)  # printed: the editor takes keys again
        flat = "".join(screen.text().split())
        assert "missing50requiredcolortoken(s)" in flat and 'keepingthecoloursof"ocean"' in flat
        screen.send("third prompt" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "three" in screen.text())
        assert backgrounds_of(screen, "third prompt") == {"654321"}
        await screen.quit()

    run(scenario())


def test_an_extensions_theme_is_listed_and_the_setting_naming_it_applies(tmp_path):
    """pi's ``resources_discover`` ``themePaths``: the mode adds them once extensions named them."""
    theme_file(tmp_path / "ext" / "themes" / "reef.json", "#0a0b0c", tick=0, name="reef")
    session = faux_session(tmp_path, [{"text": "answered"}])
    session.settings.apply_overrides({"theme": "reef"})
    runner = ExtensionRunner(cwd=str(tmp_path), mode="tui")
    listed: list[Any] = []

    def extension(tau: Any) -> None:
        async def discover(event: Any, ctx: Any) -> dict[str, Any]:
            return {"themePaths": ["ext/themes"]}

        async def themes(args: str, ctx: Any) -> None:
            listed.extend(ctx.ui.get_all_themes())

        tau.on("resources_discover", discover)
        tau.register_command("themes", "List the themes", themes)

    async def scenario() -> None:
        await load_factory(runner, extension, path="ext.py")
        runner.bind(session)
        screen = Screen(session, runner)
        assert screen.mode.themes.active.name == "system"  # not known yet, and not warned about
        found = await runner.emit({"type": "resources_discover", "cwd": str(tmp_path), "reason": "startup"})
        screen.mode.add_theme_paths([item["path"] for item in found["themePaths"]])
        await screen.start()
        screen.send("in the reef" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "answered" in screen.text())
        assert backgrounds_of(screen, "in the reef") == {"0a0b0c"}
        assert "Theme not found" not in screen.text()
        screen.send("/themes" + ENTER)
        await screen.wait_for(lambda: bool(listed))
        screen.send("/settings" + ENTER)
        await screen.wait_text("enter/space change")
        await screen.wait_for(
            lambda: any(line.split() == ["Theme", "reef"] for line in screen.text().splitlines())
        )
        assert screen.mode.themes.names() == ["system", "dark", "light", "reef"]  # the row's values
        await screen.quit()

    run(scenario())
    assert {"name": "reef", "path": str(tmp_path / "ext" / "themes" / "reef.json")} in listed


def test_a_theme_setting_naming_no_theme_is_warned_about_after_the_extensions_answered(tmp_path):
    session = faux_session(tmp_path, [])
    session.settings.apply_overrides({"theme": "nowhere"})
    runner = ExtensionRunner(cwd=str(tmp_path), mode="tui")

    def extension(tau: Any) -> None:
        tau.on("resources_discover", lambda event, ctx: {"themePaths": []})

    async def scenario() -> str:
        await load_factory(runner, extension, path="ext.py")
        runner.bind(session)
        screen = Screen(session, runner)
        screen.mode.add_theme_paths([])
        await screen.start()
        await screen.wait_text("Theme not found: nowhere; using system")
        text = screen.text()
        await screen.quit()
        return text

    assert run(scenario()).count("Theme not found: nowhere") == 1


def test_the_running_mode_looks_at_the_theme_file_by_itself(tmp_path):
    """The timer that makes the look while the user works (bounded wait: it looks once a second)."""
    path = theme_file(tmp_path / "ocean.json", "#123456", tick=0)
    session = faux_session(tmp_path, [])

    async def scenario() -> None:
        screen = Screen(session, theme_paths=[str(path)], use_theme="ocean")
        await screen.start()
        theme_file(path, "#654321", tick=1)
        await screen.wait_for(lambda: screen.mode.themes.active.colors["userMessageBg"] == "#654321")
        await screen.quit()

    run(scenario())
