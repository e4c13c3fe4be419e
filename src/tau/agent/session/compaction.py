"""Compaction inside a session (pi-host §4.6, §6.5): manual ``compact``, threshold and overflow triggers.

Events: ``compaction_start{reason}`` → ``session_before_compact`` (extensions may cancel or supply the
summary) → the summary requests → the ``compaction`` entry (with ``systemMessage``) →
``session_compact`` → ``compaction_end{reason, result, aborted, willRetry}``. A failure or a cancel
ends with ``compaction_end{errorMessage?}`` without ``result`` (as pi) and ``session_compact_failed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.agent.agent import Agent
from tau.agent.session.bus import EventBus
from tau.agent.session.context_usage import context_usage, entry_ms, latest_compaction
from tau.agent.session.retry import retry_policy
from tau.agent.session.run_state import RunState
from tau.agent.session.store import SessionStore
from tau.agent.settings import Settings
from tau.llm.overflow import is_context_overflow, is_recoverable_length
from tau.llm.stream import AbortSignal, StreamFunction

if TYPE_CHECKING:  # imported when a request is made: the compaction package is heavy
    from tau.agent.compaction.cached import LastRequest

__all__ = ["Compactor", "check_keep_recent_tokens"]

OVERFLOW_RETRY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
LENGTH_RETRY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


class CompactionCancelled(Exception):
    """A compaction stopped by an abort or by a ``session_before_compact`` handler."""


def _estimate() -> Any:
    # tau.agent.compaction loads every compaction module: only import it once a run needs it.
    from tau.agent.compaction import estimate

    return estimate


def _settings_module() -> Any:
    from tau.agent.compaction import settings

    return settings


def _summarization_error() -> type[Exception]:
    from tau.agent.compaction.summary import SummarizationError

    return SummarizationError


def _rindex(entries: list[dict[str, Any]], entry_id: Any) -> int:
    """Position of the entry ``entry_id`` in ``entries``, searched from the end (the newest); -1 if absent."""
    for index in range(len(entries) - 1, -1, -1):
        if entries[index].get("id") == entry_id:
            return index
    return -1


def _sent_prefix(ids: list[Any], branch: list[dict[str, Any]], leaf_id: Any) -> int | None:
    """How many of the projection's items (``ids``, their source entries' ids) a request sent when
    the leaf was ``leaf_id`` holds; ``None`` when it does not hold a prefix of them.

    The request held the items whose entries were on the branch up to that leaf. The projection is
    in branch order except its first item, the latest compaction, whose entry comes after the
    entries it keeps: a request sent just after a compaction (the leaf is the compaction entry, as
    for an overflow retry) holds the summary and every kept entry, not only the summary. A leaf
    before the latest compaction sent the history that compaction replaced: not a prefix.
    """
    position = {entry.get("id"): index for index, entry in enumerate(branch)}
    leaf = position.get(leaf_id)
    if leaf_id is None or leaf is None:
        return None
    held = [position.get(entry_id, len(branch)) <= leaf for entry_id in ids]
    sent = held.count(True)
    return sent if all(held[:sent]) else None


def check_keep_recent_tokens(value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` (``compact``'s ``keep_recent_tokens``) is ``None`` or a
    non-negative integer."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"keep_recent_tokens must be a non-negative integer, not {value!r}")


class Compactor:
    """Compaction of one session: manual, at the threshold, and the recovery from an overflow.

    It owns the last provider request (recorded by :meth:`recording_stream`, the agent's stream
    function: a cache-friendly summary starts from it) and whether this run already tried to
    recover from an overflow.

    Args:
        store: the session file, its projection and entry index.
        agent: the agent (model, thinking level, transcript, queued messages).
        settings: where ``compaction.*`` and ``retry.*`` are read.
        bus: events and extension hooks.
        run: the run state, where a compaction is an operation.
        stream_fn: the provider entry point.
        convert: the request conversion of session messages (``convert_to_llm``).
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        settings: Settings,
        bus: EventBus,
        run: RunState,
        stream_fn: StreamFunction,
        convert: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> None:
        self._store = store
        self._agent = agent
        self._settings = settings
        self._bus = bus
        self._run = run
        self._stream_fn = stream_fn
        self._convert = convert
        self._last_request: LastRequest | None = None
        self._started = False  # whether the automatic compaction in progress announced itself
        self.overflow_recovery_attempted = False

    def settings(self) -> Any:
        model = self._agent.state.model
        key = f"{model.provider}/{model.id}" if model is not None else None
        return _settings_module().CompactionSettings.from_settings(self._settings.effective, key)

    def recording_stream(self, model: Any, context: Any, options: Any = None) -> Any:
        """The agent's provider call, remembered: a cache-friendly summary starts with it.

        Without a ``before_provider_request`` handler the provider is given no ``on_payload``: a
        provider that builds its payload only for the hook (faux) then builds none.
        """
        from tau.agent.compaction.cached import LastRequest

        if (
            options is not None
            and options.on_payload is not None
            and not self._bus.hooks.has_handlers("before_provider_request")
        ):
            options = dataclasses.replace(options, on_payload=None)
        self._last_request = LastRequest(
            list(context["messages"]), options, model.provider, model.id, self._store.manager.get_leaf_id()
        )
        return self._stream_fn(model, context, options)

    def cached_summaries(
        self,
        reason: str,
        signal: AbortSignal,
        settings: Any,
        first_id: Any,
        turn_start_id: Any = None,
        *,
        branch: bool = False,
    ) -> Any:
        """The cache-friendly requests of a compaction that keeps from ``first_id`` (or, with
        ``branch``, of the summary of the branch that starts at ``first_id``), or ``None`` when pi's
        requests must be sent: the setting is off, it is an overflow compaction, or no request of this
        model and session is known to have been cached up to an entry of the current branch."""
        from tau.agent.compaction.cached import CachedSummaries, quote

        last = self._last_request
        model = self._agent.state.model
        if (
            not settings.cache_friendly
            or reason == "overflow"
            or last is None
            or model is None
            or (last.provider, last.model_id) != (model.provider, model.id)
            or last.options.session_id != self._store.manager.get_session_id()
        ):
            return None
        entries = self._store.projection.get()["entries"]  # the store's, kept up to date
        ids = [item["sourceEntry"].get("id") for item in entries]
        if first_id not in ids or (turn_start_id is not None and turn_start_id not in ids):
            return None
        sent = _sent_prefix(ids, self._store.manager.get_branch(), last.leaf_id)
        if sent is None:
            return None
        first = ids.index(first_id)
        # What was added since the last request, up to the first entry the summary does not replace:
        # whatever stays after the cut need not be sent.
        # (A branch summary needs everything: the whole branch is what it replaces.)
        end = len(entries) if branch else first
        since = [m for item in entries[sent:end] for m in item["messages"]]

        def quoted(index: int) -> str | None:
            """How the message at ``entries[index]`` begins; ``None`` past the messages sent."""
            if index >= max(sent, end):
                return None
            found = (m for item in entries[index:] for m in self._convert(item["messages"]))
            return next((text for m in found if m.get("role") != "system" and (text := quote(m))), None)

        turn_start = quoted(ids.index(turn_start_id)) if turn_start_id is not None else None
        if turn_start_id is not None and turn_start is None:
            return None
        options = dataclasses.replace(last.options, signal=signal, on_payload=None, on_response=None)
        return CachedSummaries(
            messages=[*last.messages, *self._convert(since)],
            complete=self.summary_complete(signal, reason, options),
            kept=quoted(first),
            turn_start=turn_start,
            context_window=model.context_window,
            headroom=settings.reserve_tokens // 2,
        )

    def summary_complete(self, signal: AbortSignal, reason: str, options: Any = None) -> Any:
        from tau.agent.compaction.request import summary_complete, summary_options

        model = self._agent.state.model
        if options is None:
            options = summary_options(model, signal=signal, thinking_level=self._agent.state.thinking_level)

        def scheduled(attempt: int, max_attempts: int, delay_ms: int, error: str) -> None:
            self._bus.emit(
                {
                    "type": "summarization_retry_scheduled",
                    "attempt": attempt,
                    "maxAttempts": max_attempts,
                    "delayMs": delay_ms,
                    "errorMessage": error,
                }
            )

        return summary_complete(
            self._stream_fn, model, options, retry=retry_policy(self._settings), on_retry_scheduled=scheduled
        )

    async def _summarize(
        self,
        reason: str,
        will_retry: bool,
        signal: AbortSignal,
        custom_instructions: str | None,
        keep_recent_tokens: int | None = None,
    ) -> dict[str, Any] | None:
        """Prepare, ask extensions, summarize and append; the ``compaction_end`` result, or None."""
        from tau.agent.compaction.prepare import prepare_compaction
        from tau.agent.compaction.summary import compact

        branch = self._store.manager.get_branch()
        settings = self.settings()
        if keep_recent_tokens is not None:
            settings = dataclasses.replace(settings, keep_recent_tokens=keep_recent_tokens)
        preparation = prepare_compaction(branch, settings)
        if preparation is None:
            return None
        if reason != "manual":
            self._bus.emit({"type": "compaction_start", "reason": reason})
        self._started = True
        from_extension = False
        supplied = None
        if self._bus.hooks.has_handlers("session_before_compact"):
            answer = await self._bus.hooks.emit(
                {
                    "type": "session_before_compact",
                    "preparation": preparation,
                    "branchEntries": branch,
                    "customInstructions": custom_instructions,
                    "reason": reason,
                    "willRetry": will_retry,
                    "signal": signal,
                }
            )
            if answer and answer.get("cancel"):
                raise CompactionCancelled("Compaction cancelled")
            if answer and answer.get("compaction"):
                supplied, from_extension = answer["compaction"], True
        if signal.aborted:
            raise CompactionCancelled("Compaction cancelled")
        if supplied is None:
            cached = self.cached_summaries(
                reason, signal, settings, preparation.first_kept_entry_id, preparation.turn_start_entry_id
            )
            supplied = await compact(
                preparation,
                self.summary_complete(signal, reason),
                custom_instructions=custom_instructions,
                cached=cached,
            )
        if signal.aborted:
            raise CompactionCancelled("Compaction cancelled")
        manager = self._store.manager
        entry_id = manager.append_compaction(
            supplied["summary"],
            supplied["firstKeptEntryId"],
            supplied["tokensBefore"],
            supplied.get("details"),
            from_extension,
            supplied.get("usage"),
        )
        projection = self._store.refresh()
        result = {
            "summary": supplied["summary"],
            "firstKeptEntryId": supplied["firstKeptEntryId"],
            "tokensBefore": supplied["tokensBefore"],
            "estimatedTokensAfter": _estimate().estimate_messages_tokens(projection["messages"]),
            "usage": supplied.get("usage"),
            "details": supplied.get("details"),
        }
        await self._bus.emit_hook(
            {
                "type": "session_compact",
                "compactionEntry": manager.get_entry(entry_id),
                "fromExtension": from_extension,
                "reason": reason,
                "willRetry": will_retry,
            }
        )
        return result

    async def _compaction_failed(
        self, reason: str, error: BaseException, aborted: bool, from_extension: bool = False
    ) -> None:
        message = str(error) or "compaction failed"
        prefix = {
            "manual": "Compaction failed",
            "overflow": "Context overflow recovery failed",
            "threshold": "Auto-compaction failed",
        }
        error_message = None if aborted else f"{prefix[reason]}: {message}"
        # No "result" key: pi's is undefined, which JSON.stringify leaves out.
        event: dict[str, Any] = {
            "type": "compaction_end",
            "reason": reason,
            "aborted": aborted,
            "willRetry": False,
        }
        if error_message is not None:
            event["errorMessage"] = error_message
        self._bus.emit(event)
        await self._bus.emit_hook(
            {
                "type": "session_compact_failed",
                "reason": reason,
                "errorMessage": error_message,
                "aborted": aborted,
                "willRetry": False,
                "fromExtension": from_extension,
            }
        )

    async def compact(
        self, custom_instructions: str | None = None, *, keep_recent_tokens: int | None = None
    ) -> dict[str, Any]:
        """Compact now (``/compact``, the run aborted by the caller); returns the compaction result.

        ``keep_recent_tokens`` replaces ``compaction.keepRecentTokens`` for this compaction only (an
        extension that knows where a step of the work ended, like Online Context Compact).
        Raises ``RuntimeError`` when there is nothing to compact or the summary failed, ``ValueError``
        when ``keep_recent_tokens`` is not a non-negative integer.
        """
        signal = self._run.start("manual_compaction")
        self._bus.emit({"type": "compaction_start", "reason": "manual"})
        try:
            if self._agent.state.model is None:
                raise RuntimeError("No model selected")
            result = await self._summarize("manual", False, signal, custom_instructions, keep_recent_tokens)
            if result is None:
                branch = self._store.manager.get_branch()
                if branch and branch[-1].get("type") == "compaction":
                    raise RuntimeError("Already compacted")
                raise RuntimeError("Nothing to compact (session too small)")
        except (_summarization_error(), CompactionCancelled, RuntimeError, ValueError) as exc:
            aborted = signal.aborted or isinstance(exc, CompactionCancelled)
            self._run.end("manual_compaction")
            await self._compaction_failed("manual", exc, aborted)
            self._run.mark_idle_if_idle()
            raise RuntimeError(str(exc)) from exc
        self._run.end("manual_compaction")
        self._run.mark_idle_if_idle()
        self._bus.emit(
            {
                "type": "compaction_end",
                "reason": "manual",
                "result": result,
                "aborted": False,
                "willRetry": False,
            }
        )
        return result

    async def run_auto(self, reason: str, will_retry: bool) -> bool:
        """Threshold or overflow compaction; whether the run should continue afterwards."""
        if self._agent.state.model is None:
            return False
        signal = self._run.start("auto_compaction")
        self._started = False
        try:
            result = await self._summarize(reason, will_retry, signal, None)
        except (_summarization_error(), CompactionCancelled, RuntimeError, ValueError) as exc:
            if self._started:
                await self._compaction_failed(
                    reason, exc, signal.aborted or isinstance(exc, CompactionCancelled)
                )
            return False
        finally:
            self._run.end("auto_compaction")
            self._run.mark_idle_if_idle()
        if result is None:
            return False
        self._bus.emit(
            {
                "type": "compaction_end",
                "reason": reason,
                "result": result,
                "aborted": False,
                "willRetry": will_retry,
            }
        )
        return True if will_retry else self._agent.has_queued_messages()

    async def compact_before_next_response(self) -> list[dict[str, Any]]:
        """Between turns: compact when the projected context is over the threshold; the new messages."""
        manager = self._store.manager
        projection = self._store.projection.get()
        model = self._agent.state.model
        if model is None or model.context_window <= 0:
            return projection["messages"]
        settings = self.settings()
        if not settings.enabled:  # (before the estimate: it may read the whole context)
            return projection["messages"]
        tokens = _estimate().estimate_projected_context_tokens(projection, manager.get_branch())["tokens"]
        if not _settings_module().should_compact(tokens, model.context_window, settings):
            return projection["messages"]
        await self.run_auto("threshold", False)
        return self._store.projection.get()["messages"]

    async def check(self, message: dict[str, Any], skip_aborted: bool = True) -> bool:
        """pi's ``_checkCompaction``: overflow recovery or threshold compaction after a response."""
        settings = self.settings()
        if not settings.enabled:
            return False
        if skip_aborted and message.get("stopReason") == "aborted":
            return False
        model = self._agent.state.model
        same_model = model is not None and (model.provider, model.id) == (
            message.get("provider"),
            message.get("model"),
        )
        window = model.context_window if model is not None else 0
        branch = self._store.manager.get_branch()
        projection = self._store.projection.get()
        latest = latest_compaction(projection)
        if latest is not None and (message.get("timestamp") or 0) <= entry_ms(latest):
            return False
        entry_id = self._store.entry_id_of(message)
        projected = entry_id is None or any(
            item["sourceEntry"].get("id") == entry_id
            and any(m.get("role") == "assistant" for m in item["messages"])
            for item in reversed(projection["entries"])
        )
        index = _rindex(branch, entry_id) if entry_id else -1
        after = branch[index + 1 :] if index >= 0 else []
        edits_after = any(entry.get("type") == "context_edit" for entry in after)
        own_edits = [e for e in after if e.get("type") == "context_edit" and e.get("targetId") == entry_id]
        retained = entry_id is None or (
            not any(entry.get("type") == "compaction" for entry in after)
            and (not own_edits or own_edits[-1].get("replacement") is not None)
        )
        explicit = message.get("stopReason") == "error" and is_context_overflow(message)
        overflow = same_model and (
            (explicit and retained)
            or (projected and not edits_after and is_context_overflow(message, window))
        )
        length = same_model and projected and is_recoverable_length(message, model.max_tokens)
        if overflow or length:
            return await self._recover_overflow(message, overflow)
        tokens = self._context_tokens_after(message, projection, branch, latest)
        if tokens is not None and _settings_module().should_compact(tokens, window, settings):
            return await self.run_auto("threshold", False)
        return False

    async def _recover_overflow(self, message: dict[str, Any], overflow: bool) -> bool:
        if message.get("stopReason") == "stop":
            return await self.run_auto("overflow", False)
        if self.overflow_recovery_attempted:
            error = OVERFLOW_RETRY_FAILED if overflow else LENGTH_RETRY_FAILED
            self._bus.emit(
                {
                    "type": "compaction_end",
                    "reason": "overflow",
                    "aborted": False,
                    "willRetry": False,
                    "errorMessage": error,
                }
            )
            await self._bus.emit_hook(
                {
                    "type": "session_compact_failed",
                    "reason": "overflow",
                    "errorMessage": error,
                    "aborted": False,
                    "willRetry": False,
                    "fromExtension": False,
                }
            )
            return False
        self.overflow_recovery_attempted = True
        self._store.omit_attempt(message)
        return await self.run_auto("overflow", True)

    def _context_tokens_after(
        self,
        message: dict[str, Any],
        projection: dict[str, Any],
        branch: list[dict[str, Any]],
        latest: dict[str, Any] | None,
    ) -> int | None:
        if self._store.projection.has_context_edit(projection):
            return _estimate().estimate_projected_context_tokens(projection, branch)["tokens"]
        direct = _estimate().calculate_context_tokens(message["usage"]) if message.get("usage") else 0
        if message.get("stopReason") != "error" and direct:
            return direct
        messages = self._agent.state.messages
        estimate = _estimate().estimate_context_tokens(messages)
        index = estimate["lastUsageIndex"]
        if index is not None and latest is not None:
            used = messages[index]
            if used.get("role") == "assistant" and (used.get("timestamp") or 0) <= entry_ms(latest):
                return None
        return estimate["tokens"]

    async def branch_summary(
        self, entries: Any, signal: AbortSignal, custom: Any, replace: bool
    ) -> dict[str, Any]:
        """The summary of the branch left behind (``entries``): ``{summary, usage, details}``, or
        ``{aborted: True}``; raises ``RuntimeError`` when it failed."""
        from tau.agent.compaction.branch_summary import generate_branch_summary
        from tau.agent.compaction.settings import BranchSummarySettings

        model = self._agent.state.model
        settings = BranchSummarySettings.from_settings(self._settings.effective)
        compaction = self.settings()
        cached = self.cached_summaries(
            "branchSummary",
            signal,
            dataclasses.replace(compaction, reserve_tokens=settings.reserve_tokens),
            entries[0].get("id") if entries else None,
            branch=True,
        )
        result = await generate_branch_summary(
            entries,
            self.summary_complete(signal, "branchSummary"),
            context_window=model.context_window,
            reserve_tokens=settings.reserve_tokens,
            custom_instructions=custom,
            replace_instructions=bool(replace),
            cached=cached,
        )
        if result.aborted:
            return {"aborted": True}
        if result.error:
            raise RuntimeError(result.error)
        return {
            "summary": result.summary,
            "usage": result.usage,
            "details": {"readFiles": result.read_files or [], "modifiedFiles": result.modified_files or []},
        }

    def context_usage(self) -> dict[str, Any] | None:
        """pi's ``getContextUsage``: ``{tokens, contextWindow, percent}`` (``None`` values right after a compaction)."""
        # The session's cached projection: the same as building it from the branch, without the pass.
        return context_usage(
            self._agent.state.model, self._store.projection.get(), self._store.manager.get_branch()
        )
