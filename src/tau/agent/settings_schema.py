"""The type of every host setting, checked once per file as it is read.

A value of the wrong type is left out of the effective settings (its default applies) and produces
one line naming the file, the key and what it must be:
``/home/me/.tau/agent/settings.json: retry.maxRetries must be a non-negative integer, got "x"; using
the default 3``. The file itself is never changed. Keys this table does not know are kept as they
are (extensions read their own keys); the bundled extensions check the inside of their blocks
(``todoLoop``, ``sol``) themselves. ``null`` is the same as leaving a known key out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.llm.registry import THINKING_LEVELS

__all__ = ["SCHEMA", "Expect", "check_settings"]

_MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True)
class Expect:
    """What a setting must be.

    Attributes:
        name: how messages name the expected type (``"a boolean"``).
        check: whether a value is acceptable.
        fields: for an object, its known keys (each checked in turn; other keys are kept).
        entries: for a map (``modelThinkingLevels``), what every value must be.
        is_object: whether the value is a block of settings (a wrong one means "the defaults").
    """

    name: str
    check: Callable[[Any], bool]
    fields: Mapping[str, Expect] = field(default_factory=dict)
    entries: Expect | None = None
    is_object: bool = False


def _integer(minimum: int) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= _MAX_SAFE_INTEGER
        )

    return check


def _one_of(*choices: str) -> Expect:
    quoted = [f'"{choice}"' for choice in choices]
    name = " or ".join(quoted) if len(quoted) == 2 else "one of " + ", ".join(quoted)
    return Expect(name, lambda value: isinstance(value, str) and value in choices)


def _object(fields: Mapping[str, Expect] | None = None, entries: Expect | None = None) -> Expect:
    return Expect("an object", lambda value: isinstance(value, dict), fields or {}, entries, True)


_STRING = Expect("a string", lambda value: isinstance(value, str))
_BOOLEAN = Expect("a boolean (true or false)", lambda value: isinstance(value, bool))
_COUNT = Expect("a non-negative integer", _integer(0))
_STRINGS = Expect(
    "a list of strings",
    lambda value: isinstance(value, list) and all(isinstance(item, str) for item in value),
)
_THINKING = _one_of(*THINKING_LEVELS)
_TIMEOUT = Expect(
    'a non-negative integer (milliseconds) or "disabled"',
    lambda value: _integer(0)(value) or (isinstance(value, str) and value.strip().lower() == "disabled"),
)
_QUEUE_MODE = _one_of("one-at-a-time", "all")
_TOKENS = {"reserveTokens": _COUNT, "keepRecentTokens": _COUNT}

SCHEMA: dict[str, Expect] = {
    "defaultProvider": _STRING,
    "defaultModel": _STRING,
    "defaultThinkingLevel": _THINKING,
    "enabledModels": _STRINGS,
    "modelThinkingLevels": _object(entries=_THINKING),
    "steeringMode": _QUEUE_MODE,
    "followUpMode": _QUEUE_MODE,
    "defaultTools": _STRINGS,
    "sessionDir": _STRING,
    "compaction": _object(
        {
            "enabled": _BOOLEAN,
            "cacheFriendly": _BOOLEAN,
            **_TOKENS,
            "modelOverrides": _object(entries=_object(_TOKENS)),
        }
    ),
    "branchSummary": _object({"reserveTokens": _COUNT, "skipPrompt": _BOOLEAN}),
    "retry": _object(
        {
            "enabled": _BOOLEAN,
            "maxRetries": _COUNT,
            "baseDelayMs": _COUNT,
            "maxAgentDelayMs": _COUNT,
            "honorRetryAfter": _BOOLEAN,
            "provider": _object({"maxRetries": _COUNT, "maxRetryDelayMs": _COUNT}),
        }
    ),
    "images": _object({"autoResize": _BOOLEAN, "blockImages": _BOOLEAN}),
    "hideThinkingBlock": _BOOLEAN,
    "quietStartup": Expect(
        'true, false or "header"', lambda value: isinstance(value, bool) or value == "header"
    ),
    "httpIdleTimeoutMs": _TIMEOUT,
    "shellPath": _STRING,
    "shellCommandPrefix": _STRING,
    "defaultProjectTrust": _one_of("ask", "always", "never"),
    "extensions": _STRINGS,
    "disabledExtensions": _STRINGS,
    "skills": _STRINGS,
    "prompts": _STRINGS,
    "theme": _STRING,
    "themes": _STRINGS,
    "enableSkillCommands": _BOOLEAN,
    "todoLoop": _object(),
    "sol": _object(),
    "codemode": _object(
        {
            "mode": _one_of("on", "only"),
            "inlineBudget": Expect(
                "a non-negative number",
                lambda value: isinstance(value, int | float) and not isinstance(value, bool) and value >= 0,
            ),
            "timeoutMs": Expect("a positive integer", _integer(1)),
        }
    ),
}


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _fallback(default: Any, expect: Expect) -> str:
    if isinstance(default, dict) or expect.is_object:
        return "using the defaults"
    if default is None:
        return "ignored"
    return f"using the default {_shown(default)}"


def check_settings(
    data: dict[str, Any], source: str, defaults: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """``data`` without its wrong-typed values, and one message per value left out.

    Args:
        data: one settings file's JSON object (not changed).
        source: the file's path, named in the messages.
        defaults: the built-in defaults (named in the messages).
    """
    problems: list[str] = []
    return _checked_object(data, SCHEMA, "", source, defaults, problems), problems


def _checked_object(
    data: dict[str, Any],
    fields: Mapping[str, Expect],
    prefix: str,
    source: str,
    defaults: Mapping[str, Any],
    problems: list[str],
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in data.items():
        expect = fields.get(key)
        if expect is None:
            kept[key] = value
            continue
        if value is None:
            continue  # null: as if the key were absent
        default = defaults.get(key) if isinstance(defaults, Mapping) else None
        checked = _checked(value, expect, prefix + key, source, default, problems)
        if checked is not _WRONG:
            kept[key] = checked
    return kept


_WRONG = object()


def _checked(value: Any, expect: Expect, dotted: str, source: str, default: Any, problems: list[str]) -> Any:
    if not expect.check(value):
        problems.append(
            f"{source}: {dotted} must be {expect.name}, got {_shown(value)}; {_fallback(default, expect)}"
        )
        return _WRONG
    if expect.entries is not None:
        entries = {}
        for key, entry in value.items():
            if entry is None:
                continue
            checked = _checked(entry, expect.entries, f'{dotted}["{key}"]', source, None, problems)
            if checked is not _WRONG:
                entries[key] = checked
        return entries
    if expect.fields:
        inner = default if isinstance(default, Mapping) else {}
        return _checked_object(value, expect.fields, dotted + ".", source, inner, problems)
    return value
