"""Prompt templates: Markdown files that become ``/name`` commands (pi 1.6 ``core/prompt-templates.ts``).

The file name (without ``.md``) is the command; frontmatter may give ``description`` (else the
first non-empty line, cut at 60 characters) and ``argument-hint``. ``/name args`` becomes the
template's body with the arguments substituted: ``$1``, ``$2``, ... one argument; ``$@`` and
``$ARGUMENTS`` all of them joined by spaces; ``${N:-default}``, ``${@:-default}`` and
``${ARGUMENTS:-default}`` with a default for a missing or empty value; ``${@:N}`` and ``${@:N:L}`` a
slice. Arguments are split like a shell's, but a quote opens only at the start of an argument and
an unclosed quote stays text.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any

from tau.agent.frontmatter import FrontmatterError, parse_frontmatter
from tau.agent.skills import Diagnostic, read_text, source_info_for
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len, js_trim
from tau.common.lazy_regex import lazy_pattern

__all__ = [
    "PromptTemplate",
    "dedupe_templates",
    "expand_prompt_template",
    "load_prompt_templates",
    "load_template_file",
    "parse_command_args",
    "substitute_args",
    "template_entries",
]


@dataclass
class PromptTemplate:
    """A loaded template (pi's ``PromptTemplate``)."""

    name: str
    description: str
    content: str
    file_path: str
    source_info: dict[str, Any] = field(default_factory=dict)
    argument_hint: str | None = None


# JavaScript's \s (Python's differs at the edges: \x1c-\x1f, \ufeff).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACE = lazy_pattern(f"[{_JS_SPACE}]")


def parse_command_args(text: str) -> list[str]:
    """The arguments of a command line, split as pi splits them (see the module docstring)."""
    args: list[str] = []
    current = ""
    has_token = False
    quote: str | None = None
    quote_start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\" and i + 1 < len(text) and text[i + 1] == quote:
                current += quote
                i += 1
            elif char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'" and not has_token:
            quote = char
            quote_start = i
            has_token = True
        elif _SPACE.match(char):
            if has_token:
                args.append(current)
                current = ""
                has_token = False
        else:
            current += char
            has_token = True
        if quote and i == len(text) - 1:
            # An unclosed quote is text: start the argument again after it.
            quote = None
            current = text[quote_start]
            i = quote_start
        i += 1
    if has_token:
        args.append(current)
    return args


_PLACEHOLDER = lazy_pattern(
    r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"
)


def substitute_args(content: str, args: Sequence[str]) -> str:
    """``content`` with its placeholders filled from ``args`` (values are never substituted again)."""
    all_args = " ".join(args)

    def fill(match: re.Match[str]) -> str:
        default_target, default, slice_start, slice_length, simple = match.groups()
        if default_target is not None:
            if default_target in ("@", "ARGUMENTS"):
                value = all_args
            else:
                index = int(default_target) - 1
                value = args[index] if 0 <= index < len(args) else ""
            return value or default
        if slice_start is not None:
            start = max(int(slice_start) - 1, 0)
            if slice_length is not None:
                return " ".join(args[start : start + int(slice_length)])
            return " ".join(args[start:])
        if simple in ("@", "ARGUMENTS"):
            return all_args
        index = int(simple) - 1
        return args[index] if 0 <= index < len(args) else ""

    return _PLACEHOLDER.sub(fill, content)


def load_template_file(
    path: str, metadata: dict[str, Any] | None
) -> tuple[PromptTemplate | None, list[Diagnostic]]:
    """One template file (``metadata``: where it was found, as for skills)."""
    try:
        content = read_text(path)
    except OSError as exc:
        return None, [Diagnostic("warning", f"{exc.strerror or exc}", path)]
    try:
        frontmatter, body = parse_frontmatter(content)
    except FrontmatterError as exc:
        return None, [Diagnostic("warning", str(exc), path)]
    fields = frontmatter if isinstance(frontmatter, dict) else {}
    name = os.path.basename(path).removesuffix(".md")
    declared = fields.get("description")
    description = declared if isinstance(declared, str) else ""
    if not description:
        first = next((line for line in body.split("\n") if js_trim(line)), None)
        if first is not None:
            description = _js_slice(first, 60) + ("..." if js_len(first) > 60 else "")
    hint = fields.get("argument-hint")
    template = PromptTemplate(
        name=name,
        description=description,
        content=body,
        file_path=path,
        source_info=source_info_for(path, metadata),
        argument_hint=hint if isinstance(hint, str) and hint else None,
    )
    return template, []


def _js_slice(text: str, units: int) -> str:
    """``text.slice(0, units)`` in UTF-16 code units (a pair cut in half keeps its high surrogate)."""
    if text.isascii():
        return text[:units]
    encoded = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return encoded.decode("utf-16-le", "surrogatepass")


def template_entries(directory: str) -> list[str]:
    """The ``.md`` files directly in ``directory`` (links followed), in name order."""
    try:
        names = sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return []
    found = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            is_file = stat.S_ISREG(os.stat(path).st_mode)
        except OSError:
            continue
        if is_file and name.endswith(".md"):
            found.append(path)
    return found


def load_prompt_templates(
    paths: Iterable[tuple[str, dict[str, Any] | None]], *, cwd: str
) -> tuple[list[PromptTemplate], list[Diagnostic]]:
    """Templates from ``(path, source metadata)`` pairs: a folder gives its direct ``.md`` files.

    A path that does not exist is skipped silently (pi's loader); :func:`dedupe_templates` keeps the
    first template of each name.
    """
    templates: list[PromptTemplate] = []
    diagnostics: list[Diagnostic] = []
    for raw, metadata in paths:
        path = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw.strip())))
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            files = template_entries(path)
            meta = metadata if metadata is not None else _explicit(path)
        elif stat.S_ISREG(mode) and path.endswith(".md"):
            files = [path]
            meta = metadata if metadata is not None else _explicit(os.path.dirname(path))
        else:
            continue
        for file in files:
            template, found = load_template_file(file, meta)
            diagnostics += found
            if template is not None:
                templates.append(template)
    return dedupe_templates(templates, diagnostics)


def _explicit(base_dir: str) -> dict[str, Any]:
    return {"source": "local", "scope": "temporary", "origin": "top-level", "baseDir": base_dir}


def dedupe_templates(
    templates: list[PromptTemplate], diagnostics: list[Diagnostic]
) -> tuple[list[PromptTemplate], list[Diagnostic]]:
    """The first template of each name; later ones are collision warnings."""
    seen: dict[str, PromptTemplate] = {}
    collisions = []
    for template in templates:
        existing = seen.get(template.name)
        if existing is None:
            seen[template.name] = template
            continue
        collisions.append(
            Diagnostic(
                "collision",
                f'name "/{template.name}" collision',
                template.file_path,
                {
                    "resourceType": "prompt",
                    "name": template.name,
                    "winnerPath": existing.file_path,
                    "loserPath": template.file_path,
                },
            )
        )
    return list(seen.values()), diagnostics + collisions


_COMMAND = lazy_pattern(f"/([^{_JS_SPACE}]+)(?:[{_JS_SPACE}]+([\\s\\S]*))?\\Z")


def expand_prompt_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """``/name args`` as the template ``name`` filled with ``args``; any other text unchanged."""
    if not text.startswith("/"):
        return text
    match = _COMMAND.match(text)
    if match is None:
        return text
    template = next((t for t in templates if t.name == match.group(1)), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))
