"""A run's session parsed whole at open: read a chunk at a time, each chunk's lines parsed in one go,
and a chunk with a line that is no entry read again a line at a time. Whatever the chunk size and
wherever the damage falls (mid-chunk, across a chunk edge, the last line cut), the records and
problems are those of reading the file one line at a time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.session import records

HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def entry_line(number: int, parent: int | None) -> bytes:
    entry = {
        "type": "message",
        "id": f"e{number:07d}",
        "parentId": None if parent is None else f"e{parent:07d}",
        "message": {"role": "user", "content": "x" * (number % 7)},
    }
    return json.dumps(entry, separators=(",", ":")).encode()


# Lines that are not entries, each a different way through the parser: blank, not JSON, JSON but no
# object, refused by orjson but read by the tolerant parser (a lone surrogate, invalid UTF-8), with CR.
ODD_LINES = [
    b"",
    b"   ",
    b"{not json",
    b"[1,2,3]",
    b'"text"',
    b"nan",
    b'"\\ud800"',
    b'{"type":"custom","id":"lone","parentId":null,"data":"\\udc00"}',
    b'{"type":"custom","id":"bytes","parentId":null,"data":"\xff"}',
    b'{"type":"custom","id":"cr","parentId":null}\r',
    b'{"type":"label","id":"l1","parentId":null,"targetId":"e0000001","label":"x"}',
    HEADER,  # a second header: a record here, refused by the index
]

lines_strategy = st.lists(
    st.one_of(
        st.integers(min_value=1, max_value=400).map(lambda n: ("entry", n)), st.sampled_from(ODD_LINES)
    ),
    max_size=40,
)


def file_bytes(junk: list[bytes], body: list[object], cut: bytes | None) -> bytes:
    lines = [*junk, HEADER]
    for index, item in enumerate(body):
        lines.append(entry_line(item[1], index or None) if isinstance(item, tuple) else item)
    data = b"\n".join(lines) + b"\n"
    return data if cut is None else data + cut


def line_by_line(data: bytes) -> tuple[dict, bytes, list[tuple], list[tuple], bool, int]:
    """What reading the file one line at a time gives (the reference)."""
    problems: list[tuple[int, str]] = []
    found = records._session_header(records._data_lines(data), problems)
    assert found is not None
    header, raw, number, after, cut = found
    rest = data[after:]
    lines = rest.split(b"\n")
    if rest.endswith(b"\n") or not rest:
        lines.pop()
    last_cut = bool(rest) and not rest.endswith(b"\n")
    made: list[records.Record] = []
    last = records._parse_each(lines, after, number, last_cut, made, problems)
    return header, raw, [fields(record) for record in made], problems, last_cut if lines else cut, last


def fields(record: records.Record) -> tuple:
    return (
        record.line,
        record.offset,
        record.size,
        record.kind,
        record.id,
        record.parent_id,
        record.entry,
        record.raw,
    )


def parsed_at_open(path: Path) -> records.Loaded:
    fd = os.open(path, os.O_RDONLY)
    try:
        loaded = records.load(fd, path, parse_all=True)
    finally:
        os.close(fd)
    assert loaded is not None
    return loaded


@settings(max_examples=300, deadline=None)  # a loaded CI machine must not fail a pure function on time
@given(
    junk=st.lists(st.sampled_from([b"", b"  ", b"{junk", b"\xff\xfe"]), max_size=3),
    body=lines_strategy,
    cut=st.one_of(
        st.none(), st.sampled_from([b"", b" ", b'{"type":"message","id":"cut', b"[1,2]", b'"\\ud800"'])
    ),
    chunk=st.one_of(st.integers(min_value=1, max_value=300), st.just(1 << 20)),
)
def test_a_file_parsed_at_open_reads_as_it_does_one_line_at_a_time(tmp_path_factory, junk, body, cut, chunk):
    data = file_bytes(junk, body, cut)
    path = tmp_path_factory.mktemp("parsed") / "s.jsonl"
    path.write_bytes(data)
    expected_header, expected_raw, expected, problems, unterminated, line_count = line_by_line(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "_CHUNK", chunk)
        loaded = parsed_at_open(path)
    assert (loaded.header, loaded.header_raw) == (expected_header, expected_raw)
    assert [fields(record) for record in loaded.records] == expected
    assert loaded.problems == problems
    assert (loaded.unterminated, loaded.line_count) == (unterminated, line_count)
    # and independently of the reference: each record's line is where it says
    for record in loaded.records:
        assert all(hasattr(record, slot) for slot in records.Record.__slots__)
        assert records.jsonl.parse(data[record.offset : record.offset + record.size]) == record.entry
        assert data.count(b"\n", 0, record.offset) == record.line - 1
        assert data[record.offset + record.size : record.offset + record.size + 1] in (b"\n", b"")
    assert line_count == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def test_a_line_longer_than_many_chunks_is_read_whole(tmp_path, monkeypatch):
    long = json.dumps({"type": "custom", "id": "big", "parentId": None, "data": "y" * 5000}).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([HEADER, entry_line(1, None), long, entry_line(2, 1)]))
    monkeypatch.setattr(records, "_CHUNK", 64)
    loaded = parsed_at_open(path)
    assert [record.id for record in loaded.records] == ["e0000001", "big", "e0000002"]
    assert loaded.records[1].entry["data"] == "y" * 5000
    assert loaded.unterminated and loaded.line_count == 4 and loaded.problems == []
