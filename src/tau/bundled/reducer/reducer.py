"""The reducer wired to the ``tool_result`` event (extensions.md §5.5, "Pipeline").

Every step that cannot prove a smaller, verified receipt journals a ``fallback`` with its reason and
leaves the result as it is (fail-open). The one exception is archive integrity: an archived log
whose bytes changed is raised, because a receipt pointing at it would mislead the model.
"""

from __future__ import annotations

import asyncio
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import tau.extension as api
from tau.bundled.reducer.archive import Archive, ArchiveObject
from tau.bundled.reducer.candidate import Candidate, ResultView, find_candidate
from tau.bundled.reducer.config import (
    MAX_CHARS,
    MAX_OUTPUT_TOKENS,
    MIN_BYTES,
    REDUCER_EVENT_SCHEMA,
    REDUCER_EVENT_TYPE,
    REDUCER_RECEIPT_SCHEMA,
    TIMEOUT_SECONDS,
    sha256,
    utf8,
)
from tau.bundled.reducer.prompt import reducer_input, reducer_instructions
from tau.bundled.reducer.receipt import Rejected, ValidReceipt, receipt_text, validate_receipt
from tau.bundled.reducer.secret_scan import find_secret
from tau.bundled.sol_common import SolSettings, format_savings_bytes, runtime_root, show_savings
from tau.common.jsstr import js_len, ms_now

__all__ = ["CACHE_SIZE", "MECHANISM", "Reducer"]

MECHANISM = "Evidence Reducer"
CACHE_SIZE = 64
_ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}


