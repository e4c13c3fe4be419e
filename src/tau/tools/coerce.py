"""Coercing a model's tool arguments towards their schema before validation (pi-schema ``coerce.ts``).

Three passes, in pi's order:

1. Optional nulls: ``null`` in an optional property whose schema rejects null is dropped.
2. Conversion (TypeBox's ``Value.Convert`` rules): ``"3.5"`` to a number, ``"true"`` to a boolean,
   a number to a string, a single value to a one-item array, the first union branch that converts.
3. Primitive coercion by ``type`` (Ajv's ``coerceTypes``), for what pass 2 left.

A value that cannot be coerced is left as it is; validation then reports it. JavaScript has one
number type, so a JSON number that is integral is an "integer" whichever way Python parsed it, and
``True`` is never the number 1.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from tau.common.jsjson import js_number

__all__ = ["Coercer", "is_number", "js_equal", "js_to_number"]

_MAX_SAFE = 2**53 - 1
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_RADIX = {"0x": 16, "0o": 8, "0b": 2}
_BIGINT_N = re.compile(r"-?(0|[1-9]\d*)n")
_BIGINT_DECIMAL = re.compile(r"-?(0|[1-9]\d*)\.\d+")
_BIGINT_INT = re.compile(r"-?(0|[1-9]\d*)")

_MISSING: Any = object()


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def object_field(node: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """``node[key]`` when it is an object (a schema keyword such as ``properties``), else ``None``."""
    value = node.get(key)
    return value if isinstance(value, dict) else None


def _finite(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


def _num(value: float) -> int | float:
    """A JS number as Python prefers it: integral values as ``int``."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE:
        return int(value)
    return value


def js_equal(left: Any, right: Any) -> bool:
    """JavaScript ``===`` for JSON values: primitives by type and value, containers by identity."""
    if isinstance(left, dict | list) or isinstance(right, dict | list):
        return left is right
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if is_number(left) and is_number(right):
        return left == right
    return type(left) is type(right) and left == right


def js_to_number(text: str) -> float:
    """JavaScript's ``+text``: trimmed, empty is 0, hex/octal/binary literals, ``Infinity``, else NaN."""
    body = text.strip(_JS_WHITESPACE)
    if not body:
        return 0
    if body in ("Infinity", "+Infinity"):
        return math.inf
    if body == "-Infinity":
        return -math.inf
    radix = _RADIX.get(body[:2].lower())
    if radix is not None:
        try:
            return int(body[2:], radix) if body[2:] and "_" not in body else math.nan
        except ValueError:
            return math.nan
    if _DECIMAL.fullmatch(body):
        return float(body)
    return math.nan


