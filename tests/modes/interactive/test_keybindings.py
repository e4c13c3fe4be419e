"""pi 1.6's ``keybindings.json`` in the interactive mode: the file's entries replace an action's keys
(``[]`` unbinds it), several keys per action, the hints show the keys in use, and a bad file or
entry is reported at start while the rest applies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from interactive_support import Screen, faux_session

from tau.modes.interactive.keybindings import (
    ACTIONS,
    Keybindings,
    install,
    load_keybindings,
    prompt_toolkit_keys,
)
from tau.modes.interactive.session_picker import SessionPicker
from tau.session.listing import SessionInfo

ENTER, CTRL_O, CTRL_E, CTRL_J, ALT_N = "\r", "\x0f", "\x05", "\n", "\x1bn"
LONG_OUTPUT = "for i in $(seq 1 30); do echo line$i; done"


@pytest.fixture(autouse=True)
def default_keys():
    """The keys are process-wide (as pi's): leave the defaults for the next test."""
    yield
    install(Keybindings())


def write_keys(agent_dir: Path, config: Any) -> Path:
    agent_dir.mkdir(parents=True, exist_ok=True)
    path = agent_dir / "keybindings.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


# -- the file -------------------------------------------------------------------------------------


def test_no_file_is_the_defaults(isolated_agent_dir):
    keys = load_keybindings(isolated_agent_dir)
    assert keys.warnings == [] and keys.user == {}
    assert keys.keys("app.tools.expand") == ("ctrl+o",)
    assert keys.matches("ctrl+c", "tui.select.cancel") and keys.matches("escape", "tui.select.cancel")


def test_entries_replace_unbind_and_take_several_keys(isolated_agent_dir):
    write_keys(
        isolated_agent_dir,
        {
            "$schema": "https://pi.dev/schemas/keybindings.schema.json",
            "app.tools.expand": "ctrl+e",
            "tui.input.newLine": ["ctrl+j", "alt+n", "ctrl+j"],
            "app.model.cycleForward": [],
            "app.session.new": "esc",  # pi's alias of escape
        },
    )
    keys = load_keybindings(isolated_agent_dir)
    assert keys.warnings == []
    assert keys.keys("app.tools.expand") == ("ctrl+e",)
    assert not keys.matches("ctrl+o", "app.tools.expand")
    assert keys.keys("tui.input.newLine") == ("ctrl+j", "alt+n")  # a repeated key once, as pi
    assert keys.keys("app.model.cycleForward") == () and keys.text("app.model.cycleForward") == ""
    assert keys.matches("escape", "app.session.new")
    assert keys.text("tui.input.newLine", capitalize=True) == "Ctrl+J/Alt+N"


def test_pi_legacy_names_are_read_and_the_new_id_wins(isolated_agent_dir):
    write_keys(
        isolated_agent_dir, {"expandTools": "ctrl+e", "interrupt": "ctrl+q", "app.interrupt": "ctrl+g"}
    )
    keys = load_keybindings(isolated_agent_dir)
    assert keys.keys("app.tools.expand") == ("ctrl+e",)
    assert keys.keys("app.interrupt") == ("ctrl+g",)
    assert keys.warnings == []


def test_bad_entries_are_named_once_each_and_the_rest_applies(isolated_agent_dir):
    path = write_keys(
        isolated_agent_dir,
        {
            "app.tools.expnd": "ctrl+e",
            "app.clear": "Ctrl+X",  # pi's modifiers are lower-case
            "app.exit": ["ctrl+q", "ctrl+shift+ctrl+q"],  # one bad key: the whole entry goes, as pi
            "app.interrupt": 5,
            "tui.editor.yank": "ctrl+y",
            "app.thinking.cycle": "ctrl+t",
            "app.message.followUp": "ctrl+f",
        },
    )
    keys = load_keybindings(isolated_agent_dir)
    assert keys.user == {"app.message.followUp": ("ctrl+f",)}
    assert keys.keys("app.clear") == ("ctrl+c",) and keys.keys("app.exit") == ("ctrl+d",)
    assert keys.warnings[0] == f'Keybindings {path}: unknown action "app.tools.expnd"; ignored'
    assert keys.warnings[1] == (
        f'Keybindings {path}: app.clear: "Ctrl+X" is not a key (write "ctrl+x"); using the default'
    )
    assert keys.warnings[2].startswith(f'Keybindings {path}: app.exit: "ctrl+shift+ctrl+q" is not a key')
    assert keys.warnings[3].startswith(f"Keybindings {path}: app.interrupt: 5 is not a key")
    assert keys.warnings[4] == (
        f"Keybindings {path}: not supported by tau (ignored): tui.editor.yank, app.thinking.cycle"
    )
    assert len(keys.warnings) == 5


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"ctrl+e"'])
def test_a_broken_file_is_named_and_ignored(isolated_agent_dir, text):
    path = write_keys(isolated_agent_dir, text)
    keys = load_keybindings(isolated_agent_dir)
    assert keys.user == {}
    assert len(keys.warnings) == 1 and keys.warnings[0].startswith(f"Keybindings {path}: ")
    assert keys.warnings[0].endswith("using the default keys")


def test_a_folder_or_a_pipe_in_the_files_place_is_named_and_never_waited_on(isolated_agent_dir):
    import os

    (isolated_agent_dir / "keybindings.json").mkdir(parents=True)
    keys = load_keybindings(isolated_agent_dir)
    assert keys.warnings == [
        f"Keybindings {isolated_agent_dir / 'keybindings.json'}: not a regular file; using the default keys"
    ]
    (isolated_agent_dir / "keybindings.json").rmdir()
    os.mkfifo(isolated_agent_dir / "keybindings.json")
    assert (
        load_keybindings(isolated_agent_dir)
        .warnings[0]
        .endswith("not a regular file; using the default keys")
    )


def test_every_default_key_reaches_prompt_toolkit_and_pi_syntax_maps_to_terminal_keys():
    for action, (defaults, _) in ACTIONS.items():
        if action.startswith("app.session.") and action not in (
            "app.session.new",
            "app.session.tree",
            "app.session.fork",
            "app.session.resume",
        ):
            continue  # the picker's keys are read from the raw input, not bound
        for key in defaults:
            assert prompt_toolkit_keys(key) is not None, (action, key)
    assert prompt_toolkit_keys("alt+enter") == ("escape", "enter")
    assert prompt_toolkit_keys("ctrl+left") == ("c-left",)
    assert prompt_toolkit_keys("shift+tab") == ("s-tab",)
    assert prompt_toolkit_keys("f5") == ("f5",)
    assert prompt_toolkit_keys("shift+enter") is None  # the terminal sends Enter
    assert prompt_toolkit_keys("super+k") is None


# -- the mode ---------------------------------------------------------------------------------------


def test_a_remapped_action_works_and_its_old_key_no_longer_does(tmp_path, isolated_agent_dir):
    write_keys(isolated_agent_dir, {"app.tools.expand": "ctrl+e"})
    session = faux_session(tmp_path, [{"bash": LONG_OUTPUT}, {"text": "done"}])

    async def scenario() -> str:
        screen = Screen(session, rows=60)
        await screen.start()
        screen.send("run it" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "done" in screen.text())
        assert "(ctrl+e to expand)" in screen.text()  # the hint names the user's key
        screen.send(CTRL_E)
        await screen.wait_for(lambda: screen.mode.controller.tools_expanded)
        await screen.wait_text("ctrl+e: 1 row printed above, in full")
        # Keys are handled in order: had Ctrl+O still toggled, /hotkeys would find the rows collapsed.
        screen.send(CTRL_O + "/hotkeys" + ENTER)
        await screen.wait_text("Ctrl+E expand tool output")
        assert screen.mode.controller.tools_expanded
        text = screen.text()
        await screen.quit()
        return text

    text = run(scenario())
    assert "Ctrl+O" not in text


def test_several_keys_for_one_action_and_an_unbound_default(tmp_path, isolated_agent_dir):
    write_keys(isolated_agent_dir, {"tui.input.newLine": ["ctrl+j", "alt+n"], "app.exit": []})
    session = faux_session(tmp_path, [])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("a" + ALT_N + "b" + CTRL_J + "c")
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "a\nb\nc")
        screen.mode.editor.set_text("")
        screen.send("\x04" + "x")  # Ctrl+D unbound: no quit on the empty editor; typing goes on
        await screen.wait_for(lambda: screen.mode.editor.get_text() == "x")
        assert not screen.task.done()
        await screen.quit()

    run(scenario())


