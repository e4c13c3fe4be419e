"""Where skills and prompt templates come from (pi 1.6's resource loader and package manager, for files).

In pi's order, the first of a name winning:

1. a trusted project's ``skills``/``prompts`` settings entries (paths from ``<cwd>/.tau``);
2. a trusted project's ``.tau/skills/`` and ``.tau/prompts/``, and the Agent Skills folders
   ``.agents/skills/`` of the cwd and its parents up to the git root;
3. the user's ``skills``/``prompts`` settings entries (paths from the agent dir);
4. the agent dir's ``skills/`` and ``prompts/``, and ``~/.agents/skills/``;
5. ``--skill`` / ``--prompt-template`` paths (kept with ``--no-skills`` / ``--no-prompt-templates``,
   which drop 1-4).

pi's ``.pi`` and ``~/.pi/agent`` are tau's ``.tau`` and agent dir (decisions.md). A settings entry
``!pattern`` leaves matching resources out, ``+path`` puts one back, ``-path`` leaves one out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from tau.agent.prompt_templates import PromptTemplate, load_prompt_templates
from tau.agent.skills import Diagnostic, Skill, load_skills, skill_entries
from tau.common.dataclass import dataclass
from tau.common.paths import git_root

__all__ = [
    "ResourceOptions",
    "Resources",
    "enabled_by_overrides",
    "enabled_by_patterns",
    "entry_matches",
    "extend_resources",
    "is_pattern_entry",
    "load_resources",
    "resolve_entry",
]


@dataclass
class Resources:
    """The skills and templates a session offers, and what loading them found wrong (and the theme
    paths extensions named, which the interactive mode loads)."""

    skills: list[Skill] = field(default_factory=list)
    skill_diagnostics: list[Diagnostic] = field(default_factory=list)
    prompts: list[PromptTemplate] = field(default_factory=list)
    prompt_diagnostics: list[Diagnostic] = field(default_factory=list)
    theme_paths: list[str] = field(default_factory=list)  # extensions' (resources_discover), for the terminal

    def warnings(self) -> list[str]:
        """One line per problem, for stderr or a notice: ``Skill …: <path>: <message>``."""
        return [f"Skill {d.text()}" if d.collision is None else d.text() for d in self.skill_diagnostics] + [
            f"Prompt template {d.text()}" if d.collision is None else d.text()
            for d in self.prompt_diagnostics
        ]

    def commands(self) -> list[dict[str, Any]]:
        """The template and skill commands as RPC ``get_commands`` lists them (templates first)."""
        listed: list[dict[str, Any]] = []
        for template in self.prompts:
            listed.append(
                {
                    "name": template.name,
                    "description": template.description,
                    "source": "prompt",
                    "sourceInfo": dict(template.source_info),
                }
            )
        for skill in self.skills:
            listed.append(
                {
                    "name": f"skill:{skill.name}",
                    "description": skill.description,
                    "source": "skill",
                    "sourceInfo": dict(skill.source_info),
                }
            )
        return listed


@dataclass
class ResourceOptions:
    """What resource discovery reads (the CLI's and the SDK's options, the settings files, trust)."""

    cwd: str
    agent_dir: str
    trusted: bool
    user_settings: dict[str, Any] = field(default_factory=dict)
    project_settings: dict[str, Any] = field(default_factory=dict)
    skill_paths: Sequence[str] = ()
    prompt_paths: Sequence[str] = ()
    no_skills: bool = False
    no_prompt_templates: bool = False
    home: str | None = None


def _metadata(source: str, scope: str, base_dir: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"source": source, "scope": scope, "origin": "top-level"}
    if base_dir is not None:
        meta["baseDir"] = base_dir
    return meta


def _key(path: str) -> str:
    return os.path.realpath(path)


class _Collected:
    """Resource files in discovery order with their metadata; the first of a file wins."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any] | None, bool]] = []  # path, metadata, enabled
        self._seen: set[str] = set()

    def add(self, path: str, metadata: dict[str, Any] | None, enabled: bool = True) -> None:
        key = _key(path)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append((path, metadata, enabled))

    def add_explicit(self, path: str) -> None:
        """A ``--skill``/``--prompt-template`` path: after the rest, unless an enabled one is the same file."""
        key = _key(path)
        if any(_key(existing) == key for existing, _, on in self.items if on):
            return
        self._seen.add(key)
        self.items.append((path, None, True))

    def enabled(self) -> list[tuple[str, dict[str, Any] | None]]:
        return [(path, meta) for path, meta, on in self.items if on]


