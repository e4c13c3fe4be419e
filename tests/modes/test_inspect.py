"""``tau session context|info|check``: what a user sees, and that the file is never written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest

from tau.cli import main
from tau.common import jsjson

TS = "2026-11-29T23:42:14.169Z"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["session", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_lines(path: Path, *lines: object, end: str = "\n") -> Path:
    """A session file: dicts are written as JSON, strings as they are."""
    text = "\n".join(
        line if isinstance(line, str) else json.dumps(line, separators=(",", ":")) for line in lines
    )
    path.write_text(text + end, encoding="utf-8")
    return path


def header(**fields) -> dict:
    return {"type": "session", "version": 3, "id": "s1", "timestamp": TS, "cwd": "/tmp/proj", **fields}


def entry(kind: str, entry_id: str, parent: str | None, **fields) -> dict:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": TS, **fields}


def user(entry_id: str, parent: str | None, text: str) -> dict:
    return entry("message", entry_id, parent, message={"role": "user", "content": text, "timestamp": 1})


# --- context ------------------------------------------------------------------------------------


def context_goldens(fixtures: Path) -> list[tuple[Path, Path, str | None]]:
    """(session file, golden, --leaf) for every golden whose session file is the golden's source."""
    cases = []
    for golden_path in sorted(fixtures.glob("*/*.context*.json")):
        golden = orjson.loads(golden_path.read_bytes())
        source = fixtures / golden["source"]
        if source.parent.name == "real":
            source = source.with_name(
                source.name.removesuffix(".v3.jsonl").removesuffix(".jsonl") + ".v3.jsonl"
            )
        leaf = None if golden_path.name.endswith(".context.json") else golden["leafId"]
        cases.append((source, golden_path, leaf))
    return cases


def test_context_prints_every_golden_exactly(pi_fixtures, capsys):
    cases = context_goldens(pi_fixtures)
    assert len(cases) >= 25
    for source, golden_path, leaf in cases:
        code, out, err = run(capsys, "context", str(source), *(["--leaf", leaf] if leaf else []))
        golden = orjson.loads(golden_path.read_bytes())
        assert (code, err) == (0, ""), golden_path.name
        assert out.encode() == jsjson.dumps(golden["messages"]) + b"\n", golden_path.name


def test_context_of_a_v1_file_is_pis_context(pi_fixtures, capsys):
    code, out, _ = run(capsys, "context", str(pi_fixtures / "real" / "large-session.jsonl"))
    golden = orjson.loads((pi_fixtures / "real" / "large-session.context.json").read_bytes())
    assert code == 0 and orjson.loads(out) == golden["messages"]


def test_context_pretty_is_json_stringify_with_two_spaces(pi_fixtures, capsys):
    source = pi_fixtures / "scenarios" / "g-custom-entries.jsonl"
    _, compact, _ = run(capsys, "context", str(source))
    code, pretty, _ = run(capsys, "context", str(source), "--pretty")
    assert code == 0
    assert pretty == json.dumps(json.loads(compact), indent=2, ensure_ascii=False) + "\n"


def test_context_leaf_selects_the_branch_and_an_unknown_leaf_is_an_error(tmp_path, capsys):
    path = write_lines(tmp_path / "s.jsonl", header(), user("a", None, "one"), user("b", "a", "two"))

    assert orjson.loads(run(capsys, "context", str(path), "--leaf", "a")[1]) == [
        {"role": "user", "content": "one", "timestamp": 1}
    ]
    code, out, err = run(capsys, "context", str(path), "--leaf", "zz")
    assert (code, out) == (2, "")
    assert err == (
        f"tau session context: no entry with id 'zz' in {str(path)!r}; "
        "pass an entry id of this file (`tau session info` shows the leaf)\n"
    )


def test_context_block_images(tmp_path, capsys):
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    message = {"role": "user", "content": [image, image], "timestamp": 1}
    path = write_lines(tmp_path / "s.jsonl", header(), entry("message", "a", None, message=message))
    code, out, _ = run(capsys, "context", str(path), "--block-images")
    assert code == 0
    assert orjson.loads(out)[0]["content"] == [{"type": "text", "text": "Image reading is disabled."}]


# --- info ---------------------------------------------------------------------------------------


