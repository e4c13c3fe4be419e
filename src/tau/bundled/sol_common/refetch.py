"""Refetches: tool calls that fetch again what the model had already been given (issue 25).

When the context economy hides something the model still needs (a packed result, a compacted
turn), a model gets it back in one of three ways: it calls ``obs_recall``, it reads the same file
again, or it runs the same command again. The last two are only refetches when nothing could have
changed the answer since: a ``read`` with the same arguments and no ``edit``/``write`` of that path
in between, a ``bash`` command with the same text and no ``edit``/``write`` at all in between (a
test run after a fix is new work, not a refetch). Other ``bash`` commands are taken to read, not to
change, the workspace: a model that re-runs ``grep`` after ``sed -i`` is counted as refetching.

:class:`CallHistory` follows the calls of a session in order; ObservationPack widens its window on
a refetch of a result it packed, and Online Context Compact keeps refetch requests out of its
request horizon and charges refetches of compacted content to its next decision. Both replay the
same rules in ``tau savings``.
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from tau.bundled.obspack.wire import RECALL_TOOL
from tau.common.dataclass import dataclass
from tau.extension import tool_calls

__all__ = ["RECALL_TOOL", "CallHistory", "call_identity", "named_calls"]

_MUTATIONS = ("edit", "write")


def _path(arguments: dict[str, Any]) -> str | None:
    path = arguments.get("path") if isinstance(arguments.get("path"), str) else arguments.get("file_path")
    return path if isinstance(path, str) and path else None


def call_identity(name: str, arguments: Any) -> str | None:
    """What makes two ``read`` or ``bash`` calls the same fetch (``None`` for any other call)."""
    if not isinstance(arguments, dict):
        return None
    if name == "bash" and isinstance(arguments.get("command"), str):
        return "bash\0" + arguments["command"]
    if name == "read" and (path := _path(arguments)) is not None:
        window = {key: arguments.get(key) for key in ("offset", "limit") if arguments.get(key) is not None}
        return "read\0" + path + "\0" + (json.dumps(window, sort_keys=True) if window else "{}")
    return None


def named_calls(message: Any) -> list[tuple[str, Any]]:
    """``(name, arguments)`` of an assistant message's tool calls, in order."""
    return [(str(call.get("name")), call.get("arguments")) for call in tool_calls(message)]


@dataclass
class CallHistory:
    """The session's calls so far: which fetches were made, and what has changed since.

    ``epoch`` is the caller's count of compactions: :meth:`previous_epoch` tells whether the earlier
    identical fetch was made before the latest one (its output compacted away).
    """

    epoch: int = 0
    _fetches: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # identity → (changes, path changes, epoch)
    _changes: int = 0  # edit/write calls so far
    _path_changes: dict[str, int] = field(default_factory=dict)

    def _state(self, name: str, arguments: Any) -> tuple[int, int]:
        path = _path(arguments) if name == "read" and isinstance(arguments, dict) else None
        return self._changes, self._path_changes.get(path, 0) if path is not None else 0

    def is_refetch(self, name: str, arguments: Any) -> bool:
        """Whether this call fetches again what an identical earlier call returned (not recorded)."""
        if name == RECALL_TOOL:
            return True
        identity = call_identity(name, arguments)
        earlier = self._fetches.get(identity) if identity is not None else None
        if earlier is None:
            return False
        changes, path_changes = self._state(name, arguments)
        return path_changes == earlier[1] if name == "read" else changes == earlier[0]

    def previous_epoch(self, name: str, arguments: Any) -> int | None:
        """The epoch of the earlier identical fetch, if any."""
        identity = call_identity(name, arguments)
        earlier = self._fetches.get(identity) if identity is not None else None
        return earlier[2] if earlier is not None else None

    def record(self, name: str, arguments: Any) -> None:
        """Note a call (after :meth:`is_refetch` was asked about it)."""
        if name in _MUTATIONS:
            self._changes += 1
            path = _path(arguments) if isinstance(arguments, dict) else None
            if path is not None:
                self._path_changes[path] = self._path_changes.get(path, 0) + 1
            return
        identity = call_identity(name, arguments)
        if identity is not None:
            self._fetches[identity] = (*self._state(name, arguments), self.epoch)
