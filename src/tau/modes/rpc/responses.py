"""The ``response`` records of the RPC protocol (pi 1.6 ``rpc-types.ts``, ``RpcResponse``).

pi builds ``{id, type: "response", command, success, data}`` and lets ``JSON.stringify`` drop the
fields that are ``undefined``: a command sent without ``id`` gets a response without ``id`` (an
explicit ``"id": null`` is echoed), and a command without data gets no ``data`` key. ``MISSING``
stands for ``undefined`` here; ``None`` is JSON ``null``.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MISSING", "error", "parse_error", "success", "unknown_command", "unsupported"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()


def _head(request_id: Any, command: Any) -> dict[str, Any]:
    head: dict[str, Any] = {}
    if request_id is not MISSING:
        head["id"] = request_id
    head["type"] = "response"
    if command is not MISSING:
        head["command"] = command
    return head


def success(request_id: Any, command: str, data: Any = MISSING) -> dict[str, Any]:
    """``{id?, type: "response", command, success: true, data?}`` (``data=None`` is written as null)."""
    response = _head(request_id, command)
    response["success"] = True
    if data is not MISSING:
        response["data"] = data
    return response


def error(request_id: Any, command: Any, message: str) -> dict[str, Any]:
    """``{id?, type: "response", command, success: false, error}``."""
    response = _head(request_id, command)
    response["success"] = False
    response["error"] = message
    return response


def parse_error(reason: str) -> dict[str, Any]:
    """A line that is not JSON: no id (there is none to echo), ``command: "parse"``."""
    return error(MISSING, "parse", f"Failed to parse command: {reason}")


def unknown_command(request_id: Any, command: Any) -> dict[str, Any]:
    """``Unknown command: <type>`` (a missing type reads ``undefined``, as in pi)."""
    name = "undefined" if command is MISSING else command
    return error(request_id, command, f"Unknown command: {name}")


def unsupported(request_id: Any, command: str) -> dict[str, Any]:
    """A pi command outside tau's scope (decisions.md, "Scope")."""
    return error(request_id, command, f"not supported by tau: {command}")
