"""Damaged session files: skipped lines are named, nothing before a cut line is lost, walks never hang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.session import SessionError, SessionManager, records

HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def line(entry_id: str, parent: str | None, text: str = "x") -> bytes:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    return json.dumps(entry, separators=(",", ":")).encode()


def write(path: Path, *lines: bytes, end: bytes = b"\n") -> Path:
    path.write_bytes(b"\n".join(lines) + end)
    return path


def test_truncated_last_line_loses_nothing_before_it_and_next_append_starts_a_fresh_line(tmp_path):
    cut = line("cccccccc", "bbbbbbbb")[:40]
    path = write(
        tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), line("bbbbbbbb", "aaaaaaaa"), cut, end=b""
    )
    reader = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in reader.get_entries()] == ["aaaaaaaa", "bbbbbbbb"]
    assert reader.get_leaf_id() == "bbbbbbbb"
    assert reader.problems == [(4, "line 4: cut short (no newline at the end of the file); skipped")]
    writer = SessionManager.open(path)
    assert path.read_bytes().endswith(cut + b"\n")  # pi's repair: a newline, nothing else touched
    new = writer.append_message({"role": "user", "content": "after", "timestamp": 2})
    writer.close()
    again = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in again.get_entries()] == ["aaaaaaaa", "bbbbbbbb", new]
    assert again.get_entry(new)["parentId"] == "bbbbbbbb"
    assert again.problems == [(4, "line 4: not valid JSON; skipped")]


def test_cut_line_that_still_looks_like_an_entry_is_dropped_when_read(tmp_path):
    # Cut right after a '}' and then terminated: it passes the cheap index check, but is no JSON.
    whole = line("bbbbbbbb", "aaaaaaaa")
    fake = whole[: whole.index(b"}") + 1]
    path = write(tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), fake, line("cccccccc", "aaaaaaaa"))
    manager = SessionManager.open(path, read_only=True)
    assert manager.get_entry("bbbbbbbb") is None
    assert [e["id"] for e in manager.get_entries()] == ["aaaaaaaa", "cccccccc"]
    assert manager.problems == [(3, "line 3: not valid JSON; skipped")]


def test_cut_line_on_the_branch_is_walked_around(tmp_path):
    whole = line("bbbbbbbb", "aaaaaaaa")
    fake = whole[: whole.index(b"}") + 1]
    path = write(tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), fake, line("cccccccc", "bbbbbbbb"))
    manager = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in manager.get_branch()] == ["cccccccc"]  # its parent is gone: a root
    assert manager.get_entry_count() == 2


def test_last_line_not_json_leaves_the_leaf_on_the_last_good_entry(tmp_path):
    whole = line("bbbbbbbb", "aaaaaaaa")
    path = write(tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), whole[: whole.index(b"}") + 1])
    manager = SessionManager.open(path, read_only=True)
    assert manager.get_leaf_id() == "aaaaaaaa"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1,2,3]", "not a JSON object"),
        (b'{"type":"message","id":"x","parentId":null,"timestamp":"t","n":NaN}', "not valid JSON"),
    ],
)
def test_malformed_middle_lines_are_skipped_and_named(tmp_path, bad, message):
    path = write(
        tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), bad, b"", b"   ", line("bbbbbbbb", "aaaaaaaa")
    )
    manager = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in manager.get_entries()] == ["aaaaaaaa", "bbbbbbbb"]
    assert manager.problems == [(3, f"line 3: {message}; skipped")]


def test_garbage_before_the_header_is_skipped(tmp_path):
    path = write(tmp_path / "s.jsonl", b"", b"garbage", HEADER, line("aaaaaaaa", None))
    manager = SessionManager.open(path, read_only=True)
    assert manager.get_session_id() == "s" and len(manager.get_entries()) == 1
    assert manager.problems == [(2, "line 2: not valid JSON; skipped")]


def test_cycles_and_repeated_ids_are_reported_not_followed(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        HEADER,
        line("aaaaaaaa", "bbbbbbbb"),
        line("bbbbbbbb", "aaaaaaaa"),
        line("cccccccc", None),
        line("cccccccc", None, "again"),
    )
    manager = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in manager.get_branch("bbbbbbbb")] == ["aaaaaaaa", "bbbbbbbb"]
    assert manager.get_entry("cccccccc")["message"]["content"] == "again"  # the later line wins, as in pi
    messages = [message for _, message in manager.problems]
    assert any("parentId cycle" in message for message in messages)
    assert "line 5: duplicate entry id 'cccccccc' (also line 4); this line wins" in messages


def test_repeated_keys_follow_json_parse(tmp_path):
    odd = b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"},"id":"zzzzzzzz"}'
    path = write(tmp_path / "s.jsonl", HEADER, odd)
    manager = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in manager.get_entries()] == ["zzzzzzzz"]
    assert manager.get_entry("zzzzzzzz") is not None and manager.get_entry("aaaaaaaa") is None


@pytest.mark.parametrize(
    "name",
    [
        "a-plain-text",
        "b-parallel-tools",
        "c-turn-end-continue",
        "d-threshold-compaction",
        "d2-compaction-split-turn-update",
        "e-tree-branch-summary",
        "f-labels-session-info",
        "g-custom-entries",
        "h-retry",
        "i-edit-write",
        "j-rpiv-todo",
    ],
)
def test_pi_sessions_open_cleanly_and_stay_untouched(pi_fixtures, tmp_path, name):
    source = pi_fixtures / "scenarios" / f"{name}.jsonl"
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    manager = SessionManager.open(copy)
    entries = manager.get_entries()
    lines = source.read_bytes().splitlines()
    assert [json.loads(raw) for raw in lines[1:]] == entries
    assert manager.get_leaf_id() == entries[-1]["id"] and manager.problems == []
    manager.close()
    assert copy.read_bytes() == source.read_bytes()


def test_a_second_header_is_not_an_entry_and_a_directory_is_refused(tmp_path):
    path = write(tmp_path / "s.jsonl", HEADER, line("aaaaaaaa", None), HEADER, line("bbbbbbbb", "aaaaaaaa"))
    manager = SessionManager.open(path, read_only=True)
    assert [e["id"] for e in manager.get_entries()] == ["aaaaaaaa", "bbbbbbbb"]
    assert manager.problems == [(3, "line 3: a second session header; ignored (not an entry)")]
    with pytest.raises(SessionError, match="is a directory"):
        SessionManager.open(tmp_path, read_only=True)


DAMAGED = {
    "cut last line": (
        (line("aaaaaaaa", None), line("bbbbbbbb", "aaaaaaaa"), line("cccccccc", "bbbbbbbb")[:40]),
        b"",
    ),
    "cut, looks like an entry": (
        (line("aaaaaaaa", None), line("bbbbbbbb", "aaaaaaaa")[:60] + b"}", line("cccccccc", "bbbbbbbb")),
        b"\n",
    ),
    "malformed middle lines": (
        (line("aaaaaaaa", None), b"{not json", b"[1,2,3]", b"", b"   ", b"nan", line("bbbbbbbb", "aaaaaaaa")),
        b"\n",
    ),
    "cycle, repeated id, second header": (
        (line("aaaaaaaa", "bbbbbbbb"), line("bbbbbbbb", "aaaaaaaa"), HEADER, line("cccccccc", None)),
        b"\n",
    ),
    "repeated keys": (
        (
            b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"},"id":"zzzzzzzz"}',
        ),
        b"\n",
    ),
}


@pytest.mark.parametrize("chunk", [1 << 20, 7, 1], ids=["one read", "lines across reads", "a byte a read"])
@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_run_s_session_parsed_at_open_reads_as_the_lazily_parsed_one(tmp_path, monkeypatch, name, chunk):
    # A writable open (a run's) parses every line at once, reading the file a chunk at a time (its
    # bytes are never all held beside its entries); a read-only one parses entries when asked.
    monkeypatch.setattr(records, "_CHUNK", chunk)
    lines, end = DAMAGED[name]
    lazy = SessionManager.open(write(tmp_path / "lazy.jsonl", HEADER, *lines, end=end), read_only=True)
    eager = SessionManager.open(write(tmp_path / "eager.jsonl", HEADER, *lines, end=end))
    assert all(record.entry is not None for record in eager._index.records)  # parsed at open
    assert eager.get_entries() == lazy.get_entries()
    # pi's leaf: the last entry (with repeated keys, its last id, as JSON.parse reads it)
    assert eager.get_leaf_id() == eager.get_entries()[-1]["id"]
    assert eager.get_branch() == lazy.get_branch(eager.get_leaf_id())
    assert eager.build_session_context() == lazy.build_session_context()
    if name != "repeated keys":  # (only the prefix check of a lazy read notices those)
        assert eager.problems == lazy.problems
    eager.close()
    source = tmp_path / "lazy.jsonl"  # as written (the writable open ended a cut last line)
    data = source.read_bytes()
    with source.open("rb") as file:
        whole, lazily = (
            records.load(file.fileno(), source, parse_all=True),
            records.load(file.fileno(), source),
        )
    assert (whole.line_count, whole.unterminated) == (lazily.line_count, lazily.unterminated)
    for record in whole.records:  # each entry is where its record says: read back by offset
        assert json.loads(data[record.offset : record.offset + record.size]) == record.entry
        assert data.count(b"\n", 0, record.offset) == record.line - 1
