"""Skills (the Agent Skills specification, as pi 1.6 ``core/skills.ts`` implements it).

A skill is a ``SKILL.md`` (or, at the top of a skills folder, any ``.md``) with frontmatter ``name``
and ``description``. The system prompt lists each skill's name, description and file, never its
body; ``/skill:name args`` loads the body into the prompt. Invalid fields are warnings: a bad name
still loads, a missing description does not, and of two skills with one name the first found wins.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any, Literal

from tau.agent.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len, js_trim
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "Diagnostic",
    "Skill",
    "expand_skill_command",
    "format_skills_for_prompt",
    "load_skill_file",
    "load_skills",
    "skill_entries",
]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
_NAME = lazy_pattern(r"^[a-z0-9-]+$")


@dataclass
class Diagnostic:
    """A problem found while loading skills or templates (pi's ``ResourceDiagnostic``)."""

    type: Literal["warning", "error", "collision"]
    message: str
    path: str | None = None
    collision: dict[str, str] | None = None

    def text(self) -> str:
        """One line for a terminal or stderr: ``<path>: <message>`` (a collision names both files)."""
        if self.collision is not None:
            return (
                f"{self.collision['resourceType']} {self.message}: {self.collision['loserPath']} skipped, "
                f"{self.collision['winnerPath']} kept"
            )
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass
class Skill:
    """A loaded skill (pi's ``Skill``)."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source_info: dict[str, Any] = field(default_factory=dict)
    disable_model_invocation: bool = False

    def to_json(self) -> dict[str, Any]:
        """pi's shape, as ``before_agent_start`` handlers see it in ``systemPromptOptions.skills``."""
        return {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "sourceInfo": dict(self.source_info),
            "disableModelInvocation": self.disable_model_invocation,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Skill | None:
        """A skill an extension handed back (``None`` when it lacks a name, description or file)."""
        name, description, path = data.get("name"), data.get("description"), data.get("filePath")
        if not (isinstance(name, str) and isinstance(description, str) and isinstance(path, str)):
            return None
        base = data.get("baseDir")
        return cls(
            name,
            description,
            path,
            base if isinstance(base, str) else os.path.dirname(path),
            dict(data.get("sourceInfo") or {}),
            data.get("disableModelInvocation") is True,
        )


def _name_errors(name: str) -> list[str]:
    errors = []
    if js_len(name) > MAX_NAME_LENGTH:
        errors.append(f"name exceeds {MAX_NAME_LENGTH} characters ({js_len(name)})")
    if not _NAME.match(name):
        errors.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("name must not start or end with a hyphen")
    if "--" in name:
        errors.append("name must not contain consecutive hyphens")
    return errors


def _description_errors(description: Any) -> list[str]:
    if not isinstance(description, str) or js_trim(description) == "":
        return ["description is required"]
    if js_len(description) > MAX_DESCRIPTION_LENGTH:
        return [f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({js_len(description)})"]
    return []


def read_text(path: str) -> str:
    """A file as Node's ``readFileSync(path, "utf-8")`` gives it (invalid bytes become U+FFFD)."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def load_skill_file(
    path: str, source_info: dict[str, Any] | None = None
) -> tuple[Skill | None, list[Diagnostic]]:
    """One skill file: the skill (``None`` when it does not load) and its warnings.

    ``source_info`` says where it came from (pi's ``sourceInfo`` without ``path``); ``None``: an
    explicit path (``--skill``), pi's ``{"source": "local", "scope": "temporary", ...}``.
    """
    declared = os.path.basename(path) == "SKILL.md"
    try:
        content = read_text(path)
    except OSError as exc:
        return None, [Diagnostic("warning", _os_message(exc), path)]
    try:
        frontmatter, _ = parse_frontmatter(content)
    except FrontmatterError as exc:
        return None, ([Diagnostic("warning", str(exc), path)] if declared else [])
    fields = frontmatter if isinstance(frontmatter, dict) else {}
    description = fields.get("description")
    has_description = isinstance(description, str) and js_trim(description) != ""
    if not declared and not has_description:
        return None, []  # a plain Markdown file beside the skills, not a skill
    directory = os.path.dirname(path)
    diagnostics = [Diagnostic("warning", error, path) for error in _description_errors(description)]
    declared_name = fields.get("name")
    name = declared_name if isinstance(declared_name, str) and declared_name else os.path.basename(directory)
    diagnostics += [Diagnostic("warning", error, path) for error in _name_errors(name)]
    if not has_description or not isinstance(description, str):  # (the second, for the type checker)
        return None, diagnostics
    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=directory,
        source_info=source_info_for(path, source_info),
        disable_model_invocation=fields.get("disable-model-invocation") is True,
    )
    return skill, diagnostics


def source_info_for(path: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """pi's ``sourceInfo`` of a resource file: its path, then where it was found."""
    if metadata is None:
        metadata = {
            "source": "local",
            "scope": "temporary",
            "origin": "top-level",
            "baseDir": os.path.dirname(path),
        }
    return {"path": path, **metadata}


def _os_message(exc: OSError) -> str:
    from tau.tools.fserrors import fs_error

    return str(fs_error(exc, "open", exc.filename))


# -- finding skill files ------------------------------------------------------------------------


def _kind(path: str) -> tuple[bool, bool] | None:
    """``(is_dir, is_file)`` following links; ``None`` for a broken link or a vanished entry."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return stat.S_ISDIR(mode), stat.S_ISREG(mode)


def skill_entries(root: str, *, agents_layout: bool = False) -> list[str]:
    """The skill files under ``root``, as pi discovers them in a skills folder.

    A folder holding ``SKILL.md`` is one skill (nothing under it is searched); otherwise its
    subfolders are searched. ``.md`` files count at the top of a ``skills`` folder, or below the top
    of an ``.agents/skills`` folder (``agents_layout``). Names starting with ``.`` and
    ``node_modules`` are skipped, and so is what the folders' ``.gitignore``, ``.ignore`` and
    ``.fdignore`` files name.
    """
    from tau.tools.ignore_rules import IgnoreStack

    found: list[str] = []
    if not os.path.isdir(root):
        return found

    def visit(directory: str, ignores: IgnoreStack) -> None:
        ignores = ignores.with_directory(directory)
        try:
            names = sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape"))
        except OSError:
            return
        if "SKILL.md" in names:
            path = os.path.join(directory, "SKILL.md")
            kind = _kind(path)
            if kind is not None and kind[1] and not ignores.ignored(path, False):
                found.append(path)
                return
        for name in names:
            if name.startswith(".") or name == "node_modules":
                continue
            path = os.path.join(directory, name)
            kind = _kind(path)
            if kind is None:
                continue
            is_dir, is_file = kind
            top = directory == root
            if (
                is_file
                and name.endswith(".md")
                and (top != agents_layout)
                and not ignores.ignored(path, False)
            ):
                found.append(path)
                continue
            if is_dir and not ignores.ignored(path, True):
                visit(path, ignores)

    visit(root, IgnoreStack(root))
    return found


# -- loading from paths -------------------------------------------------------------------------


def load_skills(
    paths: Iterable[tuple[str, dict[str, Any] | None]], *, cwd: str
) -> tuple[list[Skill], list[Diagnostic]]:
    """Skills from ``(path, source metadata)`` pairs, in order: folders are searched, ``.md`` files loaded.

    The first skill of a name wins; a later one is a collision warning. The same file reached twice
    (through a link) loads once.
    """
    by_name: dict[str, Skill] = {}
    real_paths: set[str] = set()
    diagnostics: list[Diagnostic] = []
    collisions: list[Diagnostic] = []

    def add(skill: Skill) -> None:
        real = os.path.realpath(skill.file_path)
        if real in real_paths:
            return
        existing = by_name.get(skill.name)
        if existing is not None:
            collisions.append(
                Diagnostic(
                    "collision",
                    f'name "{skill.name}" collision',
                    skill.file_path,
                    {
                        "resourceType": "skill",
                        "name": skill.name,
                        "winnerPath": existing.file_path,
                        "loserPath": skill.file_path,
                    },
                )
            )
            return
        by_name[skill.name] = skill
        real_paths.add(real)

    for raw, source_info in paths:
        path = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw.strip())))
        kind = _kind(path)
        if kind is None:
            diagnostics.append(Diagnostic("warning", "skill path does not exist", path))
            continue
        is_dir, is_file = kind
        files = skill_entries(path) if is_dir else [path] if is_file and path.endswith(".md") else None
        if files is None:
            diagnostics.append(Diagnostic("warning", "skill path is not a markdown file", path))
            continue
        for file in files:
            skill, found = load_skill_file(file, source_info)
            diagnostics += found
            if skill is not None:
                add(skill)
    return list(by_name.values()), diagnostics + collisions


# -- the prompt and the command -----------------------------------------------------------------


def _escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills_for_prompt(skills: Sequence[Skill], reader: str = "read") -> str:
    """The ``skills`` section's text: each model-invocable skill's name, description and file.

    ``reader`` is the tool that loads a skill file (``read``, ``bash``) or ``indirect`` when only a
    tool reached through another can.
    """
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    how = {
        "read": "Use the read tool to load a skill's file when the task matches its description.",
        "bash": "Use bash to load a skill's file when the task matches its description.",
    }.get(reader, "Load a skill's file when the task matches its description.")
    lines = [
        "The following skills provide specialized instructions for specific tasks.",
        how,
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_escape_xml(skill.name)}</name>",
            f"    <description>{_escape_xml(skill.description)}</description>",
            f"    <location>{_escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str:
    """``/skill:name args`` as the skill's body in a ``<skill>`` block, the arguments after it.

    Anything else, or an unknown skill, comes back unchanged. Raises ``OSError`` or
    :class:`~tau.agent.frontmatter.FrontmatterError` when the skill file cannot be read.
    """
    if not text.startswith("/skill:"):
        return text
    space = text.find(" ")
    name = text[7:] if space == -1 else text[7:space]
    args = "" if space == -1 else js_trim(text[space + 1 :])
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    body = js_trim(strip_frontmatter(read_text(skill.file_path)))
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args else block
