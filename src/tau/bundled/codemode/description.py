"""What the model reads about codemode: its description, how the other tools are presented in
``codemode.mode`` ``on`` and ``only``, and which tools a script may reach (pi ``codemode/tool.ts``).

- ``on`` (default): declared tools stay declared, each description ending with how a script calls
  it (``Codemode: `tools.read(args)` resolves to ...``); the codemode description lists only the
  callable tools that are not ``direct`` (for example MCP tools with ``codemode`` exposure).
- ``only``: the codemode description lists every callable tool, and the active ``direct`` tools'
  declarations are hidden from requests, so the model reaches them through scripts.

Listed tools carry their prompt guidelines (the system prompt only has those of declared tools),
grouped by namespace, within ``codemode.inlineBudget`` estimated tokens; ``deferred`` tools are never
listed. The texts are pi's, so a session declares the same tools in pi and in tau.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from tau.bundled.codemode.source import to_identifier
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "DEFAULT_INLINE_BUDGET",
    "TOOL_NAME",
    "callable_for_scripts",
    "codemode_description",
    "prepare_loadout",
    "script_reach",
    "to_declaration",
]

TOOL_NAME = "codemode"
DEFAULT_INLINE_BUDGET = 3000
_CHARS_PER_TOKEN = 4
TEXT_OUTPUT_SCHEMA: dict[str, Any] = {"type": "string"}

_INTRO = (
    "Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as an "
    "async function body in a QuickJS sandbox: top-level `await` and `return` work. No Node, file system, "
    "network, or timers.\n"
    "- `await tools.<name>({ ...args })` resolves to a string, or an object if the tool's declaration says so, "
    "and rejects with an Error on failure. A tool whose declaration returns an object resolves on failure too "
    "when it returned that object; check its fields. Calls still running when the script ends are cancelled.\n"
    '- Optional first line: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`'
)


def _globals(docs_path: str | None) -> str:
    lines = [
        "Globals:",
        "- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)`, and top-level `return` add output; "
        "`exit()` ends the script. With several text items, each starts with a `==> text N/M <==` line, and "
        "`console` lines follow the other output in one `<console_output>` block. `image()` also saves the "
        "image to a temp file and the result names its path.",
        "- `store(key, value)` and `load(key)` keep JSON values across codemode calls.",
        "- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, "
        "`await describeNamespace(name)`: find unlisted tools, such as MCP tools.",
    ]
    if docs_path:
        lines.append(f"- `models`: classifiers and image generation. Read {docs_path} first.")
    return "\n".join(lines)


def to_declaration(tool: Any, guidelines: list[str] | None = None) -> dict[str, Any]:
    """What a script sees of a tool: its description and prompt guidelines, input and output schema."""
    bullets = [f"- {line.strip()}" for line in guidelines or [] if line.strip()]
    description = tool.description
    if bullets:
        description = f"{description.strip()}\n\n" + "\n".join(bullets)
    return {
        "name": tool.name,
        "description": description,
        "inputSchema": tool.parameters,
        "outputSchema": tool.output_schema if tool.output_schema is not None else TEXT_OUTPUT_SCHEMA,
    }


def callable_for_scripts(tools: list[Any]) -> list[Any]:
    """Every given tool but codemode itself: scripts never start scripts."""
    return [tool for tool in tools if tool.name != TOOL_NAME]


def _section(declaration: dict[str, Any]) -> str:
    from tau.bundled.codemode.declarations import render_tool_sample

    identifier = to_identifier(declaration["name"])
    heading = (
        f"### `{identifier}`"
        if identifier == declaration["name"]
        else f"### `{identifier}` (`{declaration['name']}`)"
    )
    return f"{heading}\n{render_tool_sample(declaration).strip()}"


def _select(groups: list[dict[str, Any]], budget: float | None) -> set[str]:
    """The listed tools: each round, every group places its cheapest remaining tool; a group whose
    next tool does not fit drops out while the others go on."""
    if budget is None:
        return {entry["name"] for group in groups for entry in group["entries"]}
    queues = [sorted(group["entries"], key=lambda entry: entry["cost"]) for group in groups]
    shown: set[str] = set()
    remaining = budget
    active = [queue for queue in queues if queue]
    while active:
        still = []
        for queue in active:
            entry = queue[0]
            if entry["cost"] > remaining:
                continue
            remaining -= entry["cost"]
            shown.add(entry["name"])
            queue.pop(0)
            if queue:
                still.append(queue)
        active = still
    return shown


def codemode_description(
    tools: list[Any],
    *,
    docs_path: str | None = None,
    namespaces: dict[str, dict[str, Any]] | None = None,
    guidelines: dict[str, list[str]] | None = None,
    deferred: set[str] | None = None,
    inline_budget: float | None = None,
) -> str:
    """The codemode description listing ``tools`` (a ``docs_path`` adds the ``models`` line)."""
    declarations = [
        to_declaration(tool, (guidelines or {}).get(tool.name))
        for tool in callable_for_scripts(tools)
        if tool.name not in (deferred or set())
    ]
    groups: dict[str, dict[str, Any]] = {"": {"namespace": None, "entries": []}}
    for declaration in declarations:
        namespace = (namespaces or {}).get(declaration["name"])
        key = f"ns:{namespace['name']}" if namespace else ""
        group = groups.setdefault(key, {"namespace": namespace, "entries": []})
        section = _section(declaration)
        group["entries"].append(
            {
                "name": declaration["name"],
                "section": section,
                "cost": math.ceil(_js_len(section) / _CHARS_PER_TOKEN),
            }
        )
    plain = [groups[""]]
    named = sorted((g for k, g in groups.items() if k), key=lambda g: g["namespace"]["name"])
    ordered = plain + named
    shown = _select(ordered, inline_budget)
    sections = [_INTRO, _globals(docs_path)]
    if not declarations:
        return "\n\n".join(sections)
    tool_sections = ["Nested tools:"]
    for group in ordered:
        entries = group["entries"]
        visible = [entry for entry in entries if entry["name"] in shown]
        namespace = group["namespace"]
        if namespace:
            listing = (
                ""
                if len(visible) == len(entries)
                else " (tools not listed)"
                if not visible
                else " (some tools not listed)"
            )
            description = (namespace.get("description") or "").strip()
            tool_sections.append(
                f"## {namespace['name']}{listing}" + (f"\n{description}" if description else "")
            )
        tool_sections.extend(entry["section"] for entry in visible)
    sections.append("\n\n".join(tool_sections))
    return "\n\n".join(sections)


def _js_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _follow_ref(schema: Any, root: Any) -> Any:
    from tau.bundled.codemode.declarations import resolve_schema_ref

    seen: set[int] = set()
    current = schema
    while isinstance(current, dict) and id(current) not in seen:
        ref = current.get("$ref")
        if not isinstance(ref, str):
            break
        target = resolve_schema_ref(ref, root)
        if target is None:
            break
        seen.add(id(current))
        current = target
    return current


def _fields(schema: Any, root: Any, depth: int) -> str | None:
    from tau.common import jsjson

    resolved = _follow_ref(schema, root)
    if not isinstance(resolved, dict):
        return None
    properties = resolved.get("properties")
    if resolved.get("type") != "object" or not isinstance(properties, dict):
        return None
    required = set(resolved.get("required") or []) if isinstance(resolved.get("required"), list) else set()
    fields = []
    for name, field in properties.items():
        target = _follow_ref(field, root)
        if isinstance(target, dict) and "const" in target:
            nested: str | None = jsjson.dumps_str(target["const"])
        else:
            nested = _fields(field, root, depth - 1) if depth > 0 else None
        fields.append(f"{name}{'' if name in required else '?'}" + (f": {nested}" if nested else ""))
    return "{ " + ", ".join(fields) + " }"


def _union_fields(schema: Any, root: Any) -> str | None:
    resolved = _follow_ref(schema, root)
    if not isinstance(resolved, dict):
        return None
    variants = resolved.get("anyOf") if resolved.get("anyOf") is not None else resolved.get("oneOf")
    if not isinstance(variants, list) or not variants:
        return None
    described = [text for variant in variants if (text := _fields(variant, root, 0)) is not None]
    return " | ".join(described) if len(described) == len(variants) else None


def _describe_output(name: str, schema: Any) -> str:
    from tau.bundled.codemode.declarations import render_tool_output_type
    from tau.common import jsjson

    rendered = render_tool_output_type(schema)
    if rendered == "string":
        return "a string"
    fields = None if schema is None else (_fields(schema, schema, 1) or _union_fields(schema, schema))
    if fields:
        return f"`{fields}`"
    if "\n" not in rendered:
        return f"`{rendered}`"
    return f"a value; `await describeTool({jsjson.dumps_str(name)})` shows its type"


def describe_script_call(tool: Any) -> str:
    """A declared tool's description, then how scripts call it and what the call resolves to."""
    output = to_declaration(tool)["outputSchema"]
    return (
        f"{tool.description.strip()}\n\nCodemode: `tools.{to_identifier(tool.name)}(args)` resolves to "
        f"{_describe_output(tool.name, output)}."
    )


