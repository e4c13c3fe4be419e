"""The ``/resume`` and ``-r`` picker's search, with pi 1.6's syntax (issue 32's audit): words (each in
the name, id, messages or directory, or its letters in order in the name or directory), ``"phrases"``
(whitespace-insensitive), ``re:<pattern>``; name matches first; Ctrl+N named only; Tab's scopes."""

from __future__ import annotations

from datetime import datetime

from tau.modes.interactive.session_picker import SessionPicker
from tau.session.listing import SessionInfo

WHEN = datetime(2026, 12, 7)


def info(id_: str, name: str | None, messages: str, cwd: str = "/work/proj") -> SessionInfo:
    return SessionInfo(f"/s/{id_}.jsonl", id_, cwd, name, None, WHEN, WHEN, 2, messages, messages)


SESSIONS = [
    info("0001", None, "fix the   flaky login test"),
    info("0002", "login page", "style the button"),
    info("0003", None, "write the release notes", cwd="/work/website"),
    info("0004", "notes", "nothing else"),
]


def found(query: str, **state: object) -> list[str]:
    picker = SessionPicker(lambda: SESSIONS[:2], lambda: SESSIONS)
    picker.scope = "all"
    for key, value in state.items():
        setattr(picker, key, value)
    picker.query = query
    return [session.id for session in picker.matches()]


def test_words_phrases_and_regular_expressions_as_pi_searches():
    assert found("login") == ["0002", "0001"]  # the named match first, then newest first
    assert found('"flaky login"') == ["0001"]  # a phrase, whitespace squashed
    assert found('"login flaky"') == []
    assert found("re:^write|button") == ["0002", "0003"]
    assert found("0003") == ["0003"]  # the id
    assert found("wbst") == ["0003"]  # letters in order in the directory
    assert found("notes", named_only=True) == ["0004"]
    assert found('unclosed "login') == []  # an unclosed quote: plain words, both must match


def test_a_bad_regular_expression_says_so():
    picker = SessionPicker(lambda: SESSIONS, lambda: SESSIONS)
    picker.query = "re:(unclosed"
    screen = "\n".join(picker.render(100))
    assert "Invalid regex: missing ), unterminated subpattern" in screen
    assert picker.matches() == []


def test_tab_switches_between_this_directory_and_all():
    picker = SessionPicker(lambda: SESSIONS[:2], lambda: SESSIONS)
    picker.request_render = lambda: None
    assert [s.id for s in picker.matches()] == ["0001", "0002"]
    picker.handle_input("\t")
    assert picker.scope == "all" and len(picker.matches()) == 4
    assert "Resume Session (All)" in picker.render(100)[0]


# -- pi 1.6's sort, delete and rename keys (issue 32's gap) -----------------------------------------

CTRL_S, CTRL_D, CTRL_R, ESC, ENTER = "\x13", "\x04", "\x12", "\x1b", "\r"


def at(minute: int) -> datetime:
    return datetime(2026, 12, 7, 12, minute)


def dated(
    id_: str, minute: int, *, parent: str | None = None, name: str | None = None, text: str = ""
) -> SessionInfo:
    parent_path = f"/s/{parent}.jsonl" if parent else None
    return SessionInfo(
        f"/s/{id_}.jsonl",
        id_,
        "/work/proj",
        name,
        parent_path,
        at(0),
        at(minute),
        2,
        text or id_,
        text or id_,
    )


# newest first, as the listing gives them: "root" is old, but its fork "fork2" is the newest activity
THREADS = [
    dated("fork2", 50, parent="root", text="fork two"),
    dated("reply", 45, parent="fork2", text="a reply"),
    dated("solo", 40, text="solo notes"),
    dated("grandchild", 30, parent="fork1", text="deeper"),
    dated("fork1", 20, parent="root", text="fork one"),
    dated("named", 15, name="notes", text="named one"),
    dated("root", 10, text="the root"),
]


def picker_of(sessions, **options) -> SessionPicker:
    picker = SessionPicker(lambda: list(sessions), lambda: list(sessions), **options)
    picker.request_render = lambda: None
    return picker


def rows(picker: SessionPicker) -> list[str]:
    return [prefix + info.id for info, prefix in picker.rows()]


def test_ctrl_s_cycles_threaded_recent_and_fuzzy_as_pi():
    picker = picker_of(THREADS)
    assert "Sort: Threaded" in picker.render(120)[0]
    # a thread by the latest activity in it; forks under their parent, pi's tree prefixes (indented)
    assert rows(picker) == [
        "root",
        "   ├─ fork2",
        "   │  └─ reply",
        "   └─ fork1",
        "      └─ grandchild",
        "solo",
        "named",
    ]
    picker.handle_input(CTRL_S)
    assert "Sort: Recent" in picker.render(120)[0]
    assert rows(picker) == ["fork2", "reply", "solo", "grandchild", "fork1", "named", "root"]
    picker.handle_input(CTRL_S)
    assert "Sort: Fuzzy" in picker.render(120)[0]
    assert rows(picker) == ["fork2", "reply", "solo", "grandchild", "fork1", "named", "root"]
    picker.handle_input(CTRL_S)
    assert picker.sort == "threaded"


