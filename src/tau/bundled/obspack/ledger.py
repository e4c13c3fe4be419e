"""Ledger records: one JSON line per full send, placeholder and recall (extensions.md §5.4).

The records of one ``context`` event are written with one append, in order; nothing is written
for an empty batch.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.obspack.observation import Observation, estimate_tokens
from tau.common import jsjson
from tau.common.jsstr import iso_now

__all__ = ["full_record", "ledger_bytes", "placeholder_record", "recall_record"]


def full_record(observation: Observation, request: int) -> dict[str, Any]:
    return {
        "event": "full",
        "id": observation.id,
        "request": request,
        "tool": observation.tool_name,
        "originalBytes": observation.bytes,
        "originalLines": observation.lines,
        "originalTokens": observation.tokens,
        "contentHash": observation.content_hash,
    }


def placeholder_record(
    observation: Observation, request: int, send_number: int, placeholder: str
) -> dict[str, Any]:
    tokens = estimate_tokens(placeholder)
    return {
        "event": "placeholder",
        "id": observation.id,
        "request": request,
        "sendNumber": send_number,
        "tool": observation.tool_name,
        "originalBytes": observation.bytes,
        "originalLines": observation.lines,
        "originalTokens": observation.tokens,
        "contentHash": observation.content_hash,
        "placeholderBytes": len(placeholder.encode("utf-8", "surrogatepass")),
        "placeholderTokens": tokens,
        "removedTokens": max(0, observation.tokens - tokens),
    }


def recall_record(details: dict[str, Any]) -> dict[str, Any]:
    return {"event": "recall", **details}


def ledger_bytes(records: list[dict[str, Any]], timestamp: str | None = None) -> bytes:
    """The JSON lines of ``records``, each with a leading ISO ``timestamp``."""
    stamp = timestamp or iso_now()
    return b"".join(jsjson.dumps({"timestamp": stamp, **record}) + b"\n" for record in records)