def load_resources(options: ResourceOptions) -> Resources:
    """Discover and load the skills and prompt templates of a run (see the module docstring)."""
    skills, skill_diagnostics = _load_skills(options)
    prompts, prompt_diagnostics = _load_prompts(options)
    return Resources(skills, skill_diagnostics, prompts, prompt_diagnostics)


# -- skills -------------------------------------------------------------------------------------


def agents_skill_dirs(cwd: str, home: str | None = None) -> list[str]:
    """``.agents/skills`` of the cwd and each parent up to the git root (or ``/``), ``~``'s left out."""
    user_dir = os.path.join(home or os.path.expanduser("~"), ".agents", "skills")
    root = git_root(cwd)
    found, current = [], cwd
    while True:
        candidate = os.path.join(current, ".agents", "skills")
        if os.path.realpath(candidate) != os.path.realpath(user_dir):
            found.append(candidate)
        parent = os.path.dirname(current)
        if (root is not None and current == root) or parent == current:
            return found
        current = parent


def _load_skills(options: ResourceOptions) -> tuple[list[Skill], list[Diagnostic]]:
    collected = _Collected() if options.no_skills else _discovered(options, "skills")
    for raw in options.skill_paths:
        collected.add_explicit(_resolve(raw, options.cwd))
    return load_skills(collected.enabled(), cwd=options.cwd)


# -- prompt templates ---------------------------------------------------------------------------


def _prompt_entries(directory: str) -> list[str]:
    """The ``.md`` files directly in a prompts folder (names starting with ``.`` and ignored ones left out)."""
    from tau.agent.prompt_templates import template_entries
    from tau.tools.ignore_rules import IgnoreStack

    ignores = IgnoreStack(directory).with_directory(directory)
    return [
        path
        for path in template_entries(directory)
        if not os.path.basename(path).startswith(".") and not ignores.ignored(path, False)
    ]


def _load_prompts(options: ResourceOptions) -> tuple[list[PromptTemplate], list[Diagnostic]]:
    cwd = options.cwd
    collected = _Collected() if options.no_prompt_templates else _discovered(options, "prompts")
    missing: list[Diagnostic] = []
    for raw in options.prompt_paths:
        path = _resolve(raw, cwd)
        if not os.path.exists(path):
            missing.append(Diagnostic("error", "Prompt template path does not exist", path))
        collected.add_explicit(path)
    templates, diagnostics = load_prompt_templates(collected.enabled(), cwd=cwd)
    return templates, diagnostics + missing


# -- discovery ----------------------------------------------------------------------------------


def _discovered(options: ResourceOptions, kind: Literal["skills", "prompts"]) -> _Collected:
    """Steps 1-4 of the module docstring for one kind: the settings array's entries, then the
    scope's folders, for the trusted project and then the user."""
    cwd, agent_dir = options.cwd, options.agent_dir
    home = options.home or os.path.expanduser("~")
    skills = kind == "skills"
    collected = _Collected()
    if options.trusted:
        project_base = os.path.join(cwd, ".tau")
        folders = [(project_base, os.path.join(project_base, kind), False)]
        if skills:
            folders += [(os.path.dirname(d), d, True) for d in agents_skill_dirs(cwd, home)]
        entries = _strings(options.project_settings.get(kind))
        _add_scope(collected, "project", project_base, entries, folders, skills=skills)
    user_agents = os.path.join(home, ".agents")
    folders = [(agent_dir, os.path.join(agent_dir, kind), False)]
    if skills:
        folders.append((user_agents, os.path.join(user_agents, "skills"), True))
    entries = _strings(options.user_settings.get(kind))
    _add_scope(collected, "user", agent_dir, entries, folders, skills=skills)
    return collected


