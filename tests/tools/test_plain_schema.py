"""The check for plain schemas answers what jsonschema answers (the tools' arguments, issue 17).

Built-in tool schemas are checked without importing jsonschema; any schema made only of the plain
keywords is. Random plain schemas and random JSON values (and the values coercion produces: floats
that are integers, infinities) must get jsonschema's Draft 2020-12 verdict, and a schema with any
other keyword must not be taken for plain.
"""

from __future__ import annotations

import subprocess
import sys

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.tools.bash import PARAMETERS as BASH
from tau.tools.edit import PARAMETERS as EDIT
from tau.tools.plain_schema import is_plain, is_valid
from tau.tools.read import PARAMETERS as READ
from tau.tools.write import PARAMETERS as WRITE

_KEYS = st.sampled_from(["a", "b", "path", "n", ""])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from([0.0, 1.0, 2.5, -1.5, float("inf"), float("-inf"), float("nan"), 1e300])
    | st.sampled_from(["", "x", "abc", "1", "true"])
)
VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=8,
)
_TYPES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_COUNT = st.integers(0, 3)
_BOUND = st.sampled_from([0, 1, -1, 2.5, 0.5])


def _schemas(children):
    return st.fixed_dictionaries(
        {},
        optional={
            "type": _TYPES | st.lists(_TYPES, min_size=1, max_size=3),
            "properties": st.dictionaries(_KEYS, children, max_size=3),
            "required": st.lists(_KEYS, max_size=3),
            "additionalProperties": children,
            "items": children,
            "enum": st.lists(VALUES, max_size=3),
            "const": VALUES,
            "minimum": _BOUND,
            "maximum": _BOUND,
            "exclusiveMinimum": _BOUND,
            "exclusiveMaximum": _BOUND,
            "minLength": _COUNT,
            "maxLength": _COUNT,
            "minItems": _COUNT,
            "maxItems": _COUNT,
            "minProperties": _COUNT,
            "maxProperties": _COUNT,
            "allOf": st.lists(children, min_size=1, max_size=2),
            "anyOf": st.lists(children, min_size=1, max_size=2),
            "oneOf": st.lists(children, min_size=1, max_size=2),
            "not": children,
            "description": st.text(max_size=5),
            "default": VALUES,
        },
    )


SCHEMAS = st.recursive(st.booleans() | st.just({}), _schemas, max_leaves=6)


def _jsonschema_says(schema, value) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.lists(VALUES, min_size=1, max_size=6))
def test_plain_schemas_get_jsonschemas_verdict(schema, values):
    assert is_plain(schema)
    for value in values:
        assert is_valid(schema, value) == _jsonschema_says(schema, value), (schema, value)


@given(
    SCHEMAS.filter(lambda s: isinstance(s, dict)),
    st.sampled_from(
        [
            ("$ref", "#/$defs/x"),
            ("pattern", "^a"),
            ("format", "email"),
            ("$schema", "http://json-schema.org/draft-07/schema#"),
            ("patternProperties", {"^a": {}}),
            ("if", {}),
            ("uniqueItems", True),
            ("multipleOf", 2),
            ("prefixItems", [{}]),
            ("items", [{}]),
            ("minLength", 1.5),
            ("type", "float"),
            ("x-extra", 1),
        ]
    ),
)
def test_any_other_keyword_leaves_the_schema_to_jsonschema(schema, extra):
    key, value = extra
    assert not is_plain({**schema, key: value})
    assert not is_plain({"properties": {"p": {**schema, key: value}}})


def test_the_built_in_tools_schemas_are_plain():
    for schema in (READ, WRITE, EDIT, BASH):
        assert is_plain(schema)


def test_calling_a_built_in_tool_does_not_import_jsonschema(tmp_path):
    code = (
        "import sys\n"
        "from tau.tools.arguments import validate_arguments\n"
        "from tau.tools.read import PARAMETERS\n"
        "validate_arguments('read', PARAMETERS, {'path': 'a', 'offset': '3'})\n"
        "try:\n"
        "    validate_arguments('read', PARAMETERS, {'offset': 'x'})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
        "print('jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ToolArgumentsError", "False"]
