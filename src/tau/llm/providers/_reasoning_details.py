"""OpenRouter's ``reasoning_details``: kept in a thinking block's signature, sent back as they came.

OpenRouter streams a model's reasoning twice: readable text in ``delta.reasoning`` and, for
replay, ``delta.reasoning_details`` entries (``reasoning.text`` with Anthropic's ``signature``,
``reasoning.summary``, opaque ``reasoning.encrypted`` data). The provider needs the details back
on the next request for the model to continue its reasoning, so pi-ai 1.6 keeps them where every
other API keeps replay data: the thinking block's ``thinkingSignature``, as the JSON text of the
list, and sends that list as the assistant message's ``reasoning_details``.

Streamed entries are deltas: consecutive ``reasoning.text`` (or ``reasoning.summary``) entries are
merged into one, filling fields the first lacked; encrypted entries stay discrete. Older pi
sessions kept one encrypted entry in a tool call's ``thoughtSignature``; those are replayed too.
"""

from __future__ import annotations

from typing import Any

from tau.common import jsjson

__all__ = ["append_detail", "is_detail", "legacy_encrypted_detail", "parse_details"]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_detail(detail: Any) -> bool:
    """Whether ``detail`` is a reasoning-details entry pi keeps (a known type, its fields well typed)."""
    if not isinstance(detail, dict):
        return False
    if detail.get("id") is not None and not isinstance(detail["id"], str):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False
    if "index" in detail and not _is_number(detail["index"]):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        signature = detail.get("signature")
        return isinstance(detail.get("text"), str) and (signature is None or isinstance(signature, str))
    return False


def _fill_missing(target: dict[str, Any], source: dict[str, Any]) -> None:
    # pi: ``id ??=``, ``format ||=``, ``index ??=`` (a field the source lacks stays absent).
    for key, empty in (
        ("id", lambda v: v is None),
        ("format", lambda v: not v),
        ("index", lambda v: v is None),
    ):
        if empty(target.get(key)):
            if key in source:
                target[key] = source[key]
            else:
                target.pop(key, None)


def append_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
    """Add one streamed entry to ``details``, merging text and summary deltas into the last entry."""
    last = details[-1] if details else None
    if last is not None and detail["type"] == last["type"] == "reasoning.text":
        last["text"] += detail["text"]
        if not last.get("signature"):
            if "signature" in detail:
                last["signature"] = detail["signature"]
            else:
                last.pop("signature", None)
        _fill_missing(last, detail)
    elif last is not None and detail["type"] == last["type"] == "reasoning.summary":
        last["summary"] += detail["summary"]
        _fill_missing(last, detail)
    else:
        details.append(dict(detail))


def _json(text: Any) -> Any:
    if not isinstance(text, str) or not text:
        return None
    try:
        return jsjson.loads(text)
    except ValueError:
        return None


def parse_details(signature: Any) -> list[dict[str, Any]] | None:
    """The details a thinking block's signature holds, or ``None`` (another API's signature)."""
    parsed = _json(signature)
    if isinstance(parsed, list) and parsed and all(is_detail(detail) for detail in parsed):
        return parsed
    return None


def legacy_encrypted_detail(signature: Any) -> dict[str, Any] | None:
    """An encrypted entry older pi sessions kept in a tool call's ``thoughtSignature``, or ``None``."""
    parsed = _json(signature)
    if (
        is_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return None
