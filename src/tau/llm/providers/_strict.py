"""Strict JSON-schema tool declarations (pi-ai ``constrained-sampling.ts``, JSON-schema part).

A tool may ask for constrained sampling with ``constrainedSampling: {"type": "json_schema",
"strict": "prefer" | "require"}``. Where the provider supports strict tools and the schema fits
the strict subset, the tool is sent strict with a rewritten schema (every property required,
optional ones made nullable, ``additionalProperties: false``). ``prefer`` falls back to a normal
tool; ``require`` fails the request with a message naming the tool.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["UnsupportedSchema", "make_strict_schema", "prefers_strict", "resolve_strict", "tool_parameters"]

KeywordCheck = Callable[[str, Any], bool]

_UNSUPPORTED_KEYS = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


class UnsupportedSchema(ValueError):
    """The schema is outside the strict subset."""


def _is_structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    types = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    return isinstance(schema.get("anyOf"), list) and any(_allows_null(v) for v in schema["anyOf"])


def _strict_node(schema: Any, check: KeywordCheck | None) -> None:
    if not isinstance(schema, dict):
        raise UnsupportedSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_KEYS:
        if key in schema:
            raise UnsupportedSchema(f"{key} schemas are unsupported")
    if check is not None:
        for key, value in schema.items():
            if check(key, value):
                raise UnsupportedSchema(f"{key}: {value!r} is unsupported")
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise UnsupportedSchema("schemas without a type are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _is_structured(variant):
                raise UnsupportedSchema("object and array unions are unsupported")
            _strict_node(variant, check)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise UnsupportedSchema("tuple schemas are unsupported")
        _strict_node(schema["items"], check)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise UnsupportedSchema("properties require type object")
    if is_object:
        _strict_object(schema, check)


def _strict_object(schema: dict[str, Any], check: KeywordCheck | None) -> None:
    if schema.get("additionalProperties", False) is not False:
        raise UnsupportedSchema("schema-valued or true additionalProperties is unsupported")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise UnsupportedSchema("object properties must be a schema map")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(not isinstance(key, str) for key in required):
        raise UnsupportedSchema("object required must be a string array")
    if any(key not in properties for key in required):
        raise UnsupportedSchema("required contains an unknown property")
    for key, prop in list(properties.items()):
        _strict_node(prop, check)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    if "properties" in schema:
        schema["properties"] = properties
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict_schema(schema: Mapping[str, Any], check: KeywordCheck | None = None) -> dict[str, Any]:
    """A strict copy of ``schema``; raises :class:`UnsupportedSchema` when it cannot be made strict."""
    cloned = copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else schema
    if not isinstance(cloned, dict):
        raise UnsupportedSchema("root schema must have type object")
    _strict_node(cloned, check)
    if cloned.get("type") != "object":
        raise UnsupportedSchema("root schema must have type object")
    return cloned


def prefers_strict(tool: Mapping[str, Any]) -> bool:
    config = tool.get("constrainedSampling")
    return (
        isinstance(config, Mapping)
        and config.get("type") == "json_schema"
        and config.get("strict") == "prefer"
    )


def resolve_strict(
    tool: Mapping[str, Any], supported: bool, check: KeywordCheck | None = None
) -> bool | None:
    """``True`` when the tool goes out strict, ``None`` when not; raises for an unmet ``require``."""
    config = tool.get("constrainedSampling")
    if not isinstance(config, Mapping) or config.get("type") != "json_schema":
        return None
    if supported:
        try:
            make_strict_schema(tool["parameters"], check)
            return True
        except UnsupportedSchema as exc:
            if config.get("strict") != "require":
                return None
            raise ValueError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {exc}.'
            ) from exc
    if config.get("strict") == "require":
        raise ValueError(
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
        )
    return None


def tool_parameters(
    tool: Mapping[str, Any], strict: bool | None, check: KeywordCheck | None = None
) -> dict[str, Any]:
    return make_strict_schema(tool["parameters"], check) if strict else tool["parameters"]