def _add_scope(
    collected: _Collected,
    scope: str,
    base: str,
    entries: list[str],
    folders: list[tuple[str, str, bool]],
    *,
    skills: bool,
) -> None:
    """One scope's resources: its settings ``entries`` (relative to ``base``), then the files of its
    ``folders`` (``(base, folder, agents_layout)``), each under the entries' ``!``/``+``/``-``."""
    _settings_entries(collected, entries, base, scope, skills=skills)
    overrides = _overrides(entries)
    for folder_base, folder, agents_layout in folders:
        found = skill_entries(folder, agents_layout=agents_layout) if skills else _prompt_entries(folder)
        for path in found:
            collected.add(path, _metadata("auto", scope, folder_base), _enabled(path, overrides, folder_base))


# -- settings entries ---------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    return [entry for entry in value if isinstance(entry, str)] if isinstance(value, list) else []


def _resolve(raw: str, base: str) -> str:
    text = os.path.expanduser(raw.strip())
    return os.path.normpath(os.path.join(base, text))


def _overrides(entries: list[str]) -> list[str]:
    return [entry for entry in entries if entry[:1] in ("!", "+", "-")]


def _is_pattern(entry: str) -> bool:
    return entry[:1] in ("!", "+", "-") or "*" in entry or "?" in entry


def _settings_entries(
    collected: _Collected, entries: list[str], base: str, scope: str, *, skills: bool
) -> None:
    """A settings array's plain paths (and globs), their files, each enabled by the array's patterns."""
    files: list[str] = []
    for entry in entries:
        if entry[:1] in ("!", "+", "-"):
            continue
        for path in _expand(entry, base):
            if os.path.isdir(path):
                files += skill_entries(path) if skills else _prompt_entries_recursive(path)
            elif os.path.isfile(path):
                files.append(path)
    patterns = [entry for entry in entries if _is_pattern(entry)]
    for path in files:
        collected.add(path, _metadata("local", scope, None), _matches_patterns(path, patterns, base))


