"""The structured system prompt (pi 1.6 ``system-prompt.ts``), worded for tau.

The prompt is a set of named sections. ``preamble`` is plain text; every other section is wrapped
as ``<name>\\n…\\n</name>`` so a later system message can replace it by name. Sections become
``SystemMessage.sections`` in the transcript; :func:`diff_sections` gives the patch a later system
message carries when the desired prompt changes.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern

__all__ = ["DEFAULT_PREAMBLE", "PromptOptions", "build_sections", "diff_sections", "render_prompt"]

DEFAULT_PREAMBLE = (
    "You are a coding assistant running inside tau, a coding agent harness. "
    "Help users inspect files, run commands, and modify code."
)
_SECTION_NAME = lazy_pattern(r"^[a-z][a-z0-9_-]*$")
_DOCS_ROOT = Path(__file__).resolve().parents[3] / "docs"


@dataclass
class PromptOptions:
    """What the system prompt is built from."""

    cwd: str
    selected_tools: list[str] = field(default_factory=lambda: ["read", "bash", "edit", "write"])
    hidden_tools: list[str] = field(default_factory=list)
    tool_snippets: dict[str, str] = field(default_factory=dict)
    tool_guidelines: dict[str, list[str]] = field(default_factory=dict)
    prompt_guidelines: list[str] = field(default_factory=list)
    custom_prompt: str | None = None
    append_prompt: str = ""
    context_files: list[tuple[str, str]] = field(default_factory=list)  # (path, content)
    sections: dict[str, str] = field(default_factory=dict)  # extension sections
    skills: list[Any] = field(default_factory=list)  # tau.agent.skills.Skill


def _rules(tools: list[str], guidelines: dict[str, list[str]], extra: list[str]) -> str:
    rules: list[str] = []

    def add(rule: str) -> None:
        text = rule.strip()
        if text and text not in rules:
            rules.append(text)

    if "bash" in tools and not {"grep", "find", "ls"} & set(tools):
        add("Use bash for file operations like ls, rg, find")
    for name in tools:
        for rule in guidelines.get(name, []):
            add(rule)
    for rule in extra:
        add(rule)
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    return "\n".join(f"- {rule}" for rule in rules)


def _docs() -> str:
    return (
        "tau documentation (read only when the user asks about the harness itself, its extensions, "
        "settings or session files):\n"
        f"- Main documentation: {_DOCS_ROOT.parent / 'README.md'}\n"
        f"- Additional docs: {_DOCS_ROOT}\n"
        "- When asked about: extensions (docs/extensions.md), settings (docs/settings.md), "
        "models and providers (docs/models.md), sessions (docs/sessions.md), "
        "bundled extensions (docs/extensions/)"
    )


def _project_context(files: list[tuple[str, str]]) -> str:
    parts = ["Project-specific instructions and guidelines:"]
    parts += [
        f'<project_instructions path="{path}">\n{content}\n</project_instructions>' for path, content in files
    ]
    return "\n\n".join(parts)


def _skills(options: PromptOptions, declared: list[str]) -> str:
    """The skills listing, when a tool can read a skill's file: ``read``, else ``bash``; a reader that
    is selected but hidden is still reachable through another tool, so the hint then names none."""
    if not options.skills:
        return ""
    reader: str | None = next((tool for tool in ("read", "bash") if tool in declared), None)
    if reader is None and any(tool in options.selected_tools for tool in ("read", "bash")):
        reader = "indirect"
    if reader is None:
        return ""
    from tau.agent.skills import format_skills_for_prompt

    return format_skills_for_prompt(options.skills, reader).strip()


def build_sections(options: PromptOptions) -> dict[str, str]:
    """The ordered sections: preamble, tools, rules, docs, addendum, project_context, skills, cwd, extension ones."""
    for name in options.sections:
        if not _SECTION_NAME.match(name) or name == "preamble":
            raise ValueError(f"Invalid system prompt section name: {name}")
    declared = [name for name in options.selected_tools if name not in options.hidden_tools]
    raw: dict[str, str] = {}
    if options.custom_prompt:
        raw["preamble"] = options.custom_prompt
    else:
        raw["preamble"] = DEFAULT_PREAMBLE
        visible = [name for name in declared if options.tool_snippets.get(name)]
        listing = "\n".join(f"- {name}: {options.tool_snippets[name]}" for name in visible) or "(none)"
        raw["tools"] = f"{listing}\n\nAdditional tools may be available."
        raw["rules"] = _rules(declared, options.tool_guidelines, options.prompt_guidelines)
        raw["docs"] = _docs()
    if options.append_prompt:
        raw["addendum"] = options.append_prompt
    if options.context_files:
        raw["project_context"] = _project_context(options.context_files)
    skills = _skills(options, declared)
    if skills:
        raw["skills"] = skills
    raw["cwd"] = options.cwd.replace("\\", "/")
    for name, content in options.sections.items():
        if content:
            raw[name] = content
    return {
        name: text if name == "preamble" else f"<{name}>\n{text}\n</{name}>" for name, text in raw.items()
    }


def render_prompt(content: str, sections: dict[str, str | None] | None) -> str:
    """The prompt text a system message replays to: content, then each non-null section, by blank lines."""
    parts = [content] if content else []
    parts += [text for text in (sections or {}).values() if text is not None]
    return "\n\n".join(parts)


def diff_sections(previous: dict[str, str | None], current: dict[str, str]) -> dict[str, str | None] | None:
    """The ``sections`` patch from ``previous`` to ``current`` (``None`` removes), or ``None`` if equal."""
    patch: dict[str, str | None] = {
        name: text for name, text in current.items() if previous.get(name) != text
    }
    patch.update({name: None for name in previous if name not in current})
    return patch or None
