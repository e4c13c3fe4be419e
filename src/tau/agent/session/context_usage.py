"""How full the context is (pi's ``getContextUsage``), and the facts about the latest compaction it needs.

After a compaction the context's size is unknown until a response reports its usage: the tokens
and percent are ``None`` until an assistant message after the compaction has usage.
"""

from __future__ import annotations

from typing import Any

from tau.common.jsstr import ms_from_iso
from tau.llm.types import Model

__all__ = ["context_usage", "entry_ms", "latest_compaction"]


def _estimate() -> Any:
    # tau.agent.compaction loads every compaction module: only import it once it is needed.
    from tau.agent.compaction import estimate

    return estimate


def latest_compaction(projection: dict[str, Any]) -> dict[str, Any] | None:
    """The branch's latest compaction: a projection starts with it when the branch has one."""
    entries = projection["entries"]
    source = entries[0]["sourceEntry"] if entries else None
    return source if source is not None and source.get("type") == "compaction" else None


def entry_ms(entry: dict[str, Any]) -> int:
    """An entry's timestamp in milliseconds (0 when it has none that parses)."""
    try:
        return ms_from_iso(entry.get("timestamp") or "")
    except ValueError:
        return 0


def _is_usable(message: dict[str, Any]) -> bool:
    return (
        message.get("role") == "assistant"
        and message.get("stopReason") not in ("aborted", "error")
        and _estimate().calculate_context_tokens(message.get("usage") or {}) > 0
    )


def _usage_after(projection: dict[str, Any], branch: list[dict[str, Any]], latest: dict[str, Any]) -> bool:
    """Whether an entry after ``latest`` on the branch projects a usable assistant message.

    The entries after the compaction are the projection's last items, in branch order: both are
    walked back from the leaf until the compaction, so the cost is what came after it.
    """
    items = projection["entries"]
    offset = len(items)
    for entry in reversed(branch):
        if entry is latest or entry.get("id") == latest.get("id"):
            return False
        offset -= 1
        if offset < 0 or items[offset]["sourceEntry"] is not entry:
            break  # not the layout a projection of this branch has: check the whole projection
        if any(_is_usable(m) for m in items[offset]["messages"]):
            return True
    else:
        return False
    usable = {item["sourceEntry"].get("id") for item in items if any(_is_usable(m) for m in item["messages"])}
    position = next(
        i for i, entry in enumerate(branch) if entry is latest or entry.get("id") == latest.get("id")
    )
    return any(entry.get("id") in usable for entry in branch[position + 1 :])


def context_usage(
    model: Model | None, projection: dict[str, Any], branch: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """``{tokens, contextWindow, percent}`` of ``projection`` (``None`` values right after a compaction)."""
    if model is None or model.context_window <= 0:
        return None
    window = model.context_window
    latest = latest_compaction(projection)
    if latest is not None and not _usage_after(projection, branch, latest):
        return {"tokens": None, "contextWindow": window, "percent": None}
    tokens = _estimate().estimate_projected_context_tokens(projection, branch)["tokens"]
    return {"tokens": tokens, "contextWindow": window, "percent": tokens / window * 100}
