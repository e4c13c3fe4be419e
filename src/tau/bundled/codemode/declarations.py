"""TypeScript declarations of tools for model-facing descriptions (pi ``pi-codemode/declarations``).

A JSON Schema becomes a TypeScript type: objects on one line (``{ a: string; b?: number; }``,
properties sorted by name), or one property per line with ``//`` comments when a property has a
description or constraints the type cannot express (``// @integer @minimum 1 @default 20``);
``Array<T>`` for arrays; local ``$ref``s expanded (recursive and remote ones become ``unknown``). The
output is byte-for-byte what pi renders, so a tool's codemode declaration reads the same in both.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from tau.bundled.codemode.source import to_identifier

__all__ = [
    "render_tool_output_type",
    "render_tool_sample",
    "render_tool_signature",
    "resolve_schema_ref",
    "schema_to_type",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
INDENT = "  "
DEFAULT_INPUT_SCHEMA_MAX_CHARS = 16_000
_MAX_REF_EXPANSIONS = 32
_TAG_KEYWORDS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
)
_LOWER_BOUNDS = {"minimum", "exclusiveMinimum", "minLength", "minItems"}
_UPPER_BOUNDS = {"maximum", "exclusiveMaximum", "maxLength", "maxItems"}
_MAX_TAG_CHARS = 80
_LINE_TERMINATORS = re.compile("[\r\n\u2028\u2029]")


def _js(value: Any) -> str:
    """``JSON.stringify(value)`` for the values a schema holds."""
    from tau.common import jsjson

    return jsjson.dumps_str(value)


def _number(value: Any) -> str:
    from tau.common.jsjson import js_number

    return js_number(value)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def render_tool_signature(tool: dict[str, Any], input_max_chars: int = DEFAULT_INPUT_SCHEMA_MAX_CHARS) -> str:
    """``name(args: T): Promise<R>;`` with the script identifier as the name."""
    schema = tool.get("inputSchema")
    arguments = "unknown" if schema is None else schema_to_type(schema, input_max_chars)
    return f"{to_identifier(tool['name'])}(args: {arguments}): Promise<{render_tool_output_type(tool.get('outputSchema'))}>;"


def render_tool_sample(tool: dict[str, Any]) -> str:
    """The description followed by the tool's declaration (codemode listings, ``ALL_TOOLS``)."""
    declaration = f"declare const tools: {{ {render_tool_signature(tool)} }};"
    description = (tool.get("description") or "").strip()
    return f"{description}\n\ncodemode tool declaration:\n```ts\n{declaration}\n```"


def render_tool_output_type(schema: Any) -> str:
    return "unknown" if schema is None else schema_to_type(schema)


def schema_to_type(schema: Any, max_chars: int | None = None) -> str:
    """The TypeScript type of ``schema``; over ``max_chars`` again without tags, then ``unknown``."""

    def render(tags: bool) -> str:
        return _Renderer(schema, tags).type(schema)

    rendered = render(True)
    if max_chars is None or len(rendered) <= max_chars:
        return rendered
    untagged = render(False)
    return untagged if len(untagged) <= max_chars else "unknown"


