"""Migration of v1/v2 session files to v3, checked against the files pi 1.6 itself migrated."""

from __future__ import annotations

import json
import shutil

import pytest

from tau.session import SessionManager
from tau.session.jsonl import encode

REAL = ["before-compaction", "large-session"]


def migrated_lines(manager: SessionManager, id_map: dict[str, str] | None = None) -> list[bytes]:
    """The lines tau would write for ``manager``, with entry ids renamed through ``id_map``."""
    lines = [encode(manager.get_header())]
    for entry in manager.get_entries():
        if id_map is not None:
            entry = dict(entry)
            for key in ("id", "parentId", "firstKeptEntryId"):
                if isinstance(entry.get(key), str):
                    entry[key] = id_map[entry[key]]
        lines.append(encode(entry))
    return lines


def id_map_by_position(manager: SessionManager, pi_lines: list[bytes]) -> dict[str, str]:
    pi_ids = [json.loads(line)["id"] for line in pi_lines[1:]]
    tau_ids = [entry["id"] for entry in manager.get_entries()]
    assert len(tau_ids) == len(pi_ids)
    assert len(set(tau_ids)) == len(tau_ids)
    return dict(zip(tau_ids, pi_ids, strict=True))


@pytest.mark.parametrize("name", REAL)
def test_v1_migrates_in_memory_like_pi(pi_fixtures, name):
    source = pi_fixtures / "real" / f"{name}.jsonl"
    before = source.read_bytes()
    pi_lines = (pi_fixtures / "real" / f"{name}.v3.jsonl").read_bytes().splitlines()
    manager = SessionManager.open(source, read_only=True)
    assert source.read_bytes() == before  # read-only: the fixture is never touched
    mapping = id_map_by_position(manager, pi_lines)
    ours = migrated_lines(manager, mapping)
    assert len(ours) == len(pi_lines)
    for number, (mine, theirs) in enumerate(zip(ours, pi_lines, strict=True), start=1):
        assert mine == theirs, f"line {number} differs"
    assert manager.problems == []


@pytest.mark.parametrize("name", REAL)
def test_v1_open_rewrites_the_file_once(pi_fixtures, tmp_path, name):
    copy = tmp_path / f"{name}.jsonl"
    shutil.copyfile(pi_fixtures / "real" / f"{name}.jsonl", copy)
    pi_lines = (pi_fixtures / "real" / f"{name}.v3.jsonl").read_bytes().splitlines()
    manager = SessionManager.open(copy)
    manager.close()
    written = copy.read_bytes()
    assert written.endswith(b"\n")
    mapping = id_map_by_position(manager, pi_lines)
    inverse = {tau: pi for tau, pi in mapping.items()}
    reread = SessionManager.open(copy, read_only=True)
    assert migrated_lines(reread, inverse) == pi_lines
    assert written.splitlines() == migrated_lines(manager)
    again = SessionManager.open(copy)  # version 3 now: no second rewrite
    again.close()
    assert copy.read_bytes() == written


def test_migrated_tree_is_the_same_chain(pi_fixtures):
    manager = SessionManager.open(pi_fixtures / "real" / "large-session.jsonl", read_only=True)
    entries = manager.get_entries()
    assert [e["parentId"] for e in entries] == [None, *[e["id"] for e in entries[:-1]]]
    assert manager.get_branch() == entries
    assert manager.get_leaf_id() == entries[-1]["id"]


def test_first_kept_entry_index_counts_the_header(tmp_path):
    lines = [
        {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "a"},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "b"},
        },
        {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 2, "tokensBefore": 5},
        {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 0, "tokensBefore": 5},
    ]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    manager = SessionManager.open(path, read_only=True)
    entries = manager.get_entries()
    assert entries[2]["firstKeptEntryId"] == entries[1]["id"]
    assert list(entries[2]) == [
        "type",
        "timestamp",
        "summary",
        "tokensBefore",
        "id",
        "parentId",
        "firstKeptEntryId",
    ]
    assert "firstKeptEntryId" not in entries[3] and "firstKeptEntryIndex" not in entries[3]
    assert list(manager.get_header()) == ["type", "id", "timestamp", "cwd", "version"]
    assert manager.get_header()["version"] == 3


def test_v2_hook_message_becomes_custom_and_other_lines_keep_their_bytes(tmp_path):
    header = b'{"type":"session","version":2,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}'
    odd = b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"x","n":1.50}}'
    hook = b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"y","display":true,"timestamp":3}}'
    path = tmp_path / "v2.jsonl"
    path.write_bytes(b"\n".join([header, odd, hook]) + b"\n")
    manager = SessionManager.open(path)
    manager.close()
    written = path.read_bytes().splitlines()
    assert written[0] == header.replace(b'"version":2', b'"version":3')
    assert written[1] == odd  # unchanged entries keep their bytes (1.50 stays 1.50)
    assert written[2] == hook.replace(b"hookMessage", b"custom")
