"""Session lines as JSON.stringify writes them, read as JSON.parse reads them (decisions.md vectors)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tau.session import SessionManager

VECTORS = [
    (0.000009, b"0.000009"),
    (0.000021000000000000002, b"0.000021000000000000002"),
    (150000.0, b"150000"),
    (150000, b"150000"),
    (-0.0, b"0"),
    (1e21, b"1e+21"),
    (1.5e-7, b"1.5e-7"),
]


def written_line(tmp_path: Path, message: dict) -> bytes:
    manager = SessionManager.open(tmp_path / "s.jsonl")
    manager.append_message(message)
    manager.close()
    return (tmp_path / "s.jsonl").read_bytes().splitlines()[-1]


@pytest.mark.parametrize(("value", "text"), VECTORS)
def test_numbers_are_written_in_javascript_format(tmp_path, value, text):
    line = written_line(tmp_path, {"role": "user", "content": "n", "timestamp": 1, "n": value})
    assert line.endswith(b'"n":' + text + b"}}")
    reopened = SessionManager.open(tmp_path / "s.jsonl", read_only=True)
    assert reopened.get_entries()[-1]["message"]["n"] == value


def test_no_spaces_raw_utf8_and_js_escapes(tmp_path):
    text = 'é 漢字 \U0001f600 \u2028 \x7f "q" \\ \n\t\x01 </script>'
    line = written_line(tmp_path, {"role": "user", "content": text, "timestamp": 1})
    assert b": " not in line and b", " not in line
    assert "é 漢字 \U0001f600 \u2028 \x7f".encode() in line
    assert rb"\"q\" \\ \n\t\u0001 </script>" in line


def test_lone_surrogate_line_loads_and_round_trips(tmp_path):
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'
    lone = b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"half \\ud83d of a pair","timestamp":1}}'
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + b"\n" + lone + b"\n")
    manager = SessionManager.open(path)
    assert manager.get_entries()[0]["message"]["content"] == "half \ud83d of a pair"
    assert manager.problems == []
    again = manager.append_message({"role": "user", "content": "\udc00 alone", "timestamp": 2})
    manager.close()
    lines = path.read_bytes().splitlines()
    assert lines[:2] == [header, lone]
    assert b'"content":"\\udc00 alone"' in lines[2]
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.get_entry(again)["message"]["content"] == "\udc00 alone"
    forked = SessionManager.fork_from(path, "/tmp/elsewhere", tmp_path / "forks")
    assert Path(forked.get_session_file()).read_bytes().splitlines()[1:] == lines[1:]
    forked.close()


def test_unknown_types_and_fields_survive_a_rewrite_byte_for_byte(tmp_path, pi_fixtures):
    """A v2 file with odd lines is migrated and rewritten: lines tau did not change keep their bytes."""
    header = b'{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","extra":{"k":1.0}}'
    odd = [
        b'{"type":"future_thing","id":"aaaaaaaa","parentId":null,"timestamp":"t","payload":{"x":1.50,"y":"\\u00e9"}}',
        b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","message":{"role":"user","content":"x","unknownField":[1e2]},"after":true}',
        b'{"type":"custom","customType":"c","data":{"z":-0},"id":"cccccccc","parentId":"bbbbbbbb","timestamp":"t"}',
    ]
    path = tmp_path / "v2.jsonl"
    path.write_bytes(b"\n".join([header, *odd]) + b"\n")
    manager = SessionManager.open(path)
    manager.append_message({"role": "user", "content": "new", "timestamp": 3})
    manager.close()
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0])["version"] == 3 and json.loads(lines[0])["extra"] == {"k": 1.0}
    assert lines[1:4] == odd
    assert json.loads(lines[4])["parentId"] == "cccccccc"
    copy = tmp_path / "real.jsonl"
    shutil.copyfile(pi_fixtures / "scenarios" / "j-rpiv-todo.jsonl", copy)
    branched = SessionManager.open(copy)
    original = copy.read_bytes().splitlines()
    new_file = branched.create_branched_session(branched.get_leaf_id())
    branched.close()
    assert Path(new_file).read_bytes().splitlines()[1:] == original[1:]