def test_info_text(pi_fixtures, capsys):
    path = pi_fixtures / "scenarios" / "f-labels-session-info.jsonl"
    code, out, err = run(capsys, "info", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"file        {path.resolve()}",
        "session     01a229c0-362e-75ff-9daf-99da9e6e8662",
        "version     3",
        "created     2026-11-29T23:59:52.366Z",
        "cwd         /tmp/proj",
        "name        Renamed demo",
        "entries     12",
        "  model_change           1",
        "  thinking_level_change  1",
        "  message                5  (system 1, user 2, assistant 2)",
        "  session_info           2",
        "  label                  3",
        "branches    1",
        "leaf        0637677d",
        "context     5 messages at the leaf; thinking off, model faux/faux-1",
        "problems    none",
    ]


def test_info_json_counts_branches_and_shows_the_written_version(pi_fixtures, capsys):
    _, out, _ = run(capsys, "info", str(pi_fixtures / "scenarios" / "e-tree-branch-summary.jsonl"), "--json")
    summary = orjson.loads(out)
    assert (summary["branches"], summary["leafId"], summary["types"]["branch_summary"]) == (2, "d419a095", 1)

    _, out, _ = run(capsys, "info", str(pi_fixtures / "real" / "before-compaction.jsonl"), "--json")
    summary = orjson.loads(out)
    assert (summary["version"], summary["entries"], summary["roles"]["bashExecution"]) == (1, 1002, 3)
    assert "version" not in summary["header"]


def test_info_shows_observation_packs_window_and_its_refetches(tmp_path, capsys):
    """Issue 25: the newest window record of the branch: the current window and the refetch count."""
    from tau.bundled.obspack.window import WINDOW_TYPE, window_entry

    path = write_lines(
        tmp_path / "s.jsonl",
        header(),
        entry("message", "m1", None, message={"role": "user", "content": "hi", "timestamp": 1}),
        entry("custom", "w1", "m1", customType=WINDOW_TYPE, data=window_entry(6, 1, 4, 12)),
        entry("custom", "w2", "w1", customType=WINDOW_TYPE, data=window_entry(8, 2, 4, 12)),
    )
    code, out, _ = run(capsys, "info", str(path))
    assert code == 0
    assert out.splitlines()[-1] == "observation pack  window 8 turns (started at 4, at most 12), 2 refetches of packed results"
    _, out, _ = run(capsys, "info", str(path), "--json")
    assert orjson.loads(out)["observationWindow"]["staleAfterTurns"] == 8


# --- check --------------------------------------------------------------------------------------


def test_check_clean_files_pass(pi_fixtures, capsys):
    for path in sorted((pi_fixtures / "scenarios").glob("*.jsonl")):
        if path.name.endswith(".events.jsonl"):
            continue
        code, out, _ = run(capsys, "check", str(path))
        assert code == 0, out
        assert out.endswith(" no problems\n")


def test_check_reports_every_problem_with_its_line(tmp_path, capsys):
    path = write_lines(
        tmp_path / "broken.jsonl",
        header(),  # 1
        user("a", None, "hi"),  # 2
        "{not json",  # 3
        user("a", None, "again"),  # 4: repeated id
        user("b", "ghost", "orphan"),  # 5: missing parent
        entry("message", "c", "d"),  # 6: cycle c <-> d, and no message object
        entry("label", "d", "c", targetId="nowhere", label="x"),  # 7: cycle, label target missing
        entry("context_edit", "e", "a", targetId="missing", replacement=None),  # 8
        entry("context_edit", "f", "e", targetId="a"),  # 9: no replacement
        entry("compaction", "g", "f", summary="S", firstKeptEntryId="zz", tokensBefore=1),  # 10
        entry("future_type", "h", "g"),  # 11: unknown type, a note
        "",  # 12: blank lines are fine
        entry("compaction", "i", "h", summary="S", tokensBefore=1),  # 13: no firstKeptEntryId
    )

    code, out, err = run(capsys, "check", str(path))

    p = str(path)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{p}:3: error: not valid JSON; skipped",
        f"{p}:4: error: duplicate entry id 'a' (also line 2); this line wins",
        f"{p}:5: error: parent 'ghost' not found; treated as a root",
        f"{p}:6: error: entry 'c' is its own ancestor (parentId cycle)",
        f"{p}:6: error: message entry holds None instead of a message object; it is ignored",
        f"{p}:7: error: label targets 'nowhere', which is not an entry of this file",
        f"{p}:8: error: context_edit targets 'missing', which is not an entry of this file",
        f"{p}:9: error: context_edit has no replacement (null or {{content}}); tau ignores it, pi fails on it",
        f"{p}:10: error: compaction firstKeptEntryId 'zz' is not an entry of this file",
        f"{p}:11: note: unknown entry type 'future_type': kept in the file, ignored in the context",
        f"{p}:13: error: compaction has no firstKeptEntryId; nothing before it is kept",
        f"{p}: 10 problems, 1 note (10 entries)",
    ]


