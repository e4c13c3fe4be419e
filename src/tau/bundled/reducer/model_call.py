"""The model tier's call to the reducer model (extensions.md §5.5, "Model call").

The run's abort and a timeout end the call even when the provider ignores the signal; an answer
that is not a verified receipt raises :class:`Fallback` with its reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

import tau.extension as api
from tau.bundled.reducer.archive import ArchiveObject
from tau.bundled.reducer.prompt import reducer_input, reducer_instructions
from tau.bundled.reducer.receipt import Rejected, ValidReceipt, validate_receipt
from tau.common.jsstr import ms_now

__all__ = ["ZERO_USAGE", "Fallback", "ask", "stream_options"]

ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}


class Fallback(Exception):
    """The original result stays; ``reason`` and ``data`` go to the journal."""

    def __init__(self, reason: str, **data: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.data = data


def reducer_context(command: str, is_error: bool, archived: ArchiveObject, body: str) -> dict[str, Any]:
    """The reducer request: the instructions and one user message holding the log."""
    return {
        "systemPrompt": reducer_instructions(),
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": reducer_input(command, is_error, archived, body)}],
                "timestamp": ms_now(),
            }
        ],
    }


async def ask(
    ctx: Any,
    model: Any,
    context: dict[str, Any],
    *,
    max_tokens: int,
    run_id: str,
    timeout_seconds: float,
    known: dict[str, Any],
    journal: Any,
    journal_data: dict[str, Any],
    archived: ArchiveObject,
    body: str,
    is_error: bool,
) -> tuple[dict[str, Any], ValidReceipt]:
    """Call the reducer model; its usage and the verified receipt, or :class:`Fallback`."""
    response = await _complete(ctx, model, context, max_tokens, run_id, timeout_seconds, known)
    stop_reason = response.get("stopReason")
    usage = response.get("usage") or dict(ZERO_USAGE)
    journal(
        "provider_response",
        {
            **journal_data,
            "stopReason": stop_reason,
            "errorMessage": response.get("errorMessage"),
            "usage": usage,
        },
    )
    if stop_reason == "aborted":
        raise Fallback("model-call-timeout", **known)
    if stop_reason not in ("stop", "length"):
        raise Fallback(
            "model-response-error", stopReason=stop_reason, errorMessage=response.get("errorMessage"), **known
        )
    raw = "".join(b.get("text", "") for b in response.get("content") or [] if b.get("type") == "text")
    verdict = validate_receipt(raw, archived, body, is_error)
    if isinstance(verdict, Rejected):
        raise Fallback(verdict.reason, **known)
    return usage, verdict


async def _complete(
    ctx: Any,
    model: Any,
    context: dict[str, Any],
    max_tokens: int,
    run_id: str,
    timeout_seconds: float,
    known: dict[str, Any],
) -> dict[str, Any]:
    signal = api.AbortSignal()
    parent = ctx.signal
    remove = parent.add_callback(signal.abort) if parent is not None else None
    options = stream_options(signal, max_tokens, run_id, timeout_seconds)
    call = asyncio.ensure_future(
        ctx.model_registry.complete(model, context, *([options] if options is not None else []))
    )
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({call, aborted}, timeout=timeout_seconds, return_when=asyncio.FIRST_COMPLETED)
        if not call.done():
            signal.abort("timeout")
            call.cancel()
            raise Fallback("model-call-timeout", **known)
        try:
            return call.result()
        except Exception as exc:  # a provider that raised instead of ending its stream
            raise Fallback("model-call-exception", error=str(exc) or type(exc).__name__, **known) from exc
    finally:
        aborted.cancel()
        if not call.done():
            call.cancel()
        if remove is not None:
            remove()


def stream_options(signal: Any, max_tokens: int, run_id: str, timeout_seconds: float) -> Any:
    """The call's options, when the API offers ``StreamOptions`` (else the registry's defaults)."""
    options_type = getattr(api, "StreamOptions", None)
    if options_type is None:
        return None
    return options_type(
        signal=signal,
        session_id=run_id,
        max_tokens=max_tokens,
        cache_retention="none",
        timeout_ms=int(timeout_seconds * 1000),
    )
