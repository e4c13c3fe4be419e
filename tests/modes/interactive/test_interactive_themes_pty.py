"""Themes in a real terminal (issue 32's audit: ``--theme`` and ``--use-theme`` were accepted and ignored).

``--theme FILE --use-theme NAME`` draws the conversation in the file's colours (the user's message on
its ``userMessageBg``); ``/settings`` has pi's Theme row, which switches the theme at once and saves
the ``theme`` setting; a theme file that cannot be used is reported at startup.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import ENTER, ESC, TIMEOUT, Tau
from test_interactive_settings_pty import agent_dir, selected, start

from tau.modes.themes.tokens import FALLBACKS, TOKENS

pexpect = pytest.importorskip("pexpect")


def ocean(path: Path, background: str = "#123456") -> Path:
    colors = {token: "#c0c0c0" for token in TOKENS if token not in FALLBACKS}
    colors.update(userMessageBg=background, text="", userMessageText="")
    path.write_text(json.dumps({"name": "ocean", "appearance": "dark", "colors": colors}))
    return path


def backgrounds_of(tau: Tau, text: str) -> set[str]:
    """The background colours of the cells of the screen line that shows ``text``."""
    for row, line in enumerate(tau.screen.display):
        column = line.find(text)
        if column >= 0:
            return {tau.screen.buffer[row][column + offset].bg for offset in range(len(text))}
    raise AssertionError(f"{text!r} is not on the screen:\n{tau.text()}")


def test_a_theme_file_colours_the_conversation_and_settings_switches_it(tmp_path, monkeypatch):
    monkeypatch.setenv("COLORTERM", "truecolor")  # the file's exact colours
    theme = ocean(tmp_path / "ocean.json")
    tau = start(tmp_path, [{"text": "the answer"}, {"text": "the second answer"}])
    tau.child.close(force=True)  # started without the theme: start again with it
    tau = Tau(tmp_path / "work", tmp_path / "script.json", "--theme", str(theme), "--use-theme", "ocean")
    try:
        tau.wait_text("faux/faux-1 • medium")
        tau.send("paint me" + ENTER)
        tau.wait_text("the answer")
        assert backgrounds_of(tau, "paint me") == {"123456"}

        tau.send("/settings" + ENTER)
        tau.wait_text("enter/space change")
        tau.send("theme")
        tau.wait(lambda: "Theme" in selected(tau) and "ocean" in selected(tau), "the Theme row on ocean")
        tau.send(ENTER)  # the next theme: system (the list wraps), used at once and saved
        tau.wait(lambda: selected(tau).rstrip().endswith("system"), "system")
        tau.send(ESC)
        # typed before the panel closed, the text would go to its search (or ESC and the first
        # letter would read as Alt+letter): wait until it is gone
        tau.wait(lambda: "enter/space change" not in tau.text(), "the settings panel to close")
        tau.send("in the terminal's colours" + ENTER)
        tau.wait_text("the second answer")
        assert "123456" not in backgrounds_of(tau, "in the terminal's colours")
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    assert json.loads((agent_dir() / "settings.json").read_text()) == {"theme": "system"}


def test_the_theme_setting_and_a_broken_theme_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COLORTERM", "truecolor")
    themes = agent_dir() / "themes"
    themes.mkdir(parents=True, exist_ok=True)
    ocean(themes / "ocean.json", "#654321")
    (themes / "broken.json").write_text('{"name": "broken", "colors": {}}')
    (agent_dir() / "settings.json").write_text(json.dumps({"theme": "ocean"}))
    tau = start(tmp_path, [{"text": "the answer"}])
    try:
        tau.wait_text("faux/faux-1 • medium")
        screen = "".join(tau.text().split())  # the notice wraps: compare without the breaks
        expected = (
            f"Theme {themes / 'broken.json'}: invalid theme: missing 51 required color token(s): accent,"
        )
        assert "".join(expected.split()) in screen
        assert "[Themes]\n  ocean" in tau.text()  # the startup lists the loaded theme files, as pi
        tau.send("from the setting" + ENTER)
        tau.wait_text("the answer")
        assert backgrounds_of(tau, "from the setting") == {"654321"}
    finally:
        tau.close()


def test_an_extensions_theme_from_resources_discover_is_used_by_use_theme(tmp_path, monkeypatch):
    """pi's ``resources_discover`` ``themePaths`` (issue 32's audit, left out before): the run's
    ``--use-theme`` names a theme only an extension's path holds; it colours the conversation."""
    monkeypatch.setenv("COLORTERM", "truecolor")
    (tmp_path / "ext").mkdir()
    reef = ocean(tmp_path / "ext" / "reef.json", "#0a0b0c")
    reef.write_text(reef.read_text().replace('"ocean"', '"reef"'))
    extension = tmp_path / "ext" / "reef_theme.py"
    extension.write_text(
        "def extension(tau):\n"
        "    async def discover(event, ctx):\n"
        f"        return {{'themePaths': [{str(reef)!r}]}}\n"
        "    tau.on('resources_discover', discover)\n"
    )
    tau = start(tmp_path, [{"text": "the answer"}])
    tau.child.close(force=True)
    tau = Tau(tmp_path / "work", tmp_path / "script.json", "-e", str(extension), "--use-theme", "reef")
    try:
        tau.wait_text("faux/faux-1 • medium")
        tau.send("under the sea" + ENTER)
        tau.wait_text("the answer")
        assert backgrounds_of(tau, "under the sea") == {"0a0b0c"}
        assert "Theme not found" not in tau.text()
    finally:
        tau.close()
