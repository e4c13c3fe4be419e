"""The session's tools and system prompt: what is registered, what is active, and the sections.

pi 1.6 keeps one registry of tool definitions (built-ins, then extension tools, which replace a
built-in of the same name), an ordered set of *active* tools (declared to the model), and the
system-prompt options the sections are built from. The transcript records both: a system message
carries the changed ``sections`` and the loop adds ``toolsAdded``/``toolsRemoved`` deltas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field, replace
from typing import Any

from tau.agent.settings import apply_tool_modifiers
from tau.agent.system_prompt import PromptOptions, build_sections, diff_sections, render_prompt
from tau.common.dataclass import dataclass
from tau.common.jsstr import ms_now
from tau.common.lazy_regex import lazy_pattern
from tau.llm.transcript import current_system_message, current_tools
from tau.tools.base import ToolDefinition

__all__ = [
    "MCP_RESOURCE_TOOLS",
    "Allowlist",
    "Loadout",
    "PromptSettings",
    "ToolSet",
    "is_mcp_tool_name",
    "name_matcher",
    "options_from_json",
    "options_to_json",
    "system_patch",
    "unique_guidelines",
]

_WHITESPACE = lazy_pattern(r"\s+")


def name_matcher(entries: Sequence[str]) -> Callable[[str], bool]:
    """Match tool names against ``--tools`` entries: exact names or ``*`` patterns."""
    patterns = [re.compile("^" + ".*".join(map(re.escape, entry.split("*"))) + "$") for entry in entries]
    return lambda name: any(pattern.match(name) for pattern in patterns)


# The MCP resource tools, which reach every server with resources (pi ``core/mcp-servers``).
MCP_RESOURCE_TOOLS = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})


def is_mcp_tool_name(name: str) -> bool:
    """Whether a tool comes from MCP: a server tool (``mcp__<server>__<tool>``) or a resource tool."""
    return name.startswith("mcp__") or name in MCP_RESOURCE_TOOLS


class Allowlist:
    """The ``--tools`` allowlist (pi): a tool is registered when an entry names or matches it, and
    MCP tools are kept registered unnamed (for codemode and ``tool_search``) unless the list is empty
    (``--no-tools``) or an entry starts with ``mcp__``. :meth:`names` says whether an entry names it."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.names = name_matcher(entries)
        self.filters_mcp = not entries or any(entry.startswith("mcp__") for entry in entries)

    def __call__(self, name: str) -> bool:
        return self.names(name) or (not self.filters_mcp and is_mcp_tool_name(name))


def _snippet(text: str | None) -> str | None:
    if not text:
        return None
    one_line = _WHITESPACE.sub(" ", text.replace("\r", " ").replace("\n", " ")).strip()
    return one_line or None


def unique_guidelines(lines: Iterable[str] | None) -> list[str]:
    """Prompt guidelines trimmed, without blanks and repeats (pi ``_normalizePromptGuidelines``)."""
    unique: list[str] = []
    for line in lines or []:
        text = line.strip()
        if text and text not in unique:
            unique.append(text)
    return unique


@dataclass
class PromptSettings:
    """What the system prompt is built from besides the tools (``--system-prompt``, AGENTS.md, ...)."""

    custom_prompt: str | None = None
    append_prompt: str = ""
    context_files: list[tuple[str, str]] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    prompt_guidelines: list[str] = field(default_factory=list)
    skills: list[Any] = field(default_factory=list)  # tau.agent.skills.Skill, listed in the prompt


@dataclass
class Loadout:
    """What a tool's ``prepare_loadout`` hook sees (pi ``ToolLoadout``).

    Attributes:
        declared: The active tools, declared to the model, in order.
        callable: The tools other tools may call (``ctx.execute_tool``) with this active set.
        registered: Every registered tool.
    """

    declared: list[ToolDefinition]
    callable: list[ToolDefinition]
    registered: list[ToolDefinition]
    _guidelines: Callable[[str], list[str]] = field(repr=False, default=lambda name: [])

    def get_exposure(self, name: str) -> str:
        tool = next((t for t in self.registered if t.name == name), None)
        return tool.exposure if tool is not None else "direct"

    def get_namespace(self, name: str) -> dict[str, Any] | None:
        tool = next((t for t in self.registered if t.name == name), None)
        return tool.namespace_info() if tool is not None else None

    def get_prompt_guidelines(self, name: str) -> list[str]:
        return self._guidelines(name)


