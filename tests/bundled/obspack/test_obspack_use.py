"""Packing that follows use (issue 25): a result's age counts from the last turn that used it, an old
result is packed only when that pays for the refetch it may cost, and the window widens in a session
whose model fetches again what was packed (an ``obs_recall``, or the same read or command again)."""

from __future__ import annotations

from obspack_fakes import text_of
from test_obspack_stale import PLACEHOLDER, Session

from tau.bundled.obspack.economy import pays_to_pack
from tau.bundled.obspack.observation import text_observation
from tau.bundled.obspack.window import WINDOW_TYPE, Window

# No batching and no economic floor unless a test is about them: each rule is seen on its own.
PLAIN = {"swapBatching": False, "staleRefetchChance": 0}


def source(name: str, marker: str) -> str:
    """A file of 60 lines (about 600 tokens) holding one distinctive name."""
    return "\n".join(f"{name} {n}: " + ("def helper(): pass" if n != 30 else f"def {marker}(): pass") for n in range(60))


def packed(session: Session, message: dict, given: list[dict]) -> bool:
    return text_of(session.shown(message, given)).startswith(PLACEHOLDER)


def idle(session: Session, turns: int) -> list[dict]:
    """``turns`` more turns of unrelated small calls, a request before each; the last request."""
    for _ in range(turns):
        session.request()
        session.call("bash", {"command": f"echo {session.calls}"}, "ok")
    return session.request()


def test_a_result_the_model_keeps_using_stays_and_goes_once_unused(tmp_path):
    session = Session(tmp_path, PLAIN)
    used = session.call("read", {"path": "calc.py"}, source("calc.py", "parse_header_412"))
    unused = session.call("read", {"path": "util.py"}, source("util.py", "format_size_77"))
    for turn in range(8):  # every other turn a call names what only calc.py's read showed
        given = session.request()
        assert not packed(session, used, given), turn
        if turn % 2:
            session.call("bash", {"command": "grep -n parse_header_412 tests/"}, "tests/test_calc.py:3: ok")
        else:
            session.call("bash", {"command": f"echo {turn}"}, "ok")
    given = session.request()
    assert packed(session, unused, given)  # 10 turns old, never used: gone after 4
    assert not packed(session, used, given)  # 10 turns old, used 2 turns ago: still there
    given = idle(session, 3)
    assert not packed(session, used, given)  # 3 turns without use: not yet
    given = idle(session, 1)
    assert packed(session, used, given)  # 4 turns since its last use
    assert "unused for 4 assistant turns" in text_of(session.shown(used, given))


def test_the_window_widens_after_a_recall_of_an_old_result_and_is_recorded(tmp_path):
    session = Session(tmp_path, PLAIN)
    first = session.call("bash", {"command": "git log"}, source("log", "commit_a1b2c3d4"))
    given = idle(session, 4)
    assert packed(session, first, given)
    obs_id = text_observation(first).id
    session.call("obs_recall", {"id": obs_id}, "[obs_recall …]\n" + source("log", "commit_a1b2c3d4"))
    later = session.call("bash", {"command": "ls -R"}, source("tree", "layout_x99"))
    given = session.request()  # the recall is seen: 4 -> 6 turns
    assert session.tau.entries[-1] == (
        WINDOW_TYPE,
        {
            "schema": "sol-pi-observation-pack-window/1",
            "staleAfterTurns": 6,
            "refetches": 1,
            "startTurns": 4,
            "maxTurns": 12,
        },
    )
    given = idle(session, 5)
    assert not packed(session, later, given)  # 5 turns old: kept under the wider window
    given = idle(session, 1)
    assert packed(session, later, given)
    assert "unused for 6 assistant turns" in text_of(session.shown(later, given))


def test_the_window_widens_after_a_rerun_of_a_packed_command_not_after_a_test_run_following_an_edit(tmp_path):
    session = Session(tmp_path, PLAIN)
    session.call("bash", {"command": "git log"}, source("log", "commit_a1b2c3d4"))
    session.call("bash", {"command": "pytest -q"}, source("pytest", "test_total_88"))
    idle(session, 4)  # both packed as old
    session.call("bash", {"command": "git log"}, source("log", "commit_a1b2c3d4"))  # nothing changed it: a refetch
    session.request()
    session.call("edit", {"path": "calc.py", "edits": [{"oldText": "a", "newText": "b"}]}, "Successfully replaced")
    session.call("bash", {"command": "pytest -q"}, source("pytest", "test_total_88"))  # new work after an edit
    session.request()
    windows = [data for kind, data in session.tau.entries if kind == WINDOW_TYPE]
    assert [(w["staleAfterTurns"], w["refetches"]) for w in windows] == [(6, 1)]


def test_the_window_stops_widening_at_its_cap_and_a_resumed_session_keeps_it(tmp_path):
    session = Session(tmp_path, {**PLAIN, "staleMaxTurns": 7})
    for n in range(3):
        result = session.call("bash", {"command": f"cat notes{n}.txt"}, source(f"notes{n}", f"note_{n}_x7"))
        given = idle(session, 8)
        assert packed(session, result, given)
        session.call("bash", {"command": f"cat notes{n}.txt"}, source(f"notes{n}", f"note_{n}_x7"))
        session.request()
    windows = [data for kind, data in session.tau.entries if kind == WINDOW_TYPE]
    assert [(w["staleAfterTurns"], w["refetches"]) for w in windows] == [(6, 1), (7, 2), (7, 3)]
    resumed = Session(tmp_path, {**PLAIN, "staleMaxTurns": 7})
    resumed.ctx.session_manager.entries = [
        {"type": "custom", "id": "w1", "parentId": None, "customType": WINDOW_TYPE, "data": windows[-1]}
    ]
    resumed.ctx.session_manager.leaf = "w1"
    result = resumed.call("bash", {"command": "cat other.txt"}, source("other", "other_x7"))
    assert not packed(resumed, result, idle(resumed, 6))
    assert packed(resumed, result, idle(resumed, 1))


