"""The /todo overlay: every key, Kitty CSI-u input, pastes that never run a command, inert rendering."""

from __future__ import annotations

import re

import pytest

from tau.bundled.todo.keys import clean, parse_keys
from tau.bundled.todo.overlay import TodoOverlay
from tau.bundled.todo.store import Store
from tau.session import SessionManager

ANSI = re.compile(r"\x1b\[[0-9;]*m")


# ------------------------------------------------------------------------------------------ keys


@pytest.mark.parametrize(
    ("data", "keys"),
    [
        ("\x1b[A\x1b[B\x1bOA\x1bOB", ["up", "down", "up", "down"]),
        ("\x1b[5~\x1b[6~", ["pageup", "pagedown"]),
        ("\x1b[H\x1b[F\x1bOH\x1bOF\x1b[1~\x1b[4~\x1b[7~\x1b[8~", ["home", "end"] * 4),
        ("\r", ["enter"]),
        ("\x1b", ["escape"]),
        ("\x03", ["ctrl+c"]),
        ("\x7f\x08", ["backspace", "backspace"]),
        ("adD", ["a", "d", "D"]),
        ("\x1b[97u", ["a"]),  # Kitty CSI-u
        ("\x1b[100;2u", ["D"]),  # shift+d
        ("\x1b[100:68;2u", ["D"]),  # with the shifted key reported
        ("\x1b[68u", ["D"]),
        ("\x1b[99;5u", ["ctrl+c"]),
        ("\x1b[97;3u", ["alt+a"]),
        ("\x1b[97;1:3u", []),  # a release
        ("\x1b[97;1:1u", ["a"]),  # an explicit press
        ("\x1b[13u\x1b[13;2u\x1b[27u", ["enter", "shift+enter", "escape"]),
        ("\x1b[1;2A", ["shift+up"]),
        ("\x1ba", ["alt+a"]),
        ("\x1a", ["ctrl+z"]),
        ("\x1b[57441u", []),  # a functional key in the private-use range
    ],
)
def test_parse_keys(data, keys):
    assert parse_keys(data) == keys


def test_clean_removes_terminal_instructions_and_bidi_controls():
    text = "a\x1b[31mred\x1b[0m\x1b]0;title\x07b\u202ec\u2066\x9b\x07d\te"
    assert clean(text) == "aredbc" + "d e"
    assert clean("one\ntwo\r\nthree") == "one two three"
    assert clean("one\ntwo\r\nthree", multiline=True) == "one\ntwo\nthree"


# --------------------------------------------------------------------------------------- overlay


class Host:
    """What ui.custom gives a component: request_render and done."""

    def __init__(self, overlay):
        self.renders = 0
        self.results = []
        overlay.bind(self.render, self.results.append)

    def render(self):
        self.renders += 1


@pytest.fixture
def store():
    session = SessionManager.in_memory("/tmp/proj")
    store = Store(session, session.append_custom_entry)
    store.recover()
    return store


def add(store, title, deps=(), status="pending"):
    store.mutate(
        {
            "action": "add",
            "baseRevision": store.state["revision"],
            "title": title,
            "dependencies": list(deps),
            "status": status,
        }
    )
    return store.state["tasks"][-1]["id"]


def open_overlay(store, height=12):
    overlay = TodoOverlay(store, height=lambda: height)
    host = Host(overlay)
    return overlay, host


def screen(overlay, width=100):
    return [ANSI.sub("", line) for line in overlay.render(width)]


def titles(store):
    return [t["title"] for t in store.state["tasks"]]


def test_the_list_shows_tasks_and_the_keys(store):
    a = add(store, "write parser")
    add(store, "test parser", deps=[a])
    overlay, _ = open_overlay(store)
    lines = screen(overlay)
    assert lines[0] == "Todo · revision 2 · 0/2 done (in-memory, not persistent after process exit)"
    assert "> ☐ write parser" in lines
    assert "  ☐ test parser  (after 1)" in lines
    assert any(line.startswith("↑↓ PgUp/PgDn Home/End · Enter inspect · a add") for line in lines)


def test_navigation_selects_by_stable_id(store):
    ids = [add(store, f"task {n}") for n in range(30)]
    overlay, host = open_overlay(store, height=12)  # a page of 6 rows
    overlay.handle_input("\x1b[B\x1b[B")
    assert overlay.selected == ids[2]
    overlay.handle_input("\x1b[6~")
    assert overlay.selected == ids[8]
    overlay.handle_input("\x1b[5~\x1b[A")
    assert overlay.selected == ids[1]
    overlay.handle_input("\x1b[F")
    assert overlay.selected == ids[29]
    assert "> ☐ task 29" in screen(overlay)
    overlay.handle_input("\x1b[H")
    assert overlay.selected == ids[0]
    # another edit reorders nothing, but removes the selected task: the selection moves to a live id
    store.mutate({"action": "remove", "baseRevision": store.state["revision"], "id": ids[0]})
    screen(overlay)
    assert overlay.selected == ids[1]
    assert host.renders == 5


