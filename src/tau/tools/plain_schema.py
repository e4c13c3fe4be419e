"""JSON Schema checks for the plain schemas tools usually declare, without importing ``jsonschema``.

``jsonschema`` costs 66-130 ms to import, in every run that calls a tool. The built-in tools (and
most extension tools) declare schemas made of a handful of keywords: ``type``, ``properties``,
``required``, ``items``, ``enum``, bounds. For a schema made only of the keywords below, with
well-formed values, :func:`is_plain` is true and :func:`is_valid` answers exactly what
``jsonschema``'s Draft 2020-12 validator answers (a property test compares the two). Any other
keyword anywhere (``$ref``, ``pattern``, ``format``, ``$schema``, ``if``, ...) leaves the schema to
``jsonschema``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["is_plain", "is_valid"]

_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
)
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "not"}
    | set(_BOUNDS)
    | set(_COUNTS)
    | set(_SCHEMA_LISTS)
    | _ANNOTATIONS
)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def is_plain(schema: Any) -> bool:
    """Whether ``schema`` uses only the keywords this module checks, each with a well-formed value."""
    if schema is True or schema is False:
        return True
    if not isinstance(schema, dict) or not _KEYWORDS.issuperset(schema):
        return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not kinds or not all(isinstance(k, str) and k in _TYPES for k in kinds):
            return False
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(is_plain(node) for node in properties.values()):
        return False
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(key, str) for key in required):
        return False
    for key in ("additionalProperties", "items", "not"):
        if key in schema and not is_plain(schema[key]):
            return False
    if "enum" in schema and not isinstance(schema["enum"], list):
        return False
    for key in _BOUNDS:
        if key in schema and not (_is_number(schema[key]) and schema[key] == schema[key]):
            return False
    for key in _COUNTS:
        if key in schema and not (isinstance(schema[key], int) and not isinstance(schema[key], bool)):
            return False
        if key in schema and schema[key] < 0:
            return False
    for key in _SCHEMA_LISTS:
        if key in schema:
            members = schema[key]
            if not isinstance(members, list) or not members or not all(is_plain(m) for m in members):
                return False
    return True


def _has_type(value: Any, kind: str) -> bool:
    # jsonschema's Draft 2020-12 type checker.
    if kind == "string":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if kind == "number":
        return isinstance(value, numbers.Number)
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _unbool(value: Any) -> Any:
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


_TRUE, _FALSE = object(), object()


def _equal(one: Any, two: Any) -> bool:
    # jsonschema's ``equal``: True is not 1, and containers compare item by item the same way.
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and _equal(item, two[key]) for key, item in one.items()
        )
    return bool(_unbool(one) == _unbool(two))


def is_valid(schema: Any, value: Any) -> bool:
    """Whether ``value`` satisfies the plain ``schema`` (see :func:`is_plain`)."""
    if schema is True:
        return True
    if schema is False:
        return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_has_type(value, k) for k in kinds):
            return False
    if "enum" in schema and not any(_equal(member, value) for member in schema["enum"]):
        return False
    if "const" in schema and not _equal(schema["const"], value):
        return False
    if isinstance(value, str) and not _fits_counts(schema, len(value), "minLength", "maxLength"):
        return False
    if _is_number(value) and not _within_bounds(schema, value):
        return False
    if isinstance(value, dict) and not _object_valid(schema, value):
        return False
    if isinstance(value, list) and not _array_valid(schema, value):
        return False
    if "allOf" in schema and not all(is_valid(member, value) for member in schema["allOf"]):
        return False
    if "anyOf" in schema and not any(is_valid(member, value) for member in schema["anyOf"]):
        return False
    if "oneOf" in schema and sum(1 for member in schema["oneOf"] if is_valid(member, value)) != 1:
        return False
    return not ("not" in schema and is_valid(schema["not"], value))


def _fits_counts(schema: dict[str, Any], count: int, low: str, high: str) -> bool:
    return not (low in schema and count < schema[low]) and not (high in schema and count > schema[high])


def _within_bounds(schema: dict[str, Any], value: Any) -> bool:
    if "minimum" in schema and value < schema["minimum"]:
        return False
    if "maximum" in schema and value > schema["maximum"]:
        return False
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return False
    return not ("exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"])


def _object_valid(schema: dict[str, Any], value: dict[str, Any]) -> bool:
    if any(key not in value for key in schema.get("required", ())):
        return False
    properties = schema.get("properties", {})
    for key, node in properties.items():
        if key in value and not is_valid(node, value[key]):
            return False
    if "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        for key in value:
            if key not in properties and not is_valid(extra, value[key]):
                return False
    return _fits_counts(schema, len(value), "minProperties", "maxProperties")


def _array_valid(schema: dict[str, Any], value: list[Any]) -> bool:
    if "items" in schema and not all(is_valid(schema["items"], item) for item in value):
        return False
    return _fits_counts(schema, len(value), "minItems", "maxItems")