class ToolSet:
    """Registered tool definitions and the active (declared) ones, in pi's order rules.

    Args:
        builtins: the built-in definitions (pi's base tools).
        allowed: the ``--tools`` allowlist matcher; ``None`` allows everything.
        excluded: the ``--exclude-tools`` matcher: never registered usable, whatever else says.
    """

    def __init__(
        self,
        builtins: Iterable[ToolDefinition],
        allowed: Callable[[str], bool] | None = None,
        excluded: Callable[[str], bool] | None = None,
    ) -> None:
        self._builtins = {tool.name: tool for tool in builtins}
        self._extension: dict[str, ToolDefinition] = {}
        self._allowed = allowed
        self._excluded = excluded
        self.active: list[str] = []
        # The order the initial selection (or a restored loadout) names tools in: a named extension
        # tool that registers while extensions load takes its place in it, as in pi, where every
        # extension tool is registered before the first loadout is built. None once the session starts.
        self._order: list[str] | None = None
        # Tools the transcript mentions (a restored loadout), and names to activate once registered:
        # the restored loadout's, and the initial selection's (``--tools +codemode``, ``defaultTools``).
        self._mentioned: set[str] = set()
        self._pending: set[str] = set()
        # From the active tools' prepare_loadout hooks: replaced descriptions, hidden declarations.
        self.descriptions: dict[str, str] = {}
        self.hidden: set[str] = set()

    # -- the registry ------------------------------------------------------------------------

    def is_allowed(self, name: str) -> bool:
        if self._excluded is not None and self._excluded(name):
            return False
        return self._allowed is None or self._allowed(name)

    def is_named(self, name: str) -> bool:
        """Whether the allowlist names or matches the tool (not merely keeps an MCP tool)."""
        if self._allowed is None:
            return False
        names = getattr(self._allowed, "names", self._allowed)
        return bool(names(name))

    def is_activatable(self, name: str, tool: ToolDefinition) -> bool:
        """Whether the tool may be declared (pi ``_isActivatable``): an MCP tool the allowlist keeps
        without naming it only through ``tool_search``, so never a ``direct`` one."""
        if tool.exposure == "hidden":
            return False
        if self._allowed is None or self.is_named(name) or not is_mcp_tool_name(name):
            return True
        return tool.exposure != "direct" and "tool_search" in self.registry

    @property
    def registry(self) -> dict[str, ToolDefinition]:
        """Every usable definition by name: built-ins, then extension tools (which win)."""
        merged = {name: tool for name, tool in self._builtins.items() if self.is_allowed(name)}
        merged.update({name: tool for name, tool in self._extension.items() if self.is_allowed(name)})
        return merged

    def offered_names(self) -> set[str]:
        """Every tool name offered, whether the allowlist lets it in or not."""
        return set(self._builtins) | set(self._extension)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtins and name not in self._extension

    def register(self, definition: ToolDefinition) -> bool:
        """Add (or replace) an extension tool; True when it should become active now.

        A tool the restored transcript mentions is active only if the recorded loadout has it (a
        removed tool stays inactive); a tool the initial selection names (``--tools``,
        ``defaultTools``) activates whatever its ``default_active``, as one an allowlist names; any
        other new tool activates when its exposure is declarable and ``default_active`` is true.
        """
        name = definition.name
        # A replaced built-in is not new: it stays as active as the built-in was (pi).
        known = name in self._extension or name in self._builtins
        self._extension[name] = definition
        if definition.exposure == "hidden":
            # Tools cannot be unregistered: re-registering one hidden withdraws it (pi).
            self.active = [active for active in self.active if active != name]
            return False
        if not self.is_allowed(name):
            return False
        if name in self._mentioned:
            return name in self._pending
        if name in self._pending:
            return True
        if self._allowed is not None:
            return self.is_named(name) and definition.declarable
        return not known and definition.activated_on_registration

    def activate_registered(self, name: str) -> None:
        """Activate a tool that just registered (:meth:`register` said so): at its place in the
        initial order while extensions load, else after the active tools."""
        order = self._order
        if order is None or name not in order:
            self.set_active([*self.active, name])
            return
        rank = order.index(name)
        later = next(
            (i for i, other in enumerate(self.active) if other not in order or order.index(other) > rank),
            len(self.active),
        )
        placed = [*self.active[:later], name, *self.active[later:]]
        self.active = []  # set_active keeps the current order; this is a new one
        self.set_active(placed)

    def settle_order(self) -> None:
        """The session starts: tools registering from now on join after the active ones (pi)."""
        self._order = None

    def clear_pending(self) -> None:
        """A run starts: requested tools that never registered are dropped (pi)."""
        self._pending.clear()

    def unregister(self, name: str) -> None:
        self._extension.pop(name, None)
        if name not in self.registry:
            self.active = [active for active in self.active if active != name]

    # -- the active set ----------------------------------------------------------------------

    def set_active(self, names: Iterable[str]) -> list[str]:
        """Activate ``names`` (unknown and ``hidden`` ones ignored): kept tools keep their order, new
        ones follow."""
        registry = self.registry
        requested = list(dict.fromkeys(names))
        kept = [name for name in self.active if name in requested]
        self.active = [
            name
            for name in dict.fromkeys([*kept, *requested])
            if name in registry and self.is_activatable(name, registry[name])
        ]
        self._pending.difference_update(self.active)
        return list(self.active)

    def request(self, names: Iterable[str], order: Sequence[str] | None = None) -> None:
        """The initial selection: activate the registered names, keep the others until they register.

        ``order`` (default: ``names``) is where a named tool that registers while extensions load
        takes its place (:meth:`activate_registered`).
        """
        names = list(names)
        self._order = list(order) if order is not None else names
        self.set_active(names)
        self._pending.update(name for name in names if name not in self.registry and self.is_allowed(name))

    def active_definitions(self) -> list[ToolDefinition]:
        registry = self.registry
        return [registry[name] for name in self.active if name in registry]

    def callable_definitions(self, active: Iterable[str] | None = None) -> list[ToolDefinition]:
        """What other tools may call (pi): the active ``direct`` tools and every ``codemode`` or
        ``deferred`` tool, in registry order."""
        names = set(self.active if active is None else active)
        return [
            tool
            for tool in self.registry.values()
            if tool.exposure in ("codemode", "deferred") or (tool.exposure == "direct" and tool.name in names)
        ]

    def declared_definitions(
        self,
        guidelines: Callable[[str], list[str]] = lambda name: [],
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> list[ToolDefinition]:
        """The active tools as declared to the model: the ``prepare_loadout`` hooks of active tools
        may replace descriptions and hide declarations (:attr:`hidden`; requests leave them out)."""
        active = self.active_definitions()
        hooks = [tool for tool in active if tool.prepare_loadout is not None]
        self.descriptions, self.hidden = {}, set()
        if not hooks:
            return active
        loadout = Loadout(
            declared=list(active),
            callable=self.callable_definitions([tool.name for tool in active]),
            registered=list(self.registry.values()),
            _guidelines=guidelines,
        )
        for tool in hooks:
            try:
                changes = tool.prepare_loadout(loadout) or {}  # type: ignore[misc]
                for name, description in (changes.get("descriptions") or {}).items():
                    if isinstance(description, str):
                        self.descriptions[name] = description
                self.hidden.update(n for n in changes.get("hiddenDeclarations") or [] if isinstance(n, str))
            except Exception as exc:  # a broken hook must not take the loadout down (pi reports it)
                if on_error is not None:
                    on_error(tool.name, exc)
        return [
            replace(tool, description=self.descriptions[tool.name])
            if tool.name in self.descriptions
            else tool
            for tool in active
        ]

    def restore_from_transcript(
        self, system_messages: Sequence[dict[str, Any]], modifiers: Sequence[str]
    ) -> bool:
        """Re-activate the loadout a session's system messages declare; False when they declare none."""
        if not system_messages:
            return False
        mentioned = {
            tool["name"]
            for message in system_messages
            for tool in [*(message.get("toolsAdded") or []), *(message.get("toolsRemoved") or [])]
        }
        new_tools = [
            name
            for name, tool in self._extension.items()
            if name not in mentioned and name not in self._builtins and tool.activated_on_registration
        ]
        recorded = [tool["name"] for tool in current_tools(system_messages)]
        names = apply_tool_modifiers([*recorded, *new_tools], list(modifiers))
        # Extension tools register after the restore: one the branch never mentioned activates as a
        # new tool, unless a ``-name`` modifier removed it.
        removed = {entry[1:] for entry in modifiers if entry.startswith("-")}
        self._mentioned = mentioned | set(names) | removed
        self.active = []
        self._order = list(names)
        self.set_active(names)
        self._pending = {name for name in names if self.is_allowed(name) and name not in self.active}
        return True

    # -- the prompt --------------------------------------------------------------------------

    def prompt_options(self, cwd: str, prompt: PromptSettings) -> PromptOptions:
        registry = self.registry
        snippets = {name: s for name, tool in registry.items() if (s := _snippet(tool.prompt_snippet))}
        guidelines = {
            name: g for name, tool in registry.items() if (g := unique_guidelines(tool.prompt_guidelines))
        }
        return PromptOptions(
            cwd=cwd,
            selected_tools=list(self.active),
            hidden_tools=sorted(self.hidden),
            tool_snippets=snippets,
            tool_guidelines=guidelines,
            prompt_guidelines=list(prompt.prompt_guidelines),
            custom_prompt=prompt.custom_prompt,
            append_prompt=prompt.append_prompt,
            context_files=list(prompt.context_files),
            sections=dict(prompt.sections),
            skills=list(prompt.skills),
        )


def options_to_json(options: PromptOptions) -> dict[str, Any]:
    """``systemPromptOptions`` as ``before_agent_start`` handlers see (and may edit) them, pi's keys."""
    return {
        "customPrompt": options.custom_prompt,
        "selectedTools": list(options.selected_tools),
        "hiddenTools": list(options.hidden_tools),
        "toolSnippets": dict(options.tool_snippets),
        "toolGuidelines": {name: list(lines) for name, lines in options.tool_guidelines.items()},
        "promptGuidelines": list(options.prompt_guidelines),
        "sections": dict(options.sections),
        "appendSystemPrompt": options.append_prompt,
        "cwd": options.cwd,
        "contextFiles": [{"path": path, "content": content} for path, content in options.context_files],
        "skills": [skill.to_json() for skill in options.skills],
    }


def options_from_json(data: dict[str, Any], base: PromptOptions) -> PromptOptions:
    """Prompt options after handlers edited ``systemPromptOptions`` (missing or mistyped keys keep ``base``)."""

    def pick(key: str, kind: type, default: Any) -> Any:
        value = data.get(key, default)
        return value if isinstance(value, kind) else default

    files = pick("contextFiles", list, None)
    skills = pick("skills", list, None)
    return PromptOptions(
        cwd=pick("cwd", str, base.cwd),
        selected_tools=[n for n in pick("selectedTools", list, base.selected_tools) if isinstance(n, str)],
        hidden_tools=[n for n in pick("hiddenTools", list, base.hidden_tools) if isinstance(n, str)],
        tool_snippets=dict(pick("toolSnippets", dict, base.tool_snippets)),
        tool_guidelines=dict(pick("toolGuidelines", dict, base.tool_guidelines)),
        prompt_guidelines=[
            g for g in pick("promptGuidelines", list, base.prompt_guidelines) if isinstance(g, str)
        ],
        custom_prompt=data.get("customPrompt")
        if isinstance(data.get("customPrompt"), str)
        else base.custom_prompt,
        append_prompt=pick("appendSystemPrompt", str, base.append_prompt),
        context_files=(
            [(f.get("path", ""), f.get("content", "")) for f in files if isinstance(f, dict)]
            if files is not None
            else list(base.context_files)
        ),
        sections=dict(pick("sections", dict, base.sections)),
        skills=list(base.skills) if skills is None else _skills_from_json(skills),
    )


def _skills_from_json(items: list[Any]) -> list[Any]:
    from tau.agent.skills import Skill

    return [
        skill for item in items if isinstance(item, dict) and (skill := Skill.from_json(item)) is not None
    ]


def system_patch(messages: Sequence[dict[str, Any]], options: PromptOptions) -> dict[str, Any] | None:
    """The system message that brings the transcript's sections to ``options`` (``None``: unchanged)."""
    current = current_system_message(messages)
    previous = dict((current.get("sections") if current else None) or {})
    patch = diff_sections(previous, build_sections(options))
    if patch is None:
        return None
    return {"role": "system", "content": "", "sections": patch, "timestamp": ms_now()}


def rendered_prompt(options: PromptOptions, forced: str | None = None) -> str:
    """The system prompt text these options give (or the forced one)."""
    if forced is not None:
        return forced
    return render_prompt("", dict(build_sections(options)))


def with_selected(options: PromptOptions, names: list[str]) -> PromptOptions:
    return replace(options, selected_tools=list(names))