def test_add_form_title_description_and_dependencies(store):
    first = add(store, "first")
    overlay, _ = open_overlay(store)
    overlay.handle_input("a")
    assert overlay.view == "form"
    overlay.handle_input("second")
    overlay.handle_input("\r")  # to the description
    overlay.handle_input("line one")
    overlay.handle_input("\x1b[13;2u")  # shift+enter: newLine wins
    overlay.handle_input("line two")
    overlay.handle_input("\r")  # submit key: on to the dependencies, text kept
    assert overlay._form.description.text == "line one\nline two"
    overlay.handle_input(" ")  # toggle the only other task
    overlay.handle_input("\r")
    task = store.state["tasks"][-1]
    assert (task["title"], task["description"], task["dependencies"]) == (
        "second",
        "line one\nline two",
        [first],
    )
    assert overlay.view == "list" and overlay.selected == task["id"]
    assert screen(overlay)[-1].startswith("todo revision 2 (1 change: ")


def test_kitty_csi_u_runs_character_commands(store):
    add(store, "a task")
    overlay, _ = open_overlay(store)
    overlay.handle_input("\x1b[97u")  # a
    assert overlay.view == "form"
    overlay.handle_input("\x1b[27u")  # escape
    assert overlay.view == "list"
    overlay.handle_input("\x1b[100;2u")  # shift+d = D: clear
    assert overlay.view == "confirm" and "Clear all 1 tasks?" in screen(overlay)[2]
    overlay.handle_input("\x1b[121u")  # y
    assert store.state["tasks"] == []


def test_a_paste_never_runs_a_command(store):
    add(store, "keep me")
    overlay, _ = open_overlay(store)
    for text in ("a", "d", "D", "e", "s", "\r", "\x1b", "\x03", "dy"):
        overlay.handle_paste(text)
    assert overlay.view == "list" and not overlay.closed and titles(store) == ["keep me"]
    overlay.handle_input("d")
    overlay.handle_paste("y")  # a pasted y does not confirm
    assert overlay.view == "confirm" and titles(store) == ["keep me"]


def test_a_paste_into_a_field_is_made_inert(store):
    overlay, _ = open_overlay(store)
    overlay.handle_input("a")
    overlay.handle_paste("evil\x1b[2J\u202etitle\nnext")
    assert overlay._form.title.text == "eviltitle next"
    overlay.handle_input("\r")
    overlay.handle_paste("one\ntwo\x1b]0;x\x07")
    assert overlay._form.description.text == "one\ntwo"


def test_remove_needs_d_then_a_distinct_y(store):
    add(store, "one")
    add(store, "two")
    overlay, _ = open_overlay(store)
    overlay.handle_input("dd")  # the second d is not a confirmation: cancelled
    assert titles(store) == ["one", "two"] and screen(overlay)[-1] == "cancelled"
    overlay.handle_input("dn")
    assert titles(store) == ["one", "two"]
    overlay.handle_input("dy")
    assert titles(store) == ["two"]


def test_clear_needs_capital_d_then_y(store):
    add(store, "one")
    overlay, _ = open_overlay(store)
    overlay.handle_input("Dx")
    assert titles(store) == ["one"]
    overlay.handle_input("Dy")
    assert titles(store) == []


def test_status_changes_and_the_dependency_gates_show_their_error(store):
    first = add(store, "first")
    add(store, "second", deps=[first])
    overlay, _ = open_overlay(store)
    overlay.handle_input("\x1b[B")  # select second
    overlay.handle_input("s")
    assert overlay.view == "status"
    overlay.handle_input("\x1b[B\r")  # in_progress
    assert screen(overlay)[-1].startswith("Error: prerequisites of ")
    overlay.handle_input("\x1b[A")  # back to first
    overlay.handle_input("s\x1b[B\x1b[B\r")  # completed
    assert store.state["tasks"][0]["status"] == "completed"
    overlay.handle_input("\x1b[Bs\x1b[B\r")  # second in progress now allowed
    assert store.state["tasks"][1]["status"] == "in_progress"
    overlay.handle_input("\x1b[As\x1b[A\x1b[A\r")  # reopen first: refused, nothing cascades
    assert "cannot reopen" in screen(overlay)[-1]
    assert [t["status"] for t in store.state["tasks"]] == ["completed", "in_progress"]