def test_a_bad_file_is_reported_at_start_and_the_defaults_apply(tmp_path, isolated_agent_dir):
    path = write_keys(isolated_agent_dir, '{"app.tools.expand": "ctrl+e",')
    session = faux_session(tmp_path, [{"bash": LONG_OUTPUT}, {"text": "done"}])

    async def scenario() -> None:
        screen = Screen(session, rows=60, columns=240)
        await screen.start()
        await screen.wait_text("not valid JSON")
        assert f"Keybindings {path}: not valid JSON" in screen.text()
        screen.send("run it" + ENTER)
        await screen.wait_for(lambda: session.is_idle() and "done" in screen.text())
        assert "(ctrl+o to expand)" in screen.text()
        screen.send(CTRL_O)
        await screen.wait_for(lambda: screen.mode.controller.tools_expanded)
        await screen.quit()

    run(scenario())


def test_bad_entries_are_reported_at_start_and_the_good_ones_apply(tmp_path, isolated_agent_dir):
    write_keys(isolated_agent_dir, {"app.tools.expnd": "ctrl+e", "app.tools.expand": "ctrl+e"})
    session = faux_session(tmp_path, [])

    async def scenario() -> None:
        screen = Screen(session, columns=160)
        await screen.start()
        await screen.wait_text('unknown action "app.tools.expnd"; ignored')
        screen.send(CTRL_E)
        await screen.wait_for(lambda: screen.mode.controller.tools_expanded)
        await screen.quit()

    run(scenario())


