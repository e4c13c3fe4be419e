"""Issue 26, item 1: every RPC line is answered, whatever its depth, and end of input ends tau.

A line nested 3,000 levels deep (arrays, objects, an unclosed ``[`` run) made the JSON parser raise
``RecursionError``, which the RPC mode did not catch: the line got no response, the input reader
died, later commands were never answered and the process never exited. ``jsjson.loads`` now
refuses text nested deeper than ``MAX_DEPTH`` levels with a ``ValueError``, and ``jsjson.dumps``
writes values of any depth without recursion.
"""

from __future__ import annotations

import json

import pytest

from tau.common import jsjson
from tau_process import run_tau

RPC = ["--mode", "rpc", "-ne", "--no-session", "--model", "faux/faux-1"]

PARSE_ERROR = {"type": "response", "command": "parse", "success": False}


def _deep_lines(depth: int) -> list[str]:
    return [
        "[" * depth + "]" * depth,
        '{"a":' * depth + "1" + "}" * depth,
        "[" * depth,
        '{"type":"get_state","id":' + "[" * depth + "]" * depth + "}",
    ]


@pytest.mark.parametrize("depth", [3_000, 100_000])
def test_deep_lines_get_a_parse_error_then_commands_are_answered_then_end_of_input_exits(tmp_path, depth):
    lines = [*_deep_lines(depth), '{"id":"after","type":"get_state"}']
    done = run_tau(RPC, cwd=tmp_path, stdin="\n".join(lines).encode() + b"\n", text=False)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert (done.returncode, done.stderr) == (0, b"")
    assert len(records) == len(lines)  # exactly one response per line
    for record in records[:4]:
        assert {key: record[key] for key in PARSE_ERROR} == PARSE_ERROR
        assert record["error"] == "Failed to parse command: JSON nested deeper than 1024 levels"
        assert "id" not in record
    assert records[4]["id"] == "after" and records[4]["success"] is True


def test_a_command_whose_id_is_deep_within_the_limit_is_answered_with_that_id(tmp_path):
    command = ('{"type":"get_state","id":' + "[" * 1000 + "]" * 1000 + "}\n").encode()
    done = run_tau(RPC, cwd=tmp_path, stdin=command, text=False)
    assert (done.returncode, done.stderr) == (0, b"")
    (line,) = done.stdout.splitlines()
    assert line.startswith(
        b'{"id":' + b"[" * 1000 + b"]" * 1000 + b',"type":"response","command":"get_state"'
    )
    assert jsjson.loads(line)["success"] is True


@pytest.mark.parametrize(
    "text", ["[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000, "[" * 100_000, '["\\ud800",' * 2000]
)
def test_jsjson_refuses_text_nested_deeper_than_its_limit(text):
    with pytest.raises(ValueError, match="nested deeper than 1024 levels"):
        jsjson.loads(text)


def test_jsjson_reads_and_writes_up_to_its_limit_with_lone_surrogates_too():
    text = '["\\ud800",' * (jsjson.MAX_DEPTH - 1) + "[1.5]" + "]" * (jsjson.MAX_DEPTH - 1)
    value = jsjson.loads(text)
    assert jsjson.dumps(value) == text.encode()


def test_jsjson_writes_values_deeper_than_any_parser_reads():
    value: list = []
    innermost = value
    for _ in range(20_000):
        innermost.append([])
        innermost = innermost[0]
    innermost.extend([1.0, 1e21, "\ud800", {"k": None}])
    assert jsjson.dumps(value) == b"[" * 20_001 + b'1,1e+21,"\\ud800",{"k":null}' + b"]" * 20_001
