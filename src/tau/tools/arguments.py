"""Validating a tool call's arguments against the tool's JSON Schema, as pi-ai 1.6 does.

Arguments are first rewritten by the tool's ``prepare_arguments`` (legacy shapes), then coerced
(:mod:`tau.tools.coerce`), then checked (:mod:`tau.tools.plain_schema` for plain schemas,
``jsonschema`` for the others). A failure raises
:class:`ToolArgumentsError` whose message is pi's, word for word::

    Validation failed for tool "read":
      - offset: expected number, got string

    Received arguments:
    {
      "path": "a.txt",
      "offset": "abc"
    }

Each line names the field (a JSON pointer shown with dots, ``edits.0.oldText``; ``root`` for the
whole object) and pi-schema's message for the first failing keyword at that place.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.jsjson import dumps_str, js_number
from tau.llm.types import ToolCall
from tau.tools.base import ToolDefinition, ToolError
from tau.tools.coerce import Coercer, is_number, js_equal, object_field
from tau.tools.plain_schema import is_plain, is_valid

__all__ = [
    "ToolArgumentsError",
    "ValidationIssue",
    "explain",
    "format_json_pretty",
    "prepare_arguments",
    "validate_arguments",
    "validate_tool_arguments",
]


class ToolArgumentsError(ToolError):
    """The arguments of a tool call do not fit the tool's schema; the message is what the model reads."""


@dataclass(frozen=True)
class ValidationIssue:
    """One failing keyword: where (a JSON pointer), which keyword, and pi-schema's message."""

    path: str
    keyword: str
    message: str


class _Schema:
    """A compiled root schema: subschema checks through jsonschema, local references resolved.

    A plain schema (:mod:`tau.tools.plain_schema`: the built-in tools' and most others) is checked
    without jsonschema, which costs 66-130 ms to import.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self.root = schema
        self.plain = is_plain(schema)
        self.draft7 = False
        if not self.plain:
            # Imported here: jsonschema costs ~100 ms at import, and `tau --version` must stay fast.
            import jsonschema
            from jsonschema import validators

            self._schema_error = jsonschema.exceptions.SchemaError
            cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            self.draft7 = (
                cls is not jsonschema.Draft202012Validator and cls is not jsonschema.Draft201909Validator
            )
            self.root_validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        self.coercer = Coercer(schema, self.passes)

    def passes(self, node: Any, value: Any) -> bool:
        if node is True:
            return True
        if node is False:
            return False
        if self.plain:
            return is_valid(node, value)
        try:
            return self.root_validator.evolve(schema=node).is_valid(value)
        except self._schema_error:
            return False
        except Exception:  # an unresolvable $ref rejects only the values at its place
            return False


_compiled: dict[int, tuple[dict[str, Any], _Schema]] = {}


def _compile(schema: dict[str, Any]) -> _Schema:
    cached = _compiled.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    compiled = _Schema(schema)
    _compiled[id(schema)] = (schema, compiled)
    return compiled


def prepare_arguments(definition: ToolDefinition, arguments: Any) -> Any:
    """The tool's ``prepare_arguments`` applied (or the arguments unchanged)."""
    return definition.prepare_arguments(arguments) if definition.prepare_arguments else arguments


def validate_arguments(name: str, schema: dict[str, Any], arguments: Any) -> Any:
    """Coerce and check ``arguments``; return the coerced value or raise :class:`ToolArgumentsError`."""
    compiled = _compile(schema)
    coerced = compiled.coercer.coerce(arguments)
    if compiled.passes(schema, coerced):
        return coerced
    issues = _Explainer(compiled).errors(coerced)
    lines = "\n".join(f"  - {_dotted(issue.path)}: {issue.message}" for issue in issues)
    raise ToolArgumentsError(
        f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{format_json_pretty(arguments)}'
    )


def validate_tool_arguments(definition: ToolDefinition, tool_call: ToolCall) -> dict[str, Any]:
    """pi's ``validateToolArguments`` for an already prepared call (``argumentsError`` first)."""
    if tool_call.get("argumentsError"):
        raise ToolArgumentsError(
            f'Invalid arguments for tool "{tool_call["name"]}": {tool_call["argumentsError"]}'
        )
    return validate_arguments(tool_call["name"], definition.parameters, tool_call["arguments"])


