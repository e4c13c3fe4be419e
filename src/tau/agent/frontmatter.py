"""YAML frontmatter of skill and prompt-template files (pi 1.6 ``utils/frontmatter.ts``).

A file that starts with ``---`` and has a later line starting with ``---`` carries YAML between
them; the body is what follows, trimmed. YAML is read as pi's ``yaml`` package reads it (YAML
1.2's core schema): only ``true``/``false`` are booleans, dates and ``yes``/``no`` stay strings, and a
mapping may not repeat a key.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from tau.common.jsstr import js_trim

__all__ = ["FrontmatterError", "parse_frontmatter", "strip_frontmatter"]


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML; the message says where."""


def _extract(content: str) -> tuple[str | None, str]:
    normalized = content.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    return normalized[4:end], js_trim(normalized[end + 4 :])


@cache
def _loader() -> type:
    import yaml

    class CoreLoader(yaml.SafeLoader):
        """SafeLoader with YAML 1.2 core-schema scalars and unique keys."""

    resolvers = {
        key: [
            (tag, regexp)
            for tag, regexp in entries
            if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "timestamp")
        ]
        for key, entries in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    CoreLoader.yaml_implicit_resolvers = resolvers
    core = {
        "tag:yaml.org,2002:bool": (r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
        "tag:yaml.org,2002:int": (r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
        "tag:yaml.org,2002:float": (
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
            "-+0123456789.",
        ),
    }
    for tag, (pattern, first) in core.items():
        CoreLoader.add_implicit_resolver(tag, re.compile(pattern), list(first))

    def construct_bool(loader: Any, node: Any) -> bool:
        return loader.construct_scalar(node).lower() == "true"

    def construct_int(loader: Any, node: Any) -> int:
        text = loader.construct_scalar(node)
        if text.startswith("0o"):
            return int(text[2:], 8)
        return int(text, 16) if text.startswith("0x") else int(text)

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict:
        keys = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, list | dict) or key in keys:
                raise yaml.constructor.ConstructorError(
                    None, None, "Map keys must be unique", key_node.start_mark
                )
            keys.add(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    CoreLoader.add_constructor("tag:yaml.org,2002:bool", construct_bool)
    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    CoreLoader.add_constructor(
        "tag:yaml.org,2002:map", lambda loader, node: construct_mapping(loader, node, True)
    )
    return CoreLoader


def parse_frontmatter(content: str) -> tuple[Any, str]:
    """``(frontmatter, body)``; frontmatter is ``{}`` without a YAML block. Raises :class:`FrontmatterError`."""
    yaml_text, body = _extract(content)
    if not yaml_text:
        return {}, body
    import yaml

    try:
        parsed = yaml.load(yaml_text, Loader=_loader())
    except yaml.YAMLError as exc:
        raise FrontmatterError(str(exc)) from None
    return ({} if parsed is None else parsed), body


def strip_frontmatter(content: str) -> str:
    """The body of ``content`` (its frontmatter, if any, left out), trimmed."""
    return parse_frontmatter(content)[1]