def test_a_session_action_bound_by_the_user_and_ctrl_l_open_their_selectors(tmp_path, isolated_agent_dir):
    write_keys(isolated_agent_dir, {"app.session.resume": "ctrl+t"})
    session = faux_session(tmp_path, [])

    async def scenario() -> None:
        screen = Screen(session)
        await screen.start()
        screen.send("\x14")  # Ctrl+T
        await screen.wait_for(lambda: screen.mode.overlays.active is not None)
        screen.send("\x1b")
        await screen.wait_for(lambda: screen.mode.overlays.active is None)
        screen.send("\x0c")  # Ctrl+L: pi's default key of app.model.select
        await screen.wait_for(lambda: screen.mode.overlays.active is not None)
        assert "faux-1" in screen.text()
        screen.send("\x1b")
        await screen.wait_for(lambda: screen.mode.overlays.active is None)
        await screen.quit()

    run(scenario())


# -- the session picker and the lists ---------------------------------------------------------------

WHEN = __import__("datetime").datetime(2026, 12, 7)
SESSIONS = [
    SessionInfo(f"/s/{i}.jsonl", i, "/work/proj", None, None, WHEN, WHEN, 2, text, text)
    for i, text in (("0001", "first"), ("0002", "second"))
]


def test_the_picker_reads_its_keys_from_the_file(isolated_agent_dir):
    write_keys(
        isolated_agent_dir,
        {"app.session.toggleSort": "ctrl+t", "app.session.togglePath": [], "tui.select.down": "ctrl+j"},
    )
    install(load_keybindings(isolated_agent_dir))
    picker = SessionPicker(lambda: SESSIONS, lambda: SESSIONS)
    picker.request_render = lambda: None
    sort = picker.sort
    picker.handle_input("\x13")  # Ctrl+S: not the sort key any more
    assert picker.sort == sort
    picker.handle_input("\x14")  # Ctrl+T
    assert picker.sort != sort
    picker.handle_input("\x10")  # Ctrl+P: unbound
    assert picker.show_path is False
    picker.handle_input("\x1b[B")  # Down: not a list key any more
    assert picker.index == 0
    picker.handle_input("\n")  # Ctrl+J
    assert picker.index == 1
    hints = "\n".join(picker.render(120))
    assert "ctrl+t sort" in hints and "path (" not in hints


