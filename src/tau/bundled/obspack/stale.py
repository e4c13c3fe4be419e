"""What makes context stale: tool results a later call superseded, and results and edit arguments
the model has not used for a window of assistant turns (issues 14 and 25, "stale-context packing").

A result has *keys*, what it is an output of: a ``bash`` command and a fused ``then_run`` command
share ``("command", c)``; a ``read`` has ``("read", path)``, whatever its range (a model paging
through a file, or reading it again, works from the newest read). A later call with one of a
result's keys supersedes it: the same command run again, the same file read again. An ``edit`` or
``write`` supersedes nothing but a ``then_run`` command's earlier output: the model still works from
what it read before editing (issue 25: packing a read after each edit made the next edit's
``oldText`` a refetch). The newest output of a key is never superseded.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.obspack.wire import RECALL_TOOL
from tau.bundled.occ.wire import PLAN_TOOL
from tau.common.dataclass import dataclass

__all__ = ["KEPT_TOOLS", "MUTATIONS", "Key", "Seen", "argument_chars", "call_keys", "message_tokens", "tokens_of"]

Key = tuple[str, str]
MUTATIONS = ("edit", "write")
# Results stale packing leaves alone: the checklist (todo decides how it reaches the model), a page
# the model recalled on purpose, and the plan and loop tools' answers.
KEPT_TOOLS = frozenset(("todo", RECALL_TOOL, "todo_loop_block", PLAN_TOOL))


def _path(arguments: dict[str, Any]) -> str | None:
    path = arguments.get("path") if isinstance(arguments.get("path"), str) else arguments.get("file_path")
    return path if isinstance(path, str) and path else None


def call_keys(name: str, arguments: Any) -> tuple[Key, ...]:
    """What a call's result is an output of."""
    # (one branch per name: a resumed context's every call is keyed on its first request)
    if not isinstance(arguments, dict):
        return ()
    if name == "bash":
        command = arguments.get("command")
        return (("command", command),) if isinstance(command, str) else ()
    if name == "read":
        path = _path(arguments)
        return (("read", path),) if path is not None else ()
    then_run = arguments.get("then_run") if name in MUTATIONS else None
    if isinstance(then_run, dict) and isinstance(then_run.get("command"), str):
        return (("command", then_run["command"]),)
    return ()


def argument_chars(arguments: Any) -> int:
    """The characters :func:`message_tokens` counts for a tool call's arguments."""
    if isinstance(arguments, dict):
        # (a loop, string keys and values measured in place: every call of a context is sized)
        total = 0
        for k, v in arguments.items():
            total += len(k if k.__class__ is str else str(k)) + 4
            total += len(v) if v.__class__ is str else argument_chars(v)
        return total
    if isinstance(arguments, list):
        return sum(argument_chars(item) + 1 for item in arguments)
    return len(arguments) if isinstance(arguments, str) else 8


def message_tokens(message: dict[str, Any]) -> int:
    """A cheap estimate of what a message adds to a request (characters / 4): the characters of
    its text, or of its blocks' ``text`` and ``thinking`` and of its tool calls (64 each and their
    arguments), and of its ``summary``."""
    # (one function, each block's keys read once: every message of a context is sized)
    content = message.get("content")
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            get = block.get
            text = get("text")
            if isinstance(text, str):
                chars += len(text)
            text = get("thinking")
            if isinstance(text, str):
                chars += len(text)
            if get("type") == "toolCall":
                chars += 64 + argument_chars(get("arguments"))
    elif isinstance(content, str):
        chars = len(content)
    return tokens_of(chars, message)


def tokens_of(chars: int, message: dict[str, Any]) -> int:
    """:func:`message_tokens` of a message whose content has ``chars`` characters (its summary added)."""
    summary = message.get("summary")
    if summary:
        chars += len(summary if summary.__class__ is str else str(summary))
    return chars // 4 + 4


@dataclass
class Seen:
    """One tool call of the context: when it was made and what it is an output of."""

    name: str
    arguments: Any
    turn: int  # the number of assistant messages before the one holding the call
    keys: tuple[Key, ...]