def test_check_notes_alone_do_not_fail(tmp_path, capsys):
    path = write_lines(
        tmp_path / "s.jsonl",
        header(),
        user("a", None, "hi"),
        entry("future_type", "b", "a"),
        entry("context_edit", "c", "a", targetId="b", replacement=None),
    )
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1, "an edit of a non-message entry is a problem"
    assert f"{path}:4: error: context_edit targets 'b', a future_type entry pi never edits" in out

    side = write_lines(
        tmp_path / "side.jsonl",
        header(),
        user("a", None, "hi"),
        user("b", "a", "left"),
        entry("context_edit", "c", "a", targetId="b", replacement=None),  # sibling of b: no effect
        entry("future_type", "d", "c"),
    )
    code, out, _ = run(capsys, "check", str(side))
    assert code == 0
    assert out.splitlines() == [
        f"{side}:4: note: context_edit targets 'b', which is not above it on its branch: no effect",
        f"{side}:5: note: unknown entry type 'future_type': kept in the file, ignored in the context",
        f"{side}: ok, 4 entries, no problems, 2 notes",
    ]


def test_check_v1_file_notes_the_migration(pi_fixtures, capsys):
    path = pi_fixtures / "real" / "large-session.jsonl"
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0
    assert out.splitlines() == [
        f"{path}:1: note: version 1 file: migrated to 3 in memory (pi rewrites it on open; tau session commands never do)",
        f"{path}: ok, 1018 entries, no problems, 1 note",
    ]


# --- errors and read-only -----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["context", "info", "check"])
def test_unreadable_files_give_one_line_and_exit_2(command, tmp_path, capsys):
    not_session = tmp_path / "notes.jsonl"
    not_session.write_text('{"hello":"world"}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    cases = {
        tmp_path / "missing.jsonl": f"no such file: {str(tmp_path / 'missing.jsonl')!r}",
        tmp_path: "is not a file",
        not_session: "is not a session file",
        empty: "is empty: not a session file",
    }
    for path, expected in cases.items():
        code, out, err = run(capsys, command, str(path))
        assert (code, out) == (2, ""), path
        assert err.startswith(f"tau session {command}: ") and expected in err, err
        assert err.count("\n") == 1


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def test_no_command_ever_writes_the_file(pi_fixtures, tmp_path, capsys):
    v1 = tmp_path / "v1.jsonl"
    v1.write_bytes((pi_fixtures / "real" / "before-compaction.jsonl").read_bytes())
    unterminated = write_lines(tmp_path / "cut.jsonl", header(), user("a", None, "hi"), end="")
    broken = write_lines(tmp_path / "broken.jsonl", header(version=2), "{oops", user("a", None, "hi"))
    for path in (v1, unterminated, broken):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = snapshot(tmp_path)

    for path in (v1, unterminated, broken):
        for argv in (["context"], ["context", "--pretty"], ["info"], ["info", "--json"], ["check"]):
            code, _, err = run(capsys, argv[0], str(path), *argv[1:])
            assert code in (0, 1) and err == "", (path.name, argv, err)

    assert snapshot(tmp_path) == before


def test_help_and_usage_errors_through_the_real_command(run_tau):
    shown = run_tau(["session", "--help"])
    assert shown.returncode == 0
    assert "context" in shown.stdout and "info" in shown.stdout and "check" in shown.stdout

    for argv in (["session", "context", "--help"], ["session", "check", "-h"]):
        shown = run_tau(argv)
        assert shown.returncode == 0 and "FILE" in shown.stdout

    wrong = run_tau(["session", "frobnicate"])
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr


def test_check_flags_message_timestamps_that_are_not_dates(tmp_path, capsys):
    nudge = {
        "type": "custom_message",
        "customType": "x",
        "content": "c",
        "display": False,
        "id": "b",
        "parentId": "a",
    }
    path = write_lines(tmp_path / "s.jsonl", header(), user("a", None, "hi"), nudge)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    assert out.splitlines()[0] == (
        f"{path}:3: error: custom_message has no timestamp; its message gets timestamp null"
    )
