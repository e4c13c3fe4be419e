"""Checking the reducer model's answer, and the receipt text that replaces the log.

A receipt is accepted only when every claim in it can be checked against the archived log: the
schema, the source hash, the status the exit implies, and quotes that occur verbatim in the log. A
failing log that reads like a failure must come with failure evidence.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from tau.bundled.reducer.archive import ArchiveObject
from tau.bundled.reducer.config import (
    FAILURE_SIGNAL,
    MAX_EVIDENCE_ITEMS,
    MAX_QUOTE_CHARS,
    REDUCER_RECEIPT_PREFIX,
    REDUCER_RECEIPT_SCHEMA,
    sha256,
)
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len

__all__ = [
    "EXTRACTED_KINDS",
    "Evidence",
    "Rejected",
    "ValidReceipt",
    "extracted_receipt",
    "model_route_lines",
    "receipt_text",
    "validate_receipt",
]

KINDS = ("fatal", "failure", "warning", "target", "summary")
# An extractor also names where a failure was raised (``tests/test_x.py:12: AssertionError``).
EXTRACTED_KINDS = (*KINDS, "location")


@dataclass(frozen=True)
class Evidence:
    """A verified quote: its kind, 1-based line of its first occurrence, and SHA-256."""

    kind: str
    line: int
    quote: str
    quote_sha256: str


@dataclass(frozen=True)
class ValidReceipt:
    status: Literal["success", "failure"]
    uncertain: bool
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Rejected:
    """Why an answer was refused: a fallback reason code (``invalid-json``, ...)."""

    reason: str


def _line_of(body: str, quote: str) -> int:
    return body.count("\n", 0, body.index(quote)) + 1


def _items(parsed: Any, digest: str, status: str) -> list[Any] | None:
    if not isinstance(parsed, dict):
        return None
    evidence = parsed.get("evidence")
    if (
        parsed.get("schema") != REDUCER_RECEIPT_SCHEMA
        or parsed.get("source_sha256") != digest
        or parsed.get("status") != status
        or not isinstance(parsed.get("uncertain"), bool)
        or not isinstance(evidence, list)
        or len(evidence) > MAX_EVIDENCE_ITEMS
    ):
        return None
    return evidence


def _verified(item: Any, body: str, kinds: tuple[str, ...] = KINDS) -> Evidence | None:
    kind = item.get("kind") if isinstance(item, dict) else None
    quote = item.get("quote") if isinstance(item, dict) else None
    if kind not in kinds or not isinstance(quote, str):
        return None
    if not 1 <= js_len(quote) <= MAX_QUOTE_CHARS or quote not in body:
        return None
    return Evidence(kind, _line_of(body, quote), quote, sha256(quote))


def validate_receipt(raw: str, archived: ArchiveObject, body: str, is_error: bool) -> ValidReceipt | Rejected:
    """Check the model's JSON answer against the archived log; a :class:`Rejected` names the reason."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        return Rejected("invalid-json")
    status: Literal["success", "failure"] = "failure" if is_error else "success"
    items = _items(parsed, archived.hash, status)
    if items is None:
        return Rejected("schema-mismatch")
    evidence: list[Evidence] = []
    seen: set[tuple[str, str]] = set()
    for item in items:
        verified = _verified(item, body)
        if verified is None:
            return Rejected("unverifiable-quote")
        if (verified.kind, verified.quote) not in seen:
            seen.add((verified.kind, verified.quote))
            evidence.append(verified)
    if (
        is_error
        and FAILURE_SIGNAL.search(body)
        and not any(e.kind in ("fatal", "failure") and FAILURE_SIGNAL.search(e.quote) for e in evidence)
    ):
        return Rejected("missing-failure-evidence")
    return ValidReceipt(status, parsed["uncertain"], tuple(evidence))


def extracted_receipt(
    items: tuple[tuple[str, str], ...], body: str, is_error: bool, uncertain: bool
) -> ValidReceipt | None:
    """An extractor's quotes checked exactly as a model's are (verbatim in the log, 1–600 code units,
    line and SHA-256 of the first occurrence); ``None`` if one is not (an extractor bug, never sent)."""
    evidence = []
    for kind, quote in items:
        verified = _verified({"kind": kind, "quote": quote}, body, EXTRACTED_KINDS)
        if verified is None:
            return None
        evidence.append(verified)
    return ValidReceipt("failure" if is_error else "success", uncertain, tuple(evidence))


def model_route_lines(provider: str, model: str, total_tokens: int) -> list[str]:
    """The receipt lines that name the reducer model and what its call used."""
    return [f"reducer_provider={provider}", f"reducer_model={model}", f"reducer_total_tokens={total_tokens}"]


def receipt_text(
    command: str,
    archived: ArchiveObject,
    receipt: ValidReceipt,
    route: list[str],
    *,
    unquoted: int = 0,
) -> str:
    """The text the model sees instead of the log.

    ``route`` names who chose the quotes: the reducer model (:func:`model_route_lines`) or an
    extractor (``extractor=pytest``). ``unquoted`` failures that the budget left out are counted.
    """
    lines = [
        REDUCER_RECEIPT_PREFIX,
        f"status={receipt.status}",
        f"uncertain={'true' if receipt.uncertain else 'false'}",
        f"command_sha256={sha256(command)}",
        f"source_sha256={archived.hash}",
        f"source_bytes={archived.bytes}",
        f"source_lines={archived.lines}",
        f"source_artifact={archived.path}",
        *route,
        "verified_evidence:",
    ]
    lines += [
        f"- kind={e.kind} line={e.line} quote_sha256={e.quote_sha256} quote={jsjson.dumps_str(e.quote)}"
        for e in receipt.evidence
    ] or ["- none"]
    if unquoted:
        lines.append(f"unquoted_failures={unquoted}")
    lines += [
        "authority=Sol retains diagnosis, repair, rerun, and pass/fail adjudication",
        "readback=use bash with an explicit byte or line range on source_artifact when exact context is needed",
    ]
    return "\n".join(lines)
