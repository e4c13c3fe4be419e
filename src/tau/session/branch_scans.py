"""Reading a branch's entries by type at C level: a run looks up a few kinds of entries in a branch
as long as the session (tens of thousands at resume), and a Python loop over every entry costs more
than the rest of the lookup. Each function gives what the straightforward loop in its docstring
gives, and falls back on that loop when an entry (or a message) is not a dict."""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import Any

from tau.common.positions import positions

__all__ = ["last_of_type", "messages_with_role"]

Entry = dict[str, Any]


def last_of_type(branch: list[Entry], kind: str) -> Entry | None:
    """``next((e for e in reversed(branch) if e.get("type") == kind), None)``."""
    try:
        kinds = list(map(dict.get, branch, repeat("type")))
    except TypeError:  # an entry that is not a dict
        return next((entry for entry in reversed(branch) if entry.get("type") == kind), None)
    kinds.reverse()
    try:
        return branch[len(branch) - 1 - kinds.index(kind)]
    except ValueError:
        return None


def messages_with_role(branch: list[Entry], role: str) -> list[Any]:
    """``[e["message"] for e in branch if e.get("type") == "message" and (e.get("message") or {}).get("role") == role]``."""
    try:
        picked = list(
            compress(branch, map(operator.eq, map(dict.get, branch, repeat("type")), repeat("message")))
        )
        messages: list[Any] = list(map(dict.get, picked, repeat("message")))
        roles = list(map(dict.get, messages, repeat("role")))
        return [messages[index] for index in positions(roles, role)]
    except TypeError:  # an entry or a message that is not a dict
        return [
            entry["message"]
            for entry in branch
            if entry.get("type") == "message" and (entry.get("message") or {}).get("role") == role
        ]

