"""The reducer wired to the ``tool_result`` event (extensions.md §5.5, "Pipeline"), in two tiers.

1. **Extractor tier** (on by default): a known log format gets a receipt built by deterministic
   extractors (:mod:`tau.bundled.reducer.extract`), with no model call.
2. **Model tier** (opt-in): a reducer model picks the quotes of what no extractor knows, when the
   call pays (:mod:`tau.bundled.reducer.pays`), with the configured model or the cheapest of the
   session's provider (:mod:`tau.bundled.reducer.route`).

Every step that cannot prove a smaller, verified receipt journals a ``fallback`` with its reason and
leaves the result as it is (fail-open). The one exception is archive integrity: an archived log
whose bytes changed is raised, because a receipt pointing at it would mislead the model.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import OrderedDict
from dataclasses import field
from typing import Any

from tau.bundled.reducer.archive import Archive, ArchiveObject, line_count
from tau.bundled.reducer.candidate import Candidate, ResultView, find_candidate
from tau.bundled.reducer.config import (
    DIAGNOSTIC_COMMAND,
    EXTRACTOR_COMMAND,
    MAX_CHARS,
    MAX_OUTPUT_TOKENS,
    MIN_BYTES,
    REDUCER_EVENT_SCHEMA,
    REDUCER_EVENT_TYPE,
    REDUCER_RECEIPT_SCHEMA,
    SCRIPT_COMMAND,
    TIMEOUT_SECONDS,
    sha256,
    utf8,
)
from tau.bundled.reducer.extract import Extraction, extract
from tau.bundled.reducer.model_call import ZERO_USAGE, Fallback, ask, reducer_context
from tau.bundled.reducer.pays import extract_decision, horizon, model_decision
from tau.bundled.reducer.prompt import reducer_instructions
from tau.bundled.reducer.receipt import ValidReceipt, extracted_receipt, model_route_lines, receipt_text
from tau.bundled.reducer.route import Route, choose_route, price_ratio
from tau.bundled.reducer.secret_scan import find_secret
from tau.bundled.reducer.wire import DETAILS_KEY
from tau.bundled.sol_common import SolSettings, format_savings_bytes, runtime_root, show_savings
from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len

__all__ = ["CACHE_SIZE", "MECHANISM", "Reducer"]

MECHANISM = "Evidence Reducer"
CACHE_SIZE = 64
# A failing log's receipt must quote a failure; these kinds do (a test id counts: it names what failed).
_FAILURE_KINDS = ("fatal", "failure", "target")


@dataclass(frozen=True)
class _Cached:
    archived: ArchiveObject
    receipt: ValidReceipt


@dataclass
class _RootState:
    """Per session (runtime root): the run id, the archive, the receipt cache, the route announced."""

    run_id: str
    archive: Archive
    cache: OrderedDict[tuple[Any, ...], _Cached] = field(default_factory=OrderedDict)
    announced: Route | None = None


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

    @property
    def model_tier(self) -> bool:
        return bool(self.settings.evidence_preserving_reducer)

    @property
    def extractors(self) -> bool:
        return bool(getattr(self.settings, "evidence_extractors", False))

    def install(self) -> None:
        self.tau.on("tool_result", self.on_tool_result)

    def _accepts(self, command: str) -> bool:
        seed = DIAGNOSTIC_COMMAND.search(command) is not None
        if seed or not self.extractors:
            return seed
        return EXTRACTOR_COMMAND.search(command) is not None or SCRIPT_COMMAND.search(command) is not None

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

    # -- the handler -----------------------------------------------------------------------------

    async def on_tool_result(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        view = ResultView.of(event)
        candidate = find_candidate(view, self.max_chars, self._accepts)
        if candidate is None:
            return None
        state = self._state(ctx)
        if state is None:
            return None
        try:
            return await self._reduce(view, candidate, state, ctx)
        except Fallback as fallback:
            data = {"reason": fallback.reason, "toolCallId": view.tool_call_id, **fallback.data}
            self._journal(state, "fallback", data)
            return None

    async def _reduce(
        self, view: ResultView, candidate: Candidate, state: _RootState, ctx: Any
    ) -> dict[str, Any] | None:
        body = candidate.body
        if body is None or js_len(body) > self.max_chars:
            raise Fallback("source-over-max-chars")
        known: dict[str, Any] = {"sourceSha256": sha256(body), "sourceBytes": len(utf8(body))}
        if known["sourceBytes"] < self.min_bytes:
            if self.model_tier:
                raise Fallback("source-under-min-bytes", **known)
            return None  # the default profile journals nothing for the many small logs
        if candidate.exit_failed is not None and candidate.exit_failed != view.is_error:
            raise Fallback("exit-state-mismatch", **known)
        reads = horizon(self.settings.observation_pack)
        passed: tuple[str, dict[str, Any]] | None = None
        if self.extractors:
            extraction = await asyncio.to_thread(extract, body) if len(body) > 65_536 else extract(body)
            outcome = self._extracted(view, candidate, state, ctx, body, extraction, reads, known)
            if isinstance(outcome, dict):
                return outcome
            passed = outcome
        if not (self.model_tier and DIAGNOSTIC_COMMAND.search(candidate.command)):
            if passed is not None:
                raise Fallback(passed[0], **known, **passed[1])
            return None
        return await self._by_model(view, candidate, state, ctx, body, reads, known, passed)

    # -- the extractor tier ----------------------------------------------------------------------

    def _extracted(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        ctx: Any,
        body: str,
        extraction: Extraction | None,
        reads: int,
        known: dict[str, Any],
    ) -> dict[str, Any] | tuple[str, dict[str, Any]]:
        """The result with an extracted receipt, or why not (``(reason, figures)``)."""
        if extraction is None:
            return "unrecognised-format", {}
        about: dict[str, Any] = {"format": extraction.format}
        if view.is_error and not any(kind in _FAILURE_KINDS for kind, _ in extraction.items):
            return "missing-failure-evidence", about
        receipt = extracted_receipt(extraction.items, body, view.is_error, extraction.uncertain)
        if receipt is None:  # an extractor quoted something that is not in the log: never sent
            return "unverifiable-quote", about
        digest = known["sourceSha256"]
        planned = ArchiveObject(
            digest, known["sourceBytes"], line_count(body), os.path.abspath(state.archive.path_of(digest))
        )
        route = [f"extractor={extraction.format}"]
        text = receipt_text(candidate.command, planned, receipt, route, unquoted=extraction.unquoted)
        decision = extract_decision(planned.bytes, len(utf8(text)), reads)
        if not decision.pays:
            return "does-not-pay", {**about, "decision": decision.figures()}
        archived = self._archive(view, candidate, state, body, known, tier="extract")
        if archived.path != planned.path:  # the receipt names the file the log is in
            text = receipt_text(candidate.command, archived, receipt, route, unquoted=extraction.unquoted)
        return self._apply(
            view,
            candidate,
            state,
            ctx,
            archived,
            receipt,
            text,
            {
                "tier": "extract",
                "format": extraction.format,
                "unquotedFailures": extraction.unquoted,
                "decision": decision.figures(),
            },
        )

    # -- the model tier --------------------------------------------------------------------------

    async def _by_model(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        ctx: Any,
        body: str,
        reads: int,
        known: dict[str, Any],
        passed: tuple[str, dict[str, Any]] | None,
    ) -> dict[str, Any] | None:
        finding = await _secret_in(candidate.command, body, known)
        if finding is not None:
            raise Fallback("likely-secret", finding=finding, **known)
        archived = self._archive(view, candidate, state, body, known, tier="model")
        known = {"sourceSha256": archived.hash}
        registry = ctx.model_registry
        route = choose_route(self.settings, registry, ctx.model)
        if route is None:
            raise Fallback("reducer-model-unavailable", **known)
        model = registry.find(route.provider, route.model_id)
        if model is None:
            raise Fallback(
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
        if cached is not None:  # a receipt already paid for costs nothing more
            _archived(state.archive.recheck, cached.archived, body, known=known)
            state.cache.move_to_end(key)
            self._journal(state, "cache_hit", {"toolCallId": view.tool_call_id, **known})
            text = receipt_text(
                candidate.command,
                archived,
                cached.receipt,
                model_route_lines(route.provider, route.model_id, 0),
            )
            return self._apply(
                view,
                candidate,
                state,
                ctx,
                archived,
                cached.receipt,
                text,
                {"tier": "model", "route": route.source, "usage": dict(ZERO_USAGE), "cacheHit": True},
            )
        decision = model_decision(
            archived.bytes,
            len(utf8(instructions)) + 300,  # the identity lines and tags around the log
            view.is_error,
            price_ratio(registry, route, ctx.model),
            reads,
        )
        extractor = {"extractor": {"reason": passed[0], **passed[1]}} if passed is not None else {}
        if not decision.pays:
            raise Fallback(
                "does-not-pay", **known, decision=decision.figures(), **route.figures(), **extractor
            )
        self._announce(state, ctx, route)
        applied_data = {"tier": "model", "route": route.source, "decision": decision.figures()}
        usage, receipt = await ask(
            ctx,
            model,
            reducer_context(candidate.command, view.is_error, archived, body),
            max_tokens=max_tokens,
            run_id=state.run_id,
            timeout_seconds=self.timeout_seconds,
            known=known,
            journal=lambda kind, data: self._journal(state, kind, data),
            journal_data={
                "toolCallId": view.tool_call_id,
                "provider": route.provider,
                "model": route.model_id,
            },
            archived=archived,
            body=body,
            is_error=view.is_error,
        )
        total = usage.get("totalTokens", 0) if isinstance(usage, dict) else 0
        text = receipt_text(
            candidate.command, archived, receipt, model_route_lines(route.provider, route.model_id, total)
        )
        applied = self._apply(
            view,
            candidate,
            state,
            ctx,
            archived,
            receipt,
            text,
            {**applied_data, "usage": usage, "cacheHit": False},
        )
        state.cache[key] = _Cached(archived, receipt)
        while len(state.cache) > CACHE_SIZE:
            state.cache.popitem(last=False)
        return applied

    def _announce(self, state: _RootState, ctx: Any, route: Route) -> None:
        """Say once per session which model reduces, and why that one (journal; a notice in the TUI)."""
        if state.announced == route:
            return
        state.announced = route
        current = ctx.model
        self._journal(
            state,
            "route",
            {
                **route.figures(),
                "sessionProvider": getattr(current, "provider", None),
                "sessionModel": getattr(current, "id", None),
            },
        )
        if ctx.mode != "tui":
            return
        why = {
            "configured": "set in sol.reducerModel",
            "cheapest": f"the cheapest {route.provider} model; set sol.reducerModel to choose",
            "session": "the session's model; set sol.reducerModel to choose",
        }[route.source]
        try:
            ctx.ui.notify(
                f"⚡ SoL-Pi · {MECHANISM}\nReducer model · {route.provider}/{route.model_id} ({why})", "info"
            )
        except Exception:  # presentation is best effort
            pass

    # -- both tiers ------------------------------------------------------------------------------

    def _archive(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        body: str,
        known: dict[str, Any],
        **more: Any,
    ) -> ArchiveObject:
        archived = _archived(state.archive.store, body, known={"sourceSha256": known["sourceSha256"]})
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
                **more,
            },
        )
        return archived

    def _apply(
        self,
        view: ResultView,
        candidate: Candidate,
        state: _RootState,
        ctx: Any,
        archived: ArchiveObject,
        receipt: ValidReceipt,
        text: str,
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        receipt_bytes = len(utf8(text))
        if receipt_bytes >= archived.bytes:  # more tokens reported than the log is worth: keep the log
            raise Fallback("receipt-not-smaller", receiptBytes=receipt_bytes, sourceBytes=archived.bytes)
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
                **extra,
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
            "details": {**details, DETAILS_KEY: summary},
        }


async def _secret_in(command: str, body: str, known: dict[str, Any]) -> str | None:
    """The kind of credential in what the request would carry (never the value), or ``None``.

    A log of 600,000 characters takes a noticeable part of a second to scan: that runs in a thread, so
    the event loop (an abort, the terminal) is not held up meanwhile.
    """
    try:
        return await asyncio.to_thread(lambda: find_secret(command) or find_secret(body))
    except ImportError as exc:  # no scanner, no request: the text may hold anything
        raise Fallback("secret-scan-unavailable", error=str(exc), **known) from exc


def _archived(step: Any, *args: Any, known: dict[str, Any]) -> Any:
    """Run an archive step; one it cannot write (a refused link, a full disk) falls back.

    An :class:`~tau.bundled.reducer.archive.ArchiveIntegrityError` propagates: not fail-open.
    """
    try:
        return step(*args)
    except OSError as exc:
        raise Fallback("archive-unavailable", error=str(exc), **known) from exc