class _Fallback(Exception):
    def __init__(self, reason: str, **data: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.data = data


@dataclass(frozen=True)
class _Cached:
    archived: ArchiveObject
    receipt: ValidReceipt


@dataclass
class _RootState:
    """Per session (runtime root): the run id, the archive and the receipt cache."""

    run_id: str
    archive: Archive
    cache: OrderedDict[tuple[Any, ...], _Cached] = field(default_factory=OrderedDict)


@dataclass(frozen=True)
class _Route:
    provider: str
    model_id: str


class Reducer:
    """One per extension instance; nothing it caches crosses sessions or instances."""

    def __init__(
        self,
        tau: Any,
        settings: SolSettings,
        *,
        timeout_seconds: float = TIMEOUT_SECONDS,
        min_bytes: int = MIN_BYTES,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self.tau = tau
        self.settings = settings
        self.timeout_seconds = timeout_seconds
        self.min_bytes = min_bytes
        self.max_chars = max_chars
        self.roots: dict[str, _RootState] = {}

    def install(self) -> None:
        self.tau.on("tool_result", self.on_tool_result)

    # -- state -----------------------------------------------------------------------------------

    def _state(self, ctx: Any) -> _RootState | None:
        manager = ctx.session_manager
        try:
            root = runtime_root(manager.get_session_dir(), manager.get_session_id())
        except Exception as exc:  # no safe place for the archive: leave every result alone
            sys.stderr.write(f"[evidence-reducer] fail-open: {exc}\n")
            return None
        state = self.roots.get(root.key)
        if state is None:
            state = self.roots[root.key] = _RootState(sha256(root.path)[:16], Archive(root))
        return state

    def _journal(self, state: _RootState, kind: str, data: dict[str, Any]) -> None:
        entry = {"schema": REDUCER_EVENT_SCHEMA, "runId": state.run_id, "kind": kind, **data}
        try:
            self.tau.append_entry(REDUCER_EVENT_TYPE, entry)
        except Exception as exc:  # the journal is evidence about the reducer, never a gate
            sys.stderr.write(f"[evidence-reducer] journal entry not written: {exc}\n")

    def _route(self, ctx: Any) -> _Route | None:
        current = ctx.model
        provider = self.settings.reducer_provider or getattr(current, "provider", None)
        model_id = self.settings.reducer_model or getattr(current, "id", None)
        return _Route(provider, model_id) if provider and model_id else None

    # -- the handler -----------------------------------------------------------------------------

    async def on_tool_result(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        view = ResultView.of(event)
        candidate = find_candidate(view, self.max_chars)
        if candidate is None:
            return None
        state = self._state(ctx)
        if state is None:
            return None
        try:
            return await self._reduce(view, candidate, state, ctx)
        except _Fallback as fallback:
            data = {"reason": fallback.reason, "toolCallId": view.tool_call_id, **fallback.data}
            self._journal(state, "fallback", data)
            return None

    async def _checked_body(self, view: ResultView, candidate: Candidate) -> str:
        body = candidate.body
        if body is None or js_len(body) > self.max_chars:
            raise _Fallback("source-over-max-chars")
        known = {"sourceSha256": sha256(body), "sourceBytes": len(utf8(body))}
        if known["sourceBytes"] < self.min_bytes:
            raise _Fallback("source-under-min-bytes", **known)
        finding = await _secret_in(candidate.command, body, known)
        if finding is not None:
            raise _Fallback("likely-secret", finding=finding, **known)
        if candidate.exit_failed is not None and candidate.exit_failed != view.is_error:
            raise _Fallback("exit-state-mismatch", **known)
        return body

    async def _reduce(
        self, view: ResultView, candidate: Candidate, state: _RootState, ctx: Any
    ) -> dict[str, Any] | None:
        body = await self._checked_body(view, candidate)
        archived = _archived(state.archive.store, body, known={"sourceSha256": sha256(body)})
        self._journal(
            state,
            "candidate",
            {
                "toolCallId": view.tool_call_id,
                "commandSha256": sha256(candidate.command),
                "isError": view.is_error,
                "sourceSha256": archived.hash,
                "sourceBytes": archived.bytes,
                "sourceLines": archived.lines,
                "sourcePath": archived.path,
            },
        )
        known = {"sourceSha256": archived.hash}
        route = self._route(ctx)
        if route is None:
            raise _Fallback("reducer-model-unavailable", **known)
        model = ctx.model_registry.find(route.provider, route.model_id)
        if model is None:
            raise _Fallback(
                "reducer-model-unavailable", provider=route.provider, model=route.model_id, **known
            )
        max_tokens = min(
            MAX_OUTPUT_TOKENS, getattr(model, "max_tokens", MAX_OUTPUT_TOKENS) or MAX_OUTPUT_TOKENS
        )
        instructions = reducer_instructions()
        key = (
            archived.hash,
            candidate.command,
            view.is_error,
            route.provider,
            route.model_id,
            max_tokens,
            instructions,
        )
        cached = state.cache.get(key)
        if cached is not None:
            _archived(state.archive.recheck, cached.archived, body, known=known)
            state.cache.move_to_end(key)
            self._journal(state, "cache_hit", {"toolCallId": view.tool_call_id, **known})
            return self._apply(
                view, candidate, state, ctx, route, archived, cached.receipt, _ZERO_USAGE, True
            )
        usage, receipt = await self._ask(
            view, candidate, state, ctx, route, model, max_tokens, archived, body
        )
        applied = self._apply(view, candidate, state, ctx, route, archived, receipt, usage, False)
        state.cache[key] = _Cached(archived, receipt)
        while len(state.cache) > CACHE_SIZE:
            state.cache.popitem(last=False)
        return applied

    async def _ask(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        ctx: Any,
        route: _Route,
        model: Any,
        max_tokens: int,
        archived: ArchiveObject,
        body: str,
    ) -> tuple[dict[str, Any], ValidReceipt]:
        known = {"sourceSha256": archived.hash}
        context = {
            "systemPrompt": reducer_instructions(),
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": reducer_input(candidate.command, view.is_error, archived, body),
                        }
                    ],
                    "timestamp": ms_now(),
                }
            ],
        }
        response = await self._complete(ctx, model, context, max_tokens, state.run_id, known)
        stop_reason = response.get("stopReason")
        usage = response.get("usage") or dict(_ZERO_USAGE)
        self._journal(
            state,
            "provider_response",
            {
                "toolCallId": view.tool_call_id,
                "provider": route.provider,
                "model": route.model_id,
                "stopReason": stop_reason,
                "errorMessage": response.get("errorMessage"),
                "usage": usage,
            },
        )
        if stop_reason == "aborted":
            raise _Fallback("model-call-timeout", **known)
        if stop_reason not in ("stop", "length"):
            raise _Fallback(
                "model-response-error",
                stopReason=stop_reason,
                errorMessage=response.get("errorMessage"),
                **known,
            )
        raw = "".join(b.get("text", "") for b in response.get("content") or [] if b.get("type") == "text")
        verdict = validate_receipt(raw, archived, body, view.is_error)
        if isinstance(verdict, Rejected):
            raise _Fallback(verdict.reason, **known)
        return usage, verdict

    async def _complete(
        self,
        ctx: Any,
        model: Any,
        context: dict[str, Any],
        max_tokens: int,
        run_id: str,
        known: dict[str, Any],
    ) -> dict[str, Any]:
        signal = api.AbortSignal()
        parent = ctx.signal
        remove = parent.add_callback(signal.abort) if parent is not None else None
        options = _stream_options(signal, max_tokens, run_id, self.timeout_seconds)
        call = asyncio.ensure_future(
            ctx.model_registry.complete(model, context, *([options] if options is not None else []))
        )
        aborted = asyncio.ensure_future(signal.wait())
        try:
            # The run's abort and the timeout end the call even when the provider ignores the signal.
            await asyncio.wait(
                {call, aborted}, timeout=self.timeout_seconds, return_when=asyncio.FIRST_COMPLETED
            )
            if not call.done():
                signal.abort("timeout")
                call.cancel()
                raise _Fallback("model-call-timeout", **known)
            try:
                return call.result()
            except Exception as exc:  # a provider that raised instead of ending its stream
                raise _Fallback(
                    "model-call-exception", error=str(exc) or type(exc).__name__, **known
                ) from exc
        finally:
            aborted.cancel()
            if not call.done():
                call.cancel()
            if remove is not None:
                remove()

    def _apply(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        ctx: Any,
        route: _Route,
        archived: ArchiveObject,
        receipt: ValidReceipt,
        usage: dict[str, Any],
        cache_hit: bool,
    ) -> dict[str, Any]:
        total = usage.get("totalTokens", 0) if isinstance(usage, dict) else 0
        text = receipt_text(candidate.command, archived, receipt, route.provider, route.model_id, total)
        receipt_bytes = len(utf8(text))
        if receipt_bytes >= archived.bytes:  # more tokens reported than the log is worth: keep the log
            raise _Fallback("receipt-not-smaller", receiptBytes=receipt_bytes, sourceBytes=archived.bytes)
        summary = {
            "schema": REDUCER_RECEIPT_SCHEMA,
            "sourceSha256": archived.hash,
            "sourceBytes": archived.bytes,
            "receiptSha256": sha256(text),
            "receiptBytes": receipt_bytes,
            "evidenceCount": len(receipt.evidence),
            "uncertain": receipt.uncertain,
        }
        self._journal(
            state,
            "applied",
            {
                "toolCallId": view.tool_call_id,
                "commandSha256": sha256(candidate.command),
                "sourceSha256": archived.hash,
                "sourceBytes": archived.bytes,
                "receiptSha256": summary["receiptSha256"],
                "receiptBytes": receipt_bytes,
                "evidenceCount": summary["evidenceCount"],
                "uncertain": receipt.uncertain,
                "usage": usage,
                "cacheHit": cache_hit,
            },
        )
        try:
            show_savings(ctx, MECHANISM, format_savings_bytes(archived.bytes - receipt_bytes))
        except Exception:  # presentation is best effort
            pass
        details = view.details if isinstance(view.details, dict) else {}
        return {
            "content": candidate.project(text),
            "isError": view.is_error,
            "details": {**details, "evidencePreservingReducer": summary},
        }


async def _secret_in(command: str, body: str, known: dict[str, Any]) -> str | None:
    """The kind of credential in what the request would carry (never the value), or ``None``.

    A log of 600,000 characters takes a noticeable part of a second to scan: that runs in a thread, so
    the event loop (an abort, the terminal) is not held up meanwhile.
    """
    try:
        return await asyncio.to_thread(lambda: find_secret(command) or find_secret(body))
    except ImportError as exc:  # no scanner, no request: the text may hold anything
        raise _Fallback("secret-scan-unavailable", error=str(exc), **known) from exc


def _archived(step: Any, *args: Any, known: dict[str, Any]) -> Any:
    """Run an archive step; one it cannot write (a refused link, a full disk) falls back.

    An :class:`~tau.bundled.reducer.archive.ArchiveIntegrityError` propagates: not fail-open.
    """
    try:
        return step(*args)
    except OSError as exc:
        raise _Fallback("archive-unavailable", error=str(exc), **known) from exc


def _stream_options(signal: Any, max_tokens: int, run_id: str, timeout_seconds: float) -> Any:
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