def test_an_old_result_is_packed_only_when_that_pays_for_a_refetch():
    # 200 tokens saved on each of 10 remaining requests, against a 1 in 10 chance of one more request
    # reading a 12,000-token context and writing the 250 tokens back at 12.5x
    assert pays_to_pack(200, 250, 12_000, 10, 12.5, 0.1) is True  # 2,000 > 1,512
    assert pays_to_pack(200, 250, 30_000, 10, 12.5, 0.1) is False  # 2,000 < 3,312
    assert pays_to_pack(200, 250, 30_000, 20, 12.5, 0.1) is True  # a longer session to pay it back


def test_small_old_results_stay_in_a_large_context(tmp_path):
    session = Session(tmp_path, {"swapBatching": False})  # the default economic floor
    session.messages.append({"role": "user", "content": [{"type": "text", "text": "spec " * 8000}], "timestamp": 0})
    status = "\n".join(f"modified: src/file_{n}.py" for n in range(32))  # about 200 tokens
    small = session.call("bash", {"command": "git status"}, status)
    larger = session.call("bash", {"command": "git diff"}, source("diff", "changed_x1") * 2)  # about 800
    given = idle(session, 6)
    # in a 10,000-token context, a refetch of the 200-token status would cost more than its packing
    # saves over the few requests left; the 800-token diff pays
    assert not packed(session, small, given)
    assert packed(session, larger, given)
    # the same status in a small context is packed
    session = Session(tmp_path / "small", {"swapBatching": False})
    small = session.call("bash", {"command": "git status"}, status)
    assert packed(session, small, idle(session, 6))


def large_source(marker: str) -> str:
    """A file of about 12 KB (over ObservationPack's 10 KiB) holding six distinctive names."""
    return "\n".join(
        f"line {n}: " + (f"def {marker}_{n // 60}(): pass" if n % 60 == 30 else "x = helper()  # filler")
        for n in range(420)
    )


def large_packed(session: Session, message: dict, given: list[dict]) -> bool:
    return text_of(session.shown(message, given)).startswith("[large tool result replaced")


def test_a_large_result_stays_while_the_model_uses_it_and_goes_two_turns_after(tmp_path):
    """SoL-Pi's large rule counted its two full sends from the call; a 40 KB module the model
    split into six files over six turns was packed after the second (issue 25)."""
    session = Session(tmp_path, PLAIN)
    module = session.call("read", {"path": "main.py"}, large_source("split_me"))
    for turn in range(5):  # each turn writes a file using a name only the module showed
        given = session.request()
        assert not large_packed(session, module, given), turn
        session.call("write", {"path": f"part_{turn}.py", "content": f"from main import split_me_{turn}"}, "ok")
    given = idle(session, 1)
    assert not large_packed(session, module, given)  # one turn since its last use
    given = idle(session, 1)
    assert large_packed(session, module, given)  # two: SoL-Pi's placeholder


def test_a_large_result_never_used_goes_after_its_first_two_sends_as_in_sol_pi(tmp_path):
    session = Session(tmp_path, PLAIN)
    module = session.call("read", {"path": "main.py"}, large_source("never_named"))
    given = idle(session, 1)
    assert not large_packed(session, module, given)
    given = idle(session, 1)
    assert large_packed(session, module, given)


def test_a_resumed_session_counts_a_refetch_of_what_its_first_request_packed(tmp_path):
    session = Session(tmp_path, PLAIN)
    first = session.call("bash", {"command": "git log"}, source("log", "commit_a1b2c3d4"))
    for n in range(5):  # no request yet: the first one reads every call at once, as after a resume
        session.call("bash", {"command": f"echo {n}"}, "ok")
    given = session.request()
    assert packed(session, first, given)
    session.call("bash", {"command": "git log"}, source("log", "commit_a1b2c3d4"))  # nothing changed it
    session.request()
    windows = [data for kind, data in session.tau.entries if kind == WINDOW_TYPE]
    assert [(w["staleAfterTurns"], w["refetches"]) for w in windows] == [(6, 1)]


def test_a_resumed_window_is_the_newest_valid_window_entry_of_the_branch():
    def entry(kind: str, turns: object, refetches: object = 1) -> dict:
        data = {"staleAfterTurns": turns, "refetches": refetches}
        return {"type": kind, "customType": WINDOW_TYPE, "data": data}

    window = Window(4, 12)
    window.restore(
        [
            entry("custom", 9, 3),
            entry("custom", 7, 2),
            {"type": "message", "message": {"role": "user", "content": "hi"}},
            entry("custom", "8"),  # not a count: skipped
            entry("message", 11),  # not a custom entry: skipped
            {"type": "custom", "customType": "other", "data": {"staleAfterTurns": 10, "refetches": 5}},
        ]
    )
    assert (window.turns, window.refetches) == (7, 2)
    window.restore([entry("custom", 40, 6)])  # clamped to the cap
    assert (window.turns, window.refetches) == (12, 6)
    untouched = Window(4, 12)
    untouched.restore([entry("custom", -1), {"type": "custom"}])
    assert (untouched.turns, untouched.refetches) == (4, 0)
