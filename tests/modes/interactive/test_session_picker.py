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
