"""LF-only JSONL framing (pi 1.6 ``jsonl.ts``): U+2028/U+2029 stay inside records, a trailing CR goes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tau.modes.rpc.framing import LineSplitter, serialize_line


def split_all(chunks: list[bytes]) -> list[str]:
    splitter = LineSplitter()
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    return lines + splitter.end()


def test_unicode_line_separators_do_not_end_a_record():
    record = {"type": "prompt", "message": "a\u2028b\u2029c\x85d\x0be\x0cf"}
    data = serialize_line(record)
    assert "\u2028".encode() in data and data.count(b"\n") == 1
    (line,) = split_all([data])
    assert json.loads(line) == record


def test_crlf_loses_only_its_cr():
    assert split_all([b'{"a":1}\r\n{"b":2}\r\r\n']) == ['{"a":1}', '{"b":2}\r']


def test_multibyte_characters_split_across_chunks():
    data = serialize_line({"message": "héllo 😀 世界"})
    chunks = [data[i : i + 1] for i in range(len(data))]
    assert json.loads(split_all(chunks)[0]) == {"message": "héllo 😀 世界"}


def test_empty_lines_are_lines_and_the_last_line_needs_no_lf():
    assert split_all([b"\n\n", b'{"x":1}']) == ["", "", '{"x":1}']
    assert split_all([b'{"x":1}\n']) == ['{"x":1}']


def test_invalid_utf8_becomes_replacement_character():
    assert split_all([b"\xff\xfe{}\n"]) == ["\ufffd\ufffd{}"]


def test_serialize_line_writes_what_json_stringify_writes():
    assert (
        serialize_line({"n": 1.5e-7, "big": 150000.0, "s": "é"})
        == '{"n":1.5e-7,"big":150000,"s":"é"}\n'.encode()
    )


@given(
    st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20), max_size=6),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=5),
)
def test_any_chunking_gives_the_same_records(texts, cuts):
    data = b"".join(serialize_line({"t": text}) for text in texts)
    chunks, position, index = [], 0, 0
    while position < len(data):
        size = cuts[index % len(cuts)]
        chunks.append(data[position : position + size])
        position, index = position + size, index + 1
    assert [json.loads(line)["t"] for line in split_all(chunks)] == texts


def test_objects_that_are_not_json_data_are_written_as_their_json_shape():
    from tau.llm.types import Model

    model = Model(id="m", provider="p", api="faux")
    record = json.loads(serialize_line({"type": "x", "model": model, "other": object()}))
    assert record["model"] == model.to_json()
    assert isinstance(record["other"], str)