def test_a_search_ranks_by_relevance_except_in_recent():
    picker = picker_of(THREADS)
    picker.query = "notes"  # "solo notes" (text) is newer than the session named "notes"
    assert rows(picker) == ["named", "solo"]  # threaded: relevance, flat
    picker.handle_input(CTRL_S)
    assert rows(picker) == ["solo", "named"]  # recent: filtered, newest first
    picker.handle_input(CTRL_S)
    assert rows(picker) == ["named", "solo"]  # fuzzy


def test_a_loop_of_parents_loses_no_session():
    loop = [dated("a", 2, parent="b"), dated("b", 1, parent="a")]
    assert sorted(info.id for info in picker_of(loop).matches()) == ["a", "b"]


def test_the_hints_are_pis_with_rename_only_when_offered():
    screen = picker_of(THREADS, delete=lambda path: "unlink", rename=lambda path, name: None).render(120)
    assert 'tab scope · re:<pattern> regex · "phrase" exact' in screen[1]
    assert "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename" in screen[2]
    startup = picker_of(THREADS, delete=lambda path: "unlink").render(120)  # tau -r, as pi -r
    assert "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)" in startup[2]
    assert "rename" not in "\n".join(startup)


def test_delete_asks_ignores_other_keys_and_deletes_on_enter():
    deleted: list[str] = []
    listed = list(THREADS)

    def delete(path: str) -> str:
        deleted.append(path)
        listed[:] = [info for info in listed if info.path != path]
        return "unlink"

    picker = picker_of(listed, delete=delete)
    picker.handle_input("\x1b[B")  # fork2
    picker.handle_input(CTRL_D)
    screen = "\n".join(picker.render(120))
    assert "Delete session? enter confirm · escape/ctrl+c cancel" in screen
    picker.handle_input("x")
    picker.handle_input(CTRL_S)
    assert picker.query == "" and picker.sort == "threaded" and picker.confirming == "/s/fork2.jsonl"
    picker.handle_input(ESC)  # keeps it, and keeps the picker open
    assert (
        deleted == [] and picker.confirming is None and "Delete session?" not in "\n".join(picker.render(120))
    )
    picker.handle_input(CTRL_D)
    picker.handle_input(ENTER)
    assert deleted == ["/s/fork2.jsonl"]
    screen = "\n".join(picker.render(120))
    assert "Session deleted" in screen and "fork two" not in screen  # the folder is read again
    picker.handle_input("\x1b[A")  # the next key clears the message, as pi's timeout does
    assert "Session deleted" not in "\n".join(picker.render(120))


def test_delete_says_trash_and_failures():
    picker = picker_of(THREADS, delete=lambda path: "trash")
    picker.handle_input(CTRL_D)
    picker.handle_input(ENTER)
    assert "Session moved to trash" in picker.render(120)[1]

    def refuse(path: str) -> str:
        raise ValueError(f"{path} is a symbolic link, not a session file; nothing was deleted")

    picker = picker_of(THREADS, delete=refuse)
    picker.handle_input(CTRL_D)
    picker.handle_input(ENTER)
    assert "Failed to delete: /s/root.jsonl is a symbolic link" in picker.render(120)[1]


def test_ctrl_backspace_deletes_only_on_an_empty_search():
    picker = picker_of(THREADS, delete=lambda path: "unlink")
    picker.query = "solo notes"
    picker.handle_input("\x1b[127;5u")  # kitty's ctrl+backspace: the last word of the search goes
    assert picker.query == "solo " and picker.confirming is None
    picker.query = ""
    picker.handle_input("\x1b[27;5;127~")  # xterm's modifyOtherKeys
    assert picker.confirming == "/s/root.jsonl"


def test_rename_edits_the_current_name_and_saves_on_enter():
    renamed: list[tuple[str, str]] = []
    picker = picker_of(THREADS, rename=lambda path, name: renamed.append((path, name)))
    picker.query = "named one"
    picker.handle_input(CTRL_R)
    screen = picker.render(120)
    assert "Rename Session" in screen[0] and "> notes█" in screen[2]
    assert "enter to save · escape/ctrl+c to cancel" in screen[4]
    for _ in "notes":
        picker.handle_input("\x7f")
    picker.handle_input(ENTER)  # empty: nothing saved, the box stays
    assert renamed == [] and picker.renaming == "/s/named.jsonl"
    picker.handle_input("release")
    picker.handle_paste(" plan")
    picker.handle_input(ENTER)
    assert renamed == [("/s/named.jsonl", "release plan")]
    assert picker.renaming is None and "Resume Session" in picker.render(120)[0]
    picker.handle_input(CTRL_R)
    picker.handle_input(ESC)
    assert renamed == [("/s/named.jsonl", "release plan")] and picker.renaming is None


def test_ctrl_r_does_nothing_without_rename():
    picker = picker_of(THREADS)
    picker.handle_input(CTRL_R)
    assert picker.renaming is None and picker.query == ""


def test_the_open_session_is_listed_and_never_offered_for_deletion():
    deleted: list[str] = []
    picker = picker_of(THREADS, current="/s/solo.jsonl", delete=lambda path: deleted.append(path) or "unlink")
    picker.handle_input(CTRL_S)  # Recent: fork2, reply, solo, ...
    picker.handle_input("\x1b[B")
    picker.handle_input("\x1b[B")
    assert picker.matches()[picker.index].id == "solo"
    picker.handle_input(CTRL_D)
    assert picker.confirming is None and "Cannot delete the currently active session" in picker.render(120)[1]
    picker.handle_input(ENTER)  # no question was asked: Enter resumes it, as pi
    assert deleted == []
