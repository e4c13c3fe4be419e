"""``store()``/``load()`` across scripts: ``codemode-store`` custom entries on the session branch.

Each successful script that wrote values appends one entry ``{"set": {key: value}, "delete": [keys]}``;
``load()`` sees the entries on the current branch applied from the root, so a resumed session keeps
its values and each branch sees only those written on its own path (pi's format: sessions resume in
either program).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard

__all__ = ["STORE_ENTRY_TYPE", "read_store"]

STORE_ENTRY_TYPE = "codemode-store"


def _is_store_data(data: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(data, dict)
        and isinstance(data.get("set"), dict)
        and isinstance(data.get("delete"), list)
        and all(isinstance(key, str) for key in data["delete"])
    )


def read_store(branch: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The values ``load()`` sees: the branch's ``codemode-store`` entries, oldest first."""
    store: dict[str, Any] = {}
    for entry in branch:
        if entry.get("type") != "custom" or entry.get("customType") != STORE_ENTRY_TYPE:
            continue
        data = entry.get("data")
        if not _is_store_data(data):
            continue
        for key in data["delete"]:
            store.pop(key, None)
        for key, value in data["set"].items():
            store[key] = value  # a key set again keeps its place, as in a JavaScript Map
    return store