def explain(schema: dict[str, Any], value: Any) -> list[ValidationIssue]:
    """Why ``value`` fails ``schema`` (no coercion); ``[]`` when it passes."""
    compiled = _compile(schema)
    return [] if compiled.passes(schema, value) else _Explainer(compiled).errors(value)


def _dotted(pointer: str) -> str:
    if pointer == "":
        return "root"
    return ".".join(part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/"))


def format_json_pretty(value: Any, level: int = 0) -> str:
    """``JSON.stringify(value, null, 2)``."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{dumps_str(str(k))}: {format_json_pretty(v, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(f"{inner}{format_json_pretty(v, level + 1)}" for v in value) + f"\n{pad}]"
    return dumps_str(value)


def _pointer(path: str, key: str | int) -> str:
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        if not math.isfinite(value):
            return "Infinity" if value > 0 else ("-Infinity" if value < 0 else "NaN")
        return "integer" if float(value).is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _type_matches(value: Any, kind: str) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "number":
            return is_number(value) and math.isfinite(value)
        case "integer":
            return is_number(value) and math.isfinite(value) and float(value).is_integer()
        case "boolean":
            return isinstance(value, bool)
        case "null":
            return value is None
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
    return False


def _list_values(values: list[Any]) -> str:
    if len(values) <= 20:
        return dumps_str(values)
    listed = dumps_str(values[:20])
    return f"{listed[:-1]}, ... and {len(values) - 20} more]"


def _code_points(text: str) -> int:
    return len(text)


class _Explainer:
    """pi-schema's ``Explainer``: one issue per failing keyword, at the value it failed on."""

    def __init__(self, schema: _Schema) -> None:
        self.schema = schema

    def errors(self, value: Any) -> list[ValidationIssue]:
        out: list[ValidationIssue] = []
        self._walk(self.schema.root, value, "", out)
        return out or [ValidationIssue("", "schema", "invalid")]

    def _ok(self, node: Any, value: Any) -> bool:
        return self.schema.passes(node, value)

    def _walk(self, node: Any, value: Any, path: str, out: list[ValidationIssue]) -> None:
        if node is True:
            return
        if node is False:
            out.append(ValidationIssue(path, "false", "no value is allowed here"))
            return
        if not isinstance(node, dict) or self._ok(node, value):
            return

        def push(keyword: str, message: str, at: str = path) -> None:
            out.append(ValidationIssue(at, keyword, message))

        if self.schema.draft7 and isinstance(node.get("$ref"), str):
            self._walk_ref(node["$ref"], value, path, out)
            return
        if "type" in node:
            kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
            if not any(isinstance(k, str) and _type_matches(value, k) for k in kinds):
                push("type", f"expected {' or '.join(str(k) for k in kinds)}, got {_type_name(value)}")
                return
        if isinstance(node.get("enum"), list) and not any(_json_equal(m, value) for m in node["enum"]):
            push("enum", f"expected one of {_list_values(node['enum'])}")
        if "const" in node and not _json_equal(node["const"], value):
            push("const", f"expected {dumps_str(node['const'])}")
        if isinstance(value, str):
            self._walk_string(node, value, push)
        if is_number(value):
            self._walk_number(node, value, push)
        if isinstance(value, dict):
            self._walk_object(node, value, path, out, push)
        if isinstance(value, list):
            self._walk_array(node, value, path, out, push)
        for member in node.get("allOf") or []:
            self._walk(member, value, path, out)
        if isinstance(node.get("anyOf"), list):
            self._walk_union(node["anyOf"], value, path, out, exactly_one=False)
        if isinstance(node.get("oneOf"), list):
            self._walk_union(node["oneOf"], value, path, out, exactly_one=True)
        if "not" in node and self._ok(node["not"], value):
            push("not", "must not match the schema in not")
        if "if" in node:
            branch = node.get("then") if self._ok(node["if"], value) else node.get("else")
            if branch is not None:
                self._walk(branch, value, path, out)
        if not self.schema.draft7 and isinstance(node.get("$ref"), str):
            self._walk_ref(node["$ref"], value, path, out)

    def _walk_ref(self, ref: str, value: Any, path: str, out: list[ValidationIssue]) -> None:
        target = self.schema.coercer.resolve(ref)
        if target is None:
            out.append(ValidationIssue(path, "$ref", f"unresolved reference {ref}"))
            return
        self._walk(target, value, path, out)

    def _walk_string(self, node: dict[str, Any], value: str, push: Any) -> None:
        count = _code_points(value)
        if is_number(node.get("minLength")) and count < node["minLength"]:
            push("minLength", f"expected at least {js_number(node['minLength'])} characters")
        if is_number(node.get("maxLength")) and count > node["maxLength"]:
            push("maxLength", f"expected at most {js_number(node['maxLength'])} characters")
        if isinstance(node.get("pattern"), str) and not re.search(node["pattern"], value):
            push("pattern", f"expected to match {node['pattern']}")
        if isinstance(node.get("format"), str) and not self._ok({"format": node["format"]}, value):
            push("format", f"expected format {node['format']}")

    def _walk_number(self, node: dict[str, Any], value: float, push: Any) -> None:
        checks = (
            ("minimum", lambda b: value < b, "expected >= {}"),
            ("maximum", lambda b: value > b, "expected <= {}"),
            ("exclusiveMinimum", lambda b: value <= b, "expected > {}"),
            ("exclusiveMaximum", lambda b: value >= b, "expected < {}"),
        )
        for keyword, fails, message in checks:
            bound = node.get(keyword)
            if is_number(bound) and fails(bound):
                push(keyword, message.format(js_number(bound)))
        multiple = node.get("multipleOf")
        if is_number(multiple) and not self._ok({"multipleOf": multiple}, value):
            push("multipleOf", f"expected a multiple of {js_number(multiple)}")

    def _walk_object(
        self, node: dict[str, Any], value: dict[str, Any], path: str, out: Any, push: Any
    ) -> None:
        properties = object_field(node, "properties") or {}
        for key in node.get("required") or []:
            if isinstance(key, str) and key not in value:
                push("required", "missing", _pointer(path, key))
        for key, prop in properties.items():
            if key in value:
                self._walk(prop, value[key], _pointer(path, key), out)
        patterns = object_field(node, "patternProperties") or {}
        additional = node.get("additionalProperties")
        for key in value:
            matched = key in properties
            for pattern, schema in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    self._walk(schema, value[key], _pointer(path, key), out)
            if not matched and additional is not None:
                if additional is False:
                    push("additionalProperties", "unknown field", _pointer(path, key))
                else:
                    self._walk(additional, value[key], _pointer(path, key), out)
            if "propertyNames" in node and not self._ok(node["propertyNames"], key):
                push("propertyNames", "invalid property name", _pointer(path, key))
        if is_number(node.get("minProperties")) and len(value) < node["minProperties"]:
            push("minProperties", f"expected at least {js_number(node['minProperties'])} properties")
        if is_number(node.get("maxProperties")) and len(value) > node["maxProperties"]:
            push("maxProperties", f"expected at most {js_number(node['maxProperties'])} properties")
        dependencies = {} if self.schema.draft7 else dict(node.get("dependentRequired") or {})
        dependencies.update(node.get("dependencies") or {})
        for key, dependency in dependencies.items():
            if key not in value:
                continue
            if isinstance(dependency, list):
                for needed in dependency:
                    if needed not in value:
                        push("dependentRequired", f"required when {key} is present", _pointer(path, needed))
            else:
                self._walk(dependency, value, path, out)
        if not self.schema.draft7:
            for key, schema in (node.get("dependentSchemas") or {}).items():
                if key in value:
                    self._walk(schema, value, path, out)

    def _walk_array(self, node: dict[str, Any], value: list[Any], path: str, out: Any, push: Any) -> None:
        items = node.get("items")
        if isinstance(items, list):
            prefix, rest = items, node.get("additionalItems")
        else:
            prefix_items = node.get("prefixItems")
            prefix = prefix_items if not self.schema.draft7 and isinstance(prefix_items, list) else []
            rest = items
        for index, item in enumerate(value):
            schema = prefix[index] if index < len(prefix) else rest
            if schema is not None:
                self._walk(schema, item, f"{path}/{index}", out)
        if is_number(node.get("minItems")) and len(value) < node["minItems"]:
            push("minItems", f"expected at least {js_number(node['minItems'])} items")
        if is_number(node.get("maxItems")) and len(value) > node["maxItems"]:
            push("maxItems", f"expected at most {js_number(node['maxItems'])} items")
        if node.get("uniqueItems") is True and not self._ok({"uniqueItems": True}, value):
            push("uniqueItems", "expected unique items")
        if "contains" in node:
            low = 1 if self.schema.draft7 or not is_number(node.get("minContains")) else node["minContains"]
            high = (
                math.inf
                if self.schema.draft7 or not is_number(node.get("maxContains"))
                else node["maxContains"]
            )
            found = sum(1 for item in value if self._ok(node["contains"], item))
            if not low <= found <= high:
                push("contains", _contains_message(low, high))

    def _walk_union(
        self, branches: list[Any], value: Any, path: str, out: list[ValidationIssue], exactly_one: bool
    ) -> None:
        matches = sum(1 for branch in branches if self._ok(branch, value))
        if matches == 1 or (not exactly_one and matches > 0):
            return
        keyword = "oneOf" if exactly_one else "anyOf"
        if matches > 1:
            out.append(ValidationIssue(path, keyword, "matches more than one alternative"))
            return
        tag = self._tag_of(branches)
        if tag is not None and isinstance(value, dict):
            key, values = tag
            index = next((i for i, v in enumerate(values) if js_equal(v, value.get(key))), -1)
            if index < 0:
                out.append(
                    ValidationIssue(_pointer(path, key), keyword, f"expected one of {_list_values(values)}")
                )
            else:
                self._walk(branches[index], value, path, out)
            return
        best: tuple[list[ValidationIssue], int] | None = None
        for branch in branches:
            errors: list[ValidationIssue] = []
            self._walk(branch, value, path, errors)
            if not errors:
                continue
            declared = self._declared_keys(branch, value) if isinstance(value, dict) else 0
            if (
                best is None
                or declared > best[1]
                or (declared == best[1] and len(errors[0].path) > len(best[0][0].path))
            ):
                best = (errors, declared)
        out.extend(best[0] if best else [ValidationIssue(path, keyword, "matches no alternative")])

    def _resolved(self, branch: Any) -> Any:
        if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
            return self.schema.coercer.resolve(branch["$ref"])
        return branch

    def _declared_keys(self, branch: Any, value: dict[str, Any]) -> int:
        node = self._resolved(branch)
        properties = (object_field(node, "properties") if isinstance(node, dict) else None) or {}
        return sum(1 for key in value if key in properties)

    def _tag_of(self, branches: list[Any]) -> tuple[str, list[Any]] | None:
        resolved = [self._resolved(b) for b in branches]
        first = resolved[0] if resolved else None
        if not isinstance(first, dict) or not isinstance(first.get("properties"), dict):
            return None
        for key in first["properties"]:
            values = []
            for node in resolved:
                prop = node.get("properties", {}).get(key) if isinstance(node, dict) else None
                values.append(prop.get("const", _NO_CONST) if isinstance(prop, dict) else _NO_CONST)
            primitive = all(v is not _NO_CONST and not isinstance(v, dict | list) for v in values)
            if primitive and len({json.dumps(v) for v in values}) == len(values):
                return key, values
        return None


_NO_CONST: Any = object()


def _json_equal(left: Any, right: Any) -> bool:
    """Deep JSON equality with JavaScript's number semantics (``1 == 1.0``, ``True != 1``)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
    return js_equal(left, right)


def _contains_message(low: float, high: float) -> str:
    if high == math.inf:
        return f"expected at least {js_number(low)} matching {'item' if low == 1 else 'items'}"
    if low == 0:
        return f"expected at most {js_number(high)} matching {'item' if high == 1 else 'items'}"
    return f"expected between {js_number(low)} and {js_number(high)} matching items"