def resolve_schema_ref(ref: str, root: Any) -> Any:
    """The subschema a local ``$ref`` names in ``root``; ``None`` for remote or dangling references."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    import urllib.parse

    current = root
    for segment in (part for part in ref[2:].split("/") if part):
        try:
            decoded = urllib.parse.unquote(segment, errors="strict")
        except UnicodeDecodeError:
            return None
        key = decoded.replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    if isinstance(current, bool):
        return current
    return current if isinstance(current, dict) else None


def _union(types: list[str]) -> str:
    unique = list(dict.fromkeys(types))
    if "unknown" in unique:
        return "unknown"
    return "never" if not unique else " | ".join(unique)


class _Renderer:
    def __init__(self, root: Any, tags: bool) -> None:
        self.root = root
        self.tags = tags
        self.resolving: set[str] = set()
        self.expansions = 0

    def type(self, schema: Any) -> str:
        if schema is True:
            return "unknown"
        if schema is False:
            return "never"
        if not isinstance(schema, dict):
            return "unknown"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in self.resolving or self.expansions >= _MAX_REF_EXPANSIONS:
                return "unknown"
            target = resolve_schema_ref(ref, self.root)
            if target is None:
                return "unknown"
            self.expansions += 1
            self.resolving.add(ref)
            try:
                return self.type(target)
            finally:
                self.resolving.discard(ref)
        if "const" in schema:
            return _js(schema["const"])
        if isinstance(schema.get("enum"), list):
            return _union([_js(value) for value in schema["enum"]])
        variants = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else schema.get("oneOf")
        if isinstance(variants, list):
            return _union([self.type(variant) for variant in variants])
        if isinstance(schema.get("allOf"), list):
            parts = [part for part in (self.type(p) for p in schema["allOf"]) if part != "unknown"]
            if not parts:
                return "unknown"
            return " & ".join(f"({part})" if " | " in part else part for part in parts)
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.type({**schema, "type": entry}) for entry in kind])
        if kind == "string":
            return "string"
        if kind in ("number", "integer"):
            return "number"
        if kind == "boolean":
            return "boolean"
        if kind == "null":
            return "null"
        if kind == "array":
            return self.array(schema)
        if kind == "object":
            return self.object(schema)
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema or "required" in schema:
                return self.object(schema)
            if "items" in schema or "prefixItems" in schema:
                return self.array(schema)
        return "unknown"

    def array(self, schema: dict[str, Any]) -> str:
        items = schema.get("items")
        if "items" in schema and not isinstance(items, list):
            return f"Array<{self.type(items)}>"
        prefix = schema.get("prefixItems")
        tuple_items = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
        if tuple_items:
            return "[" + ", ".join(self.type(item) for item in tuple_items) + "]"
        return "unknown[]"

    def object(self, schema: dict[str, Any]) -> str:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        names = sorted(properties, key=_utf16_key)
        members = [
            f"{_property_key(name)}{'' if name in required else '?'}: {self.type(properties[name])};"
            for name in names
        ]
        additional = schema.get("additionalProperties", _MISSING)
        if additional is not _MISSING and additional is not False:
            members.append(f"[key: string]: {'unknown' if additional is True else self.type(additional)};")
        elif additional is _MISSING and not names:
            members.append("[key: string]: unknown;")
        if not members:
            return "{}"
        comments = []
        for name in names:
            lines = [line.strip() for line in _LINE_TERMINATORS.split(_description(properties[name]))]
            lines = [line for line in lines if line]
            tags = _constraint_tags(properties[name]) if self.tags else ""
            comments.append([*lines, tags] if tags else lines)
        if not any(comments):
            return "{ " + " ".join(members) + " }"
        out = ["{"]
        for index, comment in enumerate(comments):
            out.extend(f"{INDENT}// {line}" for line in comment)
            out.append(INDENT + members[index].replace("\n", "\n" + INDENT))
        out.extend(INDENT + member for member in members[len(names) :])
        out.append("}")
        return "\n".join(out)


_MISSING: Any = object()


def _utf16_key(name: str) -> bytes:
    # JavaScript sorts strings by UTF-16 code units
    return name.encode("utf-16-be", "surrogatepass")


def _property_key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else _js(name)


def _description(schema: Any) -> str:
    description = schema.get("description") if isinstance(schema, dict) else None
    return description.strip() if isinstance(description, str) else ""


def _constraint_tags(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    variants = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else schema.get("oneOf")
    non_null = (
        [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]
        if isinstance(variants, list)
        else []
    )
    branch = non_null[0] if len(non_null) == 1 else None
    branches = [schema, branch] if isinstance(branch, dict) else [schema]
    schemas = []
    for item in branches:
        copy = dict(item)
        if copy.get("exclusiveMinimum") is True:
            copy["minimum"], copy["exclusiveMinimum"] = None, item.get("minimum")
        if copy.get("exclusiveMaximum") is True:
            copy["maximum"], copy["exclusiveMaximum"] = None, item.get("maximum")
        schemas.append(copy)
    tags = []

    def is_integer(kind: Any) -> bool:
        return kind == "integer" or (isinstance(kind, list) and "integer" in kind)

    if any(is_integer(item.get("type")) for item in schemas):
        tags.append("@integer")
    for keyword in _TAG_KEYWORDS:
        values = [item.get(keyword) for item in schemas]
        if keyword in _LOWER_BOUNDS or keyword in _UPPER_BOUNDS:
            numbers = [value for value in values if _is_number(value)]
            if numbers:
                bound = max(numbers) if keyword in _LOWER_BOUNDS else min(numbers)
                tags.append(f"@{keyword} {_number(bound)}")
            continue
        for value in dict.fromkeys(v for v in values if _is_number(v) or isinstance(v, str)):
            tags.append(f"@{keyword} {_number(value) if _is_number(value) else value}")
    if any(item.get("uniqueItems") is True for item in schemas):
        tags.append("@uniqueItems")
    if schema.get("default") is not None:
        tags.append(f"@default {_js(schema['default'])}")
    if schema.get("deprecated") is True:
        tags.append("@deprecated")
    return " ".join(
        _LINE_TERMINATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", tag)
        for tag in tags
        if len(tag) <= _MAX_TAG_CHARS
    )