def test_the_selectors_confirm_cancel_and_move_on_the_users_keys(isolated_agent_dir):
    from tau.modes.interactive.dialogs import SelectDialog

    write_keys(
        isolated_agent_dir,
        {"tui.select.cancel": "ctrl+g", "tui.select.confirm": ["enter", "tab"], "tui.select.up": "ctrl+k"},
    )
    install(load_keybindings(isolated_agent_dir))
    results: list[Any] = []
    dialog = SelectDialog("Pick", ["alpha", "beta", "gamma"])
    dialog.request_render = lambda: None
    dialog.done = results.append  # type: ignore[method-assign]
    for data in ("\x1b", "\x03", "\x1b[A"):  # Esc, Ctrl+C and Up: not list keys any more
        dialog.handle_input(data)
    assert results == [] and dialog.index == 0
    dialog.handle_input("\x0b")  # Ctrl+K: up (wraps to the last)
    dialog.handle_input("\t")
    assert results == ["gamma"]
    dialog.handle_input("\x07")  # Ctrl+G
    assert results == ["gamma", None]


# -- against real pi 1.6 ---------------------------------------------------------------------------

MIXED = {
    "app.tools.expand": "ctrl+e",
    "expandTools": "ctrl+y",  # the old name: the new id's entry wins
    "interrupt": "ctrl+g",  # the old name alone applies
    "app.clear": "Ctrl+X",
    "app.exit": ["ctrl+q", "ctrl+shift+ctrl+q"],
    "tui.input.newLine": ["ctrl+j", "alt+n", "ctrl+j"],
    "app.model.cycleForward": [],
    "app.model.cycleBackward": 5,
    "app.session.new": "esc",
    "app.session.tree": "pageup",
    "app.session.fork": "ctrl++",
    "app.session.resume": "shift+ctrl+alt+super+f12",
    "tui.select.cancel": ["escape", ""],
    "tui.select.up": "ctrl+[",
}


def test_the_entries_tau_applies_are_the_ones_real_pi_applies(isolated_agent_dir):
    import os
    import shutil
    import subprocess

    pi_bin = os.environ.get("PI_BIN")
    if not pi_bin:
        pytest.skip("set PI_BIN to real pi 1.6 (tests/regressions/data/pi22/README.md)")
    node = os.path.join(os.path.dirname(pi_bin), "node")
    node = node if os.path.exists(node) else shutil.which("node") or "node"
    module = Path(os.path.realpath(pi_bin)).parents[1] / "core" / "keybindings.js"
    path = write_keys(isolated_agent_dir, MIXED)
    script = (
        f"import({json.dumps(module.as_uri())}).then(m => "
        "console.log(JSON.stringify(m.KeybindingsManager.loadFromFile(process.argv[1]))))"
    )
    done = subprocess.run([node, "-e", script, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pi = json.loads(done.stdout)
    pi_applied = {
        action: tuple(dict.fromkeys(value if isinstance(value, list) else [value]))
        for action, value in pi.items()
    }
    assert load_keybindings(isolated_agent_dir).user == pi_applied