def prepare_loadout(
    loadout: Any,
    mode: str,
    inline_budget: float | None,
    docs_path: str | None,
) -> dict[str, Any]:
    """The codemode tool's ``prepare_loadout``: replaced descriptions and, in ``only``, the hidden
    declarations. Listing by exposure rather than by the active set keeps the codemode description
    unchanged when a tool is activated."""
    callable_tools = callable_for_scripts(loadout.callable)
    callable_names = {tool.name for tool in callable_tools}
    descriptions: dict[str, str] = {}
    if mode == "on":
        for tool in loadout.declared:
            if tool.name in callable_names:
                descriptions[tool.name] = describe_script_call(tool)
    listed = (
        callable_tools
        if mode == "only"
        else [tool for tool in callable_tools if loadout.get_exposure(tool.name) != "direct"]
    )
    namespaces = {
        tool.name: namespace for tool in listed if (namespace := loadout.get_namespace(tool.name)) is not None
    }
    guidelines = {tool.name: loadout.get_prompt_guidelines(tool.name) for tool in listed}
    deferred = {tool.name for tool in listed if loadout.get_exposure(tool.name) == "deferred"}
    descriptions[TOOL_NAME] = codemode_description(
        listed,
        docs_path=docs_path,
        namespaces=namespaces,
        guidelines=guidelines,
        deferred=deferred,
        inline_budget=DEFAULT_INLINE_BUDGET if inline_budget is None else inline_budget,
    )
    declared = {tool.name for tool in loadout.declared}
    hidden = (
        [
            tool.name
            for tool in callable_tools
            if loadout.get_exposure(tool.name) == "direct" and tool.name in declared
        ]
        if mode == "only"
        else []
    )
    return {"descriptions": descriptions, "hiddenDeclarations": hidden}


_DISCOVERY = lazy_pattern(r"\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b")
_WORDS = lazy_pattern(r"\w+", re.ASCII)


def script_reach(args: Any) -> str | list[str]:
    """``reaches_tools``: every tool for a script that searches or lists tools, else its words."""
    code = args.get("code") if isinstance(args, dict) else None
    if not isinstance(code, str):
        return []
    return "all" if _DISCOVERY.search(code) else _WORDS.findall(code)


GetSetting = Callable[[], Any]