def _try_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if _finite(value):
        return js_number(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    return _MISSING


def _big_of_string(text: str) -> int | None:
    if _BIGINT_N.fullmatch(text):
        return int(text[:-1])
    if _BIGINT_DECIMAL.fullmatch(text):
        return int(text.split(".")[0])
    if _BIGINT_INT.fullmatch(text):
        return int(text)
    return None


def _try_number(value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    if _finite(value):
        return value
    if value is None:
        return 0
    if not isinstance(value, str):
        return _MISSING
    number = js_to_number(value)
    if math.isfinite(number):
        return _num(number)
    lowered = value.lower()
    if lowered == "false":
        return 0
    if lowered == "true":
        return 1
    big = _big_of_string(value)
    return big if big is not None and abs(big) <= _MAX_SAFE else _MISSING


def _try_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if _finite(value):
        return {0: False, 1: True}.get(value, _MISSING)
    if value is None:
        return False
    if not isinstance(value, str):
        return _MISSING
    if value.lower() == "false" or value == "0":
        return False
    if value.lower() == "true" or value == "1":
        return True
    return _MISSING


def _try_null(value: Any) -> Any:
    if isinstance(value, bool):
        return None if value is False else _MISSING
    if _finite(value):
        return None if value == 0 else _MISSING
    if value is None:
        return None
    if isinstance(value, str) and (value.lower() in ("undefined", "null") or value in ("", "0")):
        return None
    return _MISSING


def _or(result: Any, value: Any) -> Any:
    return value if result is _MISSING else result


def _convert_literal(literal: Any, value: Any) -> Any:
    if js_equal(literal, value):
        return value
    if isinstance(literal, bool):
        result = _try_boolean(value)
    elif isinstance(literal, str):
        result = _try_string(value)
    elif is_number(literal):
        result = _try_number(value)
    else:
        return value
    return result if result is not _MISSING and js_equal(result, literal) else value


def _types_of(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _matches_type(value: Any, kind: str) -> bool:
    match kind:
        case "number":
            return _finite(value)
        case "integer":
            return is_number(value) and math.isfinite(value) and float(value).is_integer()
        case "boolean":
            return isinstance(value, bool)
        case "string":
            return isinstance(value, str)
        case "null":
            return value is None
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
    return False


def _coerce_primitive(value: Any, kind: str) -> Any:
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, str) and value.strip(_JS_WHITESPACE):
            parsed = js_to_number(value)
            if math.isfinite(parsed) and (kind == "number" or float(parsed).is_integer()):
                return _num(parsed)
        if isinstance(value, bool):
            return 1 if value else 0
        return value
    if kind == "boolean":
        if value is None:
            return False
        if value == "true" or (is_number(value) and value == 1):
            return True
        if value == "false" or (is_number(value) and value == 0):
            return False
        return value
    if kind == "string":
        if value is None:
            return ""
        if is_number(value) or isinstance(value, bool):
            return _try_string(value)
        return value
    if kind == "null":
        return None if value == "" or (is_number(value) and value == 0) or value is False else value
    return value


def _item_schema_at(schema: dict[str, Any], index: int) -> Any:
    items = schema.get("items")
    if isinstance(items, list):
        return items[index] if index < len(items) else None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return items


class Coercer:
    """Coerces values for one root schema. ``passes(node, value)`` checks a subschema of it."""

    def __init__(self, root: dict[str, Any], passes: Callable[[Any, Any], bool]) -> None:
        self.root = root
        self.passes = passes
        self._entered: list[tuple[int, Any]] = []

    def coerce(self, value: Any) -> Any:
        """``value`` coerced (a new value; the input is not modified)."""
        value = copy.deepcopy(value)
        value = self._drop_optional_nulls(value, self.root)
        value = self._convert(self.root, value)
        return self._coerce_types(value, self.root)

    def resolve(self, ref: str) -> Any:
        """A local ``#/...`` reference in the root schema, or ``None``."""
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    # Pass 1 -------------------------------------------------------------------------------------

    def _drop_optional_nulls(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        if isinstance(value, list):
            return [
                item if (s := _item_schema_at(schema, i)) is None else self._drop_optional_nulls(item, s)
                for i, item in enumerate(value)
            ]
        if not isinstance(value, dict):
            return value
        properties = object_field(schema, "properties") or {}
        patterns = object_field(schema, "patternProperties") or {}
        additional = object_field(schema, "additionalProperties")
        required = set(schema.get("required") or [])
        out = dict(value)
        for key, prop in properties.items():
            if key not in out:
                continue
            is_ref = isinstance(prop, dict) and isinstance(prop.get("$ref"), str)
            if out[key] is None and key not in required and not is_ref and self.passes(prop, None) is False:
                del out[key]
                continue
            out[key] = self._drop_optional_nulls(out[key], prop)
        for key in list(out):
            matched = key in properties
            for pattern, item in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    out[key] = self._drop_optional_nulls(out[key], item)
            if not matched and additional is not None:
                out[key] = self._drop_optional_nulls(out[key], additional)
        return out

    # Pass 2 -------------------------------------------------------------------------------------

    def _reenter(self, node: Any, value: Any) -> Any:
        marker = (id(node), id(value) if isinstance(value, dict | list) else (type(value), value))
        if marker in self._entered:
            return value
        self._entered.append(marker)
        try:
            return self._convert(node, value)
        finally:
            self._entered.pop()

    def _convert(self, node: Any, value: Any) -> Any:
        if not isinstance(node, dict):
            return value
        if isinstance(node.get("$ref"), str):
            target = self.resolve(node["$ref"])
            return self._reenter(target, value) if isinstance(target, dict) else value
        if "const" in node:
            return _convert_literal(node["const"], value)
        if isinstance(node.get("enum"), list):
            return self._convert_enum(node, value)
        for union in ("anyOf", "oneOf"):
            if isinstance(node.get(union), list):
                return self._convert_union(node, node[union], value)
        if isinstance(node.get("allOf"), list):
            for member in node["allOf"]:
                value = self._convert(member, value)
            return self._convert_members(node, value)
        kind = node.get("type")
        if kind == "string":
            return _or(_try_string(value), value)
        if kind == "number":
            return _or(_try_number(value), value)
        if kind == "integer":
            result = _try_number(value)
            return value if result is _MISSING else _num(float(math.trunc(result)))
        if kind == "boolean":
            return _or(_try_boolean(value), value)
        if kind == "null":
            return _or(_try_null(value), value)
        if kind == "array" or (kind is None and ("items" in node or "prefixItems" in node)):
            return self._convert_array(node, value)
        if kind == "object" or (kind is None and ("properties" in node or "patternProperties" in node)):
            return self._convert_object(node, value)
        return value

    def _convert_enum(self, node: dict[str, Any], value: Any) -> Any:
        members = node["enum"]
        if any(js_equal(member, value) for member in members):
            return value
        for member in members:
            candidate = _convert_literal(member, value)
            if not js_equal(candidate, value) and self.passes(node, candidate) is True:
                return candidate
        return value

    def _convert_union(self, node: dict[str, Any], branches: list[Any], value: Any) -> Any:
        if any(self.passes(branch, value) is True for branch in branches):
            return self._convert_members(node, value)
        for branch in branches:
            candidate = self._convert_members(node, self._convert(branch, value))
            if self.passes(node, candidate) is True:
                return candidate
        return self._convert_members(node, value)

    def _convert_members(self, node: dict[str, Any], value: Any) -> Any:
        declares = any(k in node for k in ("properties", "patternProperties", "additionalProperties"))
        return self._convert_object(node, value) if declares else value

    def _convert_array(self, node: dict[str, Any], value: Any) -> Any:
        items = node.get("items")
        prefix = items if isinstance(items, list) else node.get("prefixItems")
        if isinstance(prefix, list):
            if not isinstance(value, list):
                return value  # a tuple never wraps a single value
            rest = None if isinstance(items, list) else items
            return [
                item if (s := (prefix[i] if i < len(prefix) else rest)) is None else self._convert(s, item)
                for i, item in enumerate(value)
            ]
        if isinstance(value, list):
            return value if items is None else [self._convert(items, item) for item in value]
        return [self._reenter(items, value) if isinstance(items, dict) else value]

    def _convert_object(self, node: dict[str, Any], value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        properties = object_field(node, "properties") or {}
        patterns = object_field(node, "patternProperties") or {}
        additional = object_field(node, "additionalProperties")
        out = dict(value)
        for key, item in value.items():
            matched = key in properties
            if matched:
                item = self._convert(properties[key], item)
            for pattern, schema in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    item = self._convert(schema, item)
            if not matched and additional is not None:
                item = self._convert(additional, item)
            out[key] = item
        return out

    # Pass 3 -------------------------------------------------------------------------------------

    def _coerce_types(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        if isinstance(schema.get("allOf"), list):
            for member in schema["allOf"]:
                value = self._coerce_types(value, member)
        for union in ("anyOf", "oneOf"):
            if isinstance(schema.get(union), list):
                value = self._coerce_union(value, schema[union])
        types = _types_of(schema)
        matches_member = len(types) > 1 and any(_matches_type(value, kind) for kind in types)
        if types and not matches_member:
            for kind in types:
                candidate = _coerce_primitive(value, kind)
                if not js_equal(candidate, value):
                    value = candidate
                    break
        if "object" in types and isinstance(value, dict):
            value = self._coerce_properties(value, schema)
        if "array" in types and isinstance(value, list):
            value = [
                self._coerce_types(item, s) if isinstance(s := _item_schema_at(schema, i), dict) else item
                for i, item in enumerate(value)
            ]
        return value

    def _coerce_union(self, value: Any, branches: list[Any]) -> Any:
        if any(self.passes(branch, value) is True for branch in branches):
            return value
        for branch in branches:
            coerced = self._coerce_types(value, branch)
            if self.passes(branch, coerced) is True:
                return coerced
        return value

    def _coerce_properties(self, value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        properties = object_field(schema, "properties") or {}
        patterns = object_field(schema, "patternProperties") or {}
        additional = object_field(schema, "additionalProperties")
        out = dict(value)
        for key, prop in properties.items():
            if key in out:
                out[key] = self._coerce_types(out[key], prop)
        for key in list(out):
            matched = key in properties
            for pattern, item in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    out[key] = self._coerce_types(out[key], item)
            if not matched and additional is not None:
                out[key] = self._coerce_types(out[key], additional)
        return out