def _prompt_entries_recursive(directory: str) -> list[str]:
    """A settings entry's folder: its ``.md`` files at any depth (pi collects them recursively)."""
    found: list[str] = []
    for current, dirs, names in os.walk(directory, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        found += [
            os.path.join(current, n) for n in sorted(names) if n.endswith(".md") and not n.startswith(".")
        ]
    return found


def _expand(entry: str, base: str) -> list[str]:
    if "*" not in entry and "?" not in entry:
        return [_resolve(entry, base)]
    import glob

    pattern = os.path.join(base, os.path.expanduser(entry))
    return sorted(
        path
        for path in glob.glob(pattern, recursive=True)
        if not any(part.startswith(".") for part in Path(os.path.relpath(path, base)).parts if part != "..")
    )


def _matches(path: str, pattern: str, base: str) -> bool:
    from tau.tools.glob_match import GlobError, compile_glob

    try:
        regex = compile_glob(pattern.removeprefix("./"), ignore_case=False)
    except GlobError:
        return False
    candidates = [os.path.relpath(path, base), os.path.basename(path), path]
    if os.path.basename(path) == "SKILL.md":
        parent = os.path.dirname(path)
        candidates += [os.path.relpath(parent, base), os.path.basename(parent), parent]
    return any(regex.match(candidate.replace(os.sep, "/")) for candidate in candidates)


def _matches_exact(path: str, pattern: str, base: str) -> bool:
    wanted = pattern.removeprefix("./")
    candidates = [os.path.relpath(path, base), path]
    if os.path.basename(path) == "SKILL.md":
        parent = os.path.dirname(path)
        candidates += [os.path.relpath(parent, base), parent]
    return wanted in candidates


def _enabled(path: str, overrides: list[str], base: str, enabled: bool = True) -> bool:
    """``enabled`` (an auto-discovered resource: true) under a settings array's ``!``, ``+`` and
    ``-`` entries: ``!`` globs exclude, ``+``/``-`` paths force."""
    if any(_matches(path, entry[1:], base) for entry in overrides if entry.startswith("!")):
        enabled = False
    if any(_matches_exact(path, entry[1:], base) for entry in overrides if entry.startswith("+")):
        enabled = True
    if any(_matches_exact(path, entry[1:], base) for entry in overrides if entry.startswith("-")):
        enabled = False
    return enabled


def _matches_patterns(path: str, patterns: list[str], base: str) -> bool:
    """A settings entry's file under the array's patterns: globs include, ``!`` excludes, ``+``/``-`` force."""
    includes = [p for p in patterns if p[:1] not in ("!", "+", "-")]
    return _enabled(path, patterns, base, not includes or any(_matches(path, p, base) for p in includes))


# -- the same rules for other resource arrays (the ``extensions`` setting) --------------------


def resolve_entry(raw: str, base: str) -> str:
    """A settings entry's path: ``~`` expanded, relative to ``base`` (the agent dir or ``.tau``)."""
    return _resolve(raw, base)


def is_pattern_entry(entry: str) -> bool:
    """Whether a settings entry is a pattern (``!``, ``+``, ``-``, or a glob), not a path."""
    return _is_pattern(entry)


def entry_matches(path: str, pattern: str, base: str, *, exact: bool = False) -> bool:
    """Whether ``pattern`` (without its ``!``/``+``/``-``) names ``path``: a glob against the path
    relative to ``base``, its name or the whole path; ``exact``: the relative or whole path itself."""
    return _matches_exact(path, pattern, base) if exact else _matches(path, pattern, base)


def enabled_by_overrides(path: str, entries: list[str], base: str) -> bool:
    """An auto-discovered resource under a settings array's ``!``, ``+`` and ``-`` entries."""
    return _enabled(path, _overrides(entries), base)


def enabled_by_patterns(path: str, entries: list[str], base: str) -> bool:
    """A file a settings entry named, under the array's patterns (globs include, ``!`` excludes,
    ``+``/``-`` force)."""
    return _matches_patterns(path, [entry for entry in entries if _is_pattern(entry)], base)


def extend_resources(
    resources: Resources, skill_paths: Sequence[str], prompt_paths: Sequence[str], *, cwd: str
) -> list[str]:
    """Add the skills and templates extensions name in ``resources_discover``, after the others (the
    first of a name still wins). Returns the warnings the new files gave."""
    found = Resources()
    if skill_paths:
        added, found.skill_diagnostics = load_skills([(path, None) for path in skill_paths], cwd=cwd)
        known = {_key(skill.file_path) for skill in resources.skills}
        by_name = {skill.name: skill for skill in resources.skills}
        for skill in added:
            if _key(skill.file_path) in known:
                continue
            winner = by_name.get(skill.name)
            if winner is None:
                resources.skills.append(skill)
                by_name[skill.name] = skill
                continue
            found.skill_diagnostics.append(
                Diagnostic(
                    "collision",
                    f'name "{skill.name}" collision',
                    skill.file_path,
                    {
                        "resourceType": "skill",
                        "name": skill.name,
                        "winnerPath": winner.file_path,
                        "loserPath": skill.file_path,
                    },
                )
            )
    if prompt_paths:
        from tau.agent.prompt_templates import dedupe_templates

        added_templates, diagnostics = load_prompt_templates([(path, None) for path in prompt_paths], cwd=cwd)
        resources.prompts, collisions = dedupe_templates([*resources.prompts, *added_templates], [])
        found.prompt_diagnostics = diagnostics + collisions
    resources.skill_diagnostics += found.skill_diagnostics
    resources.prompt_diagnostics += found.prompt_diagnostics
    return found.warnings()
