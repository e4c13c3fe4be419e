"""Comparing a tau event stream with a pi golden "in the sense decisions.md gives".

Ignored: ids (session, entry, tool-call), timestamps, durations, usage and cost figures, the cwd and
absolute paths, the text of system-prompt sections (their names are compared), and how streamed text
is chunked (runs of ``message_update`` / ``tool_execution_update`` are compared by their content).
"""

from __future__ import annotations

import json
import re
from typing import Any

VOLATILE_KEYS = {
    "timestamp",
    "durationMs",
    "usage",
    "id",
    "cwd",
    "wall_time_seconds",
    "tokensBefore",
    "estimatedTokensAfter",
}
_CALL_ID = re.compile(r"^(call_\d+|tool:.*)$")


def _normalize(value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, item in value.items():
            if k in VOLATILE_KEYS:
                out[k] = "<volatile>"
            elif k == "sections" and isinstance(item, dict):
                out[k] = sorted(item)
            elif k in ("toolCallId", "targetId", "parentId", "firstKeptEntryId", "fromId"):
                out[k] = "<id>"
            else:
                out[k] = _normalize(item, k)
        return out
    if isinstance(value, list):
        return [_normalize(item, key) for item in value]
    if isinstance(value, str) and _CALL_ID.match(value):
        return "<id>"
    return value


def _merge_updates(group: list[dict[str, Any]]) -> dict[str, Any]:
    """A run of message_update events as its event kinds (deltas merged) and its final texts."""
    kinds: list[str] = []
    texts: dict[tuple[int, str], str] = {}
    for event in group:
        inner = event["assistantMessageEvent"]
        kind = inner["type"]
        if kind.endswith("_delta"):
            texts[(inner.get("contentIndex", 0), kind)] = texts.get(
                (inner.get("contentIndex", 0), kind), ""
            ) + inner.get("delta", "")
            if kinds and kinds[-1] == kind:
                continue
        else:
            extra = {k: v for k, v in inner.items() if k not in ("type", "contentIndex", "partial")}
            kind = f"{kind} {json.dumps(_normalize(extra), sort_keys=True)}" if extra else kind
        kinds.append(kind)
    return {
        "type": "message_update*",
        "kinds": kinds,
        "texts": {f"{i}:{k}": t for (i, k), t in texts.items()},
    }


def normalize_stream(events: list[dict[str, Any]]) -> list[Any]:
    """The comparable form of a session event stream (header line included, if any)."""
    out: list[Any] = []
    group: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == "message_update":
            group.append(event)
            continue
        if group:
            out.append(_merge_updates(group))
            group = []
        if event.get("type") == "tool_execution_update":
            if out and out[-1] == {"type": "tool_execution_update*"}:
                continue
            out.append({"type": "tool_execution_update*"})
            continue
        out.append(_normalize(event))
    if group:
        out.append(_merge_updates(group))
    return out


def read_jsonl(data: bytes | str) -> list[dict[str, Any]]:
    text = data.decode() if isinstance(data, bytes) else data
    return [json.loads(line) for line in text.split("\n") if line.strip()]