def test_edit_prefills_inertly_and_an_unchanged_edit_keeps_the_data(store):
    add(store, "title\u202e with bidi")
    revision = store.state["revision"]
    overlay, _ = open_overlay(store)
    overlay.handle_input("e")
    assert overlay._form.title.text == "title with bidi"
    overlay.handle_input("\r\r\r")
    assert screen(overlay)[-1] == "no changes"
    assert store.state["revision"] == revision and store.state["tasks"][0]["title"] == "title\u202e with bidi"
    overlay.handle_input("e\r")  # title untouched, description edited
    overlay.handle_input("details\r\r")
    task = store.state["tasks"][0]
    assert task["title"] == "title\u202e with bidi" and task["description"] == "details"


def test_undo_stops_at_the_prefill(store):
    add(store, "abc")
    overlay, _ = open_overlay(store)
    overlay.handle_input("e")
    overlay.handle_input("de\x7f")
    assert overlay._form.title.text == "abcd"
    overlay.handle_input("\x1a\x1a\x1a\x1a\x1a")
    assert overlay._form.title.text == "abc"


def test_a_form_belongs_to_its_revision(store):
    add(store, "one")
    overlay, _ = open_overlay(store)
    overlay.handle_input("a")
    overlay.handle_input("late")
    add(store, "meanwhile")  # the model changed the list while the form was open
    overlay.handle_input("\r\r\r")
    assert screen(overlay)[-1].startswith("Error: revision conflict (baseRevision 1, current 2)")
    assert titles(store) == ["one", "meanwhile"]


def test_enter_inspects_and_the_navigation_keys_scroll_details(store):
    first = add(store, "first")
    store.mutate(
        {
            "action": "add",
            "baseRevision": store.state["revision"],
            "title": "second",
            "description": "\n".join(f"line {n}" for n in range(20)),
            "dependencies": [first],
        }
    )
    overlay, _ = open_overlay(store, height=10)
    overlay.handle_input("\x1b[B\r")
    lines = screen(overlay)
    assert lines[2] == "second" and lines[3].startswith("status: pending   id: ")
    overlay.handle_input("\x1b[F")
    lines = screen(overlay)
    assert "  ☐ first" in lines and "Dependencies:" in lines
    overlay.handle_input("\x1b[H")
    assert screen(overlay)[2] == "second"
    overlay.handle_input("\x1b")
    assert overlay.view == "list"


def test_escape_and_ctrl_c_close_or_back_out(store):
    add(store, "one")
    overlay, host = open_overlay(store)
    overlay.handle_input("a\x03")  # Ctrl+C cancels the form
    assert overlay.view == "list" and not overlay.closed
    overlay.handle_input("\x1b")
    assert overlay.closed and host.results == [None]
    overlay, host = open_overlay(store)
    overlay.handle_input("\x03")
    assert host.results == [None]


def test_retire_closes_once(store):
    overlay, host = open_overlay(store)
    overlay.retire()
    overlay.retire()
    assert host.results == [None]


def test_rendering_is_inert_and_fits_the_width(store):
    add(store, "\x1b[31mred\x1b[0m \u202eevil " + "wide字" * 20)
    overlay, _ = open_overlay(store)
    for line in overlay.render(30):
        visible = ANSI.sub("", line)
        assert "\u202e" not in line and "[31m" not in line
        assert sum(2 if ch == "字" else 1 for ch in visible) <= 30


def test_an_unavailable_list_is_named(store):
    store._quarantine_for("the last write is not verified on disk")
    overlay, _ = open_overlay(store)
    lines = screen(overlay)
    assert lines[0] == "Todo · unavailable: the last write is not verified on disk"
    overlay.handle_input("a")
    assert overlay.view == "list" and screen(overlay)[-1].startswith("todo storage unavailable")


def test_a_bracketed_paste_through_handle_input_is_still_only_a_paste(store):
    add(store, "keep me")
    overlay, _ = open_overlay(store)
    overlay.handle_input("\x1b[200~dyD\x1b[201~")
    assert overlay.view == "list" and titles(store) == ["keep me"]
    overlay.handle_input("a\x1b[200~pasted\x1b[201~\r\r\r")
    assert titles(store) == ["keep me", "pasted"]


def test_the_interactive_modes_overlay_host_drives_it(store):
    """tau's interactive mode binds request_render/done and hands over keys and pastes."""
    import asyncio

    overlay_module = pytest.importorskip("tau.modes.interactive.overlay")
    add(store, "one")
    frames = []

    async def scenario():
        host = overlay_module.OverlayHost(request_render=lambda: frames.append(1))
        overlay = TodoOverlay(store, height=lambda: 12)
        shown = asyncio.ensure_future(host.show(overlay))
        await asyncio.sleep(0)
        assert host.active is overlay
        assert overlay.render(60)[0].startswith("Todo · revision 1")
        overlay.handle_input("a")
        overlay.handle_paste("two")
        overlay.handle_input("\r\r\r\x1b")
        return await shown

    assert asyncio.run(scenario()) is None
    assert titles(store) == ["one", "two"] and frames
