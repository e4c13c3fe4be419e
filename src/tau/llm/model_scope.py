"""Model scopes: the models ``--models`` (or the setting ``enabledModels``) names, as pi 1.6 resolves them.

A scope is a list of patterns. A pattern with ``*``, ``?`` or ``[`` is a glob over ``provider/id`` and
over the bare id (``anthropic/*``, ``*sonnet*``; ``*`` does not cross a ``/``, ``**`` does, as in
minimatch); any other
pattern is resolved as ``--model`` resolves one (exact id, ``provider/id``, then a part of ids and
names). A ``:<level>`` suffix gives the scoped model its thinking level; an unknown level is warned
about and dropped. Only models with credentials are in a scope. The scope picks a new session's model
when ``--model`` is not given, and is what Ctrl+P cycles through (RPC ``cycle_model``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tau.common.dataclass import dataclass
from tau.llm.types import Model

__all__ = ["ScopedModel", "next_cycle_index", "resolve_scope"]


@dataclass(frozen=True)
class ScopedModel:
    """A model of the scope and the thinking level its pattern gave (``None``: the session's)."""

    model: Model
    thinking_level: str | None = None


def _glob(pattern: str) -> re.Pattern[str]:
    """minimatch's meaning of ``pattern`` (case-insensitive): ``*`` and ``?`` stay inside one ``/`` part."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            start = i
            while i + 1 < len(pattern) and pattern[i + 1] == "*":
                i += 1
            whole_part = (start == 0 or pattern[start - 1] == "/") and pattern[i + 1 : i + 2] in ("", "/")
            # a "**" part is minimatch's globstar: any number of parts
            out.append(".*" if i > start and whole_part else "[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE)


def resolve_scope(patterns: Sequence[str], models: Sequence[Model]) -> tuple[list[ScopedModel], list[str]]:
    """The scoped models of ``patterns`` among ``models`` (those with credentials), and the warnings."""
    from tau.llm.registry import THINKING_LEVELS, ModelChoice, _resolve_text, _split_thinking

    scoped: list[ScopedModel] = []
    warnings: list[str] = []

    def add(model: Model, level: str | None) -> None:
        if not any((s.model.provider, s.model.id) == (model.provider, model.id) for s in scoped):
            scoped.append(ScopedModel(model, level))

    def ambiguous(pattern: str, candidates: Sequence[Model]) -> None:
        providers = ", ".join(sorted({m.provider for m in candidates}))
        warnings.append(
            f'Pattern "{pattern}" matches several providers: {providers}. Use provider/id to choose one.'
        )

    def usable(provider: str) -> bool:
        return True

    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if any(char in pattern for char in "*?["):
            split = _split_thinking(pattern)
            base, level = split if split else (pattern, None)
            exact = _exact(base, models)
            if exact:
                matches = exact
                if len({m.provider for m in exact}) > 1:
                    ambiguous(pattern, exact)
            else:
                glob = _glob(base)
                matches = [m for m in models if glob.match(f"{m.provider}/{m.id}") or glob.match(m.id)]
            if not matches:
                warnings.append(f'No models match pattern "{pattern}"')
            for model in matches:
                add(model, level)
            continue
        found = _resolve_text(pattern, models, usable)
        level_warning = None
        if found is None:
            # pi's lenient suffix: an unknown level is dropped with a warning, the model still resolves
            base, colon, suffix = pattern.rpartition(":")
            if colon and base and suffix not in THINKING_LEVELS:
                inner = _resolve_text(base, models, usable)
                if inner is not None:
                    found = inner
                    level_warning = (
                        f'Invalid thinking level "{suffix}" in pattern "{pattern}". Using default instead.'
                    )
        if found is None:
            warnings.append(f'No models match pattern "{pattern}"')
            continue
        if level_warning:
            warnings.append(level_warning)
        if isinstance(found, ModelChoice):
            add(found.model, None if level_warning else found.thinking_level)
        else:
            ambiguous(pattern, found)
            for model in found:
                add(model, None)
    return scoped, warnings


def _exact(text: str, models: Sequence[Model]) -> list[Model]:
    """Ids such as ``bracketed-model[1m]`` are not globs: an exact ``provider/id`` or id first."""
    lower = text.lower()
    named = [m for m in models if f"{m.provider}/{m.id}".lower() == lower]
    return named or [m for m in models if m.id.lower() == lower]


def next_cycle_index(current: int, length: int, direction: str) -> int | None:
    """pi's cycling: from nowhere to the first (or last); one model has nowhere to go."""
    if length == 0:
        return None
    if current == -1:
        return 0 if direction == "forward" else length - 1
    if length == 1:
        return None
    return (current + 1) % length if direction == "forward" else (current - 1) % length
