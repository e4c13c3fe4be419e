"""Tool-argument validation: pi's coercions first, then the schema; errors worded as pi-ai words them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.tools import ToolArgumentsError, builtin_tool, validate_arguments, validate_tool_arguments
from tau.tools.arguments import format_json_pretty

VECTORS = Path(__file__).parent / "data" / "pi_validation_vectors.json"
READ = builtin_tool("read").parameters
BASH = builtin_tool("bash").parameters
EDIT = builtin_tool("edit").parameters


def test_numeric_strings_become_numbers():
    assert validate_arguments("read", READ, {"path": "a", "offset": "5", "limit": " 2.5 "}) == {
        "path": "a",
        "offset": 5,
        "limit": 2.5,
    }


def test_booleans_and_nulls():
    schema = {
        "type": "object",
        "required": ["flag"],
        "properties": {"flag": {"type": "boolean"}, "note": {"type": "string"}, "n": {"type": "number"}},
    }
    assert validate_arguments("t", schema, {"flag": "true", "note": None, "n": None}) == {"flag": True}
    assert validate_arguments("t", schema, {"flag": "false"}) == {"flag": False}


def test_scalar_becomes_a_one_item_array():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    assert validate_arguments("t", schema, {"tags": "one"}) == {"tags": ["one"]}
    single = {"oldText": "a", "newText": "b"}
    assert validate_arguments("edit", EDIT, {"path": "p", "edits": single}) == {
        "path": "p",
        "edits": [single],
    }


def test_numbers_become_strings_where_a_string_is_expected():
    assert validate_arguments("bash", BASH, {"command": 42}) == {"command": "42"}


def test_the_input_is_not_modified():
    arguments = {"path": "a", "offset": "5"}
    validate_arguments("read", READ, arguments)
    assert arguments == {"path": "a", "offset": "5"}


def test_error_names_the_field_and_echoes_the_arguments():
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("read", READ, {"path": "a.txt", "offset": "abc"})
    assert str(info.value) == (
        'Validation failed for tool "read":\n'
        "  - offset: expected number, got string\n\n"
        "Received arguments:\n"
        '{\n  "path": "a.txt",\n  "offset": "abc"\n}'
    )


def test_missing_required_fields_and_nested_paths():
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("edit", EDIT, {"edits": [{"oldText": "x"}, {"oldText": [1], "newText": "y"}]})
    lines = str(info.value).split("\n\n")[0].split("\n")[1:]
    assert lines == [
        "  - path: missing",
        "  - edits.0.newText: missing",
        "  - edits.1.oldText: expected string, got array",
    ]


def test_non_object_arguments_blame_root():
    with pytest.raises(ToolArgumentsError, match=r"  - root: expected object, got array"):
        validate_arguments("bash", BASH, [])


def test_arguments_error_of_a_malformed_call():
    tool = builtin_tool("bash")
    call = {
        "type": "toolCall",
        "id": "c1",
        "name": "bash",
        "arguments": {},
        "argumentsError": "Unexpected end of JSON",
    }
    with pytest.raises(
        ToolArgumentsError, match=r'^Invalid arguments for tool "bash": Unexpected end of JSON$'
    ):
        validate_tool_arguments(tool, call)
    ok = {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls", "timeout": "3"}}
    assert validate_tool_arguments(tool, ok) == {"command": "ls", "timeout": 3}


def test_pretty_json_matches_json_stringify_indent_2():
    value = {"a": [], "b": {}, "c": [1, {"d": None}], "e": "é\n", "f": 1.5}
    assert format_json_pretty(value) == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": null\n    }\n  ],\n  "e": "é\\n",\n  "f": 1.5\n}'
    )


def test_pi_vectors():
    """400 random argument sets for read, bash, edit and a schema with unions, enums, refs and bounds, checked
    by pi-ai 1.6's validateToolArguments itself."""
    vectors = json.loads(VECTORS.read_text())
    mismatches = []
    for case in vectors["cases"]:
        schema = vectors["schemas"][case["name"]]
        try:
            got = {"value": validate_arguments(case["name"], schema, case["args"])}
        except ToolArgumentsError as exc:
            got = {"error": str(exc)}
        expected = {key: case[key] for key in ("value", "error") if key in case}
        if json.dumps(got, sort_keys=True) != json.dumps(expected, sort_keys=True):
            mismatches.append((case, got))
    assert not mismatches, mismatches[:2]
