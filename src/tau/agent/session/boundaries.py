"""The actionable ``turn_end`` and ``agent_before_settle`` boundaries (pi-host §4.7).

Handlers see the drafts proposed so far and a context preview: the session's projection with the
drafts applied. Afterwards the drafts are appended to the real session in order (each announced
with ``entry_appended``). A requested continuation is honoured only when the context can continue
(the model has something to answer), else pi's error is reported.

The preview is built after every handler, so it must not cost a pass over the session: without
drafts it is the session's cached projection; drafts that only append (``custom``,
``custom_message``) extend it; any other draft (a context edit, a compaction) is applied to an
in-memory copy of the branch, as pi does.
"""

from __future__ import annotations

from typing import Any

from tau.agent.agent import Agent
from tau.agent.session.bus import EventBus
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.projection_cache import Conversion
from tau.agent.session.run_state import RunState
from tau.agent.session.store import SessionStore
from tau.session.errors import SessionError, SessionWriteError
from tau.session.manager import SessionManager
from tau.session.projection import append_to_projection

__all__ = ["Boundaries", "apply_drafts"]

# Drafts whose entries only add to the end of the projection.
_APPENDING_DRAFTS = frozenset({"custom", "custom_message"})


def apply_drafts(manager: SessionManager, drafts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append boundary drafts (custom, custom_message, context_edit, compaction) to ``manager``.

    Raises ``ValueError`` for a draft that cannot be applied.
    """
    appended = []
    for draft in drafts:
        kind = draft.get("type") if isinstance(draft, dict) else None
        try:
            if kind == "custom":
                entry_id = manager.append_custom_entry(draft["customType"], draft.get("data"))
            elif kind == "custom_message":
                entry_id = manager.append_custom_message_entry(
                    draft["customType"], draft["content"], bool(draft.get("display")), draft.get("details")
                )
            elif kind == "context_edit":
                entry_id = manager.append_context_edit(draft["targetId"], draft.get("replacement"))
            elif kind == "compaction":
                from tau.agent.compaction.estimate import estimate_projected_context_tokens

                tokens = estimate_projected_context_tokens(
                    manager.build_session_projection(), manager.get_branch()
                )
                entry_id = manager.append_compaction(
                    draft["summary"],
                    draft.get("firstKeptEntryId"),
                    tokens["tokens"],
                    draft.get("details"),
                    True,
                    draft.get("usage"),
                )
            else:
                raise ValueError(f"unknown boundary draft type {kind!r}")
        except SessionWriteError:
            raise  # the draft is in the session, unsaved: a write failure, not a bad draft
        except (KeyError, SessionError) as exc:
            raise ValueError(f"invalid boundary draft {draft!r}: {exc}") from exc
        entry = manager.get_entry(entry_id)
        if entry is not None:
            appended.append(entry)
    return appended


class Boundaries:
    """The ``turn_end`` and ``agent_before_settle`` boundaries of one session.

    Args:
        store: the session file and its projection (drafts are committed to it).
        agent: the agent (its queued messages can continue a run).
        bus: the extension hooks and the ``entry_appended`` events.
        run: the turn index and outcome, and whether a run is going on.
        queues: the custom messages held until the turn ends.
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        bus: EventBus,
        run: RunState,
        queues: InputQueues,
    ) -> None:
        self._store = store
        self._agent = agent
        self._bus = bus
        self._run = run
        self._queues = queues
        self._before_settle = False
        self._abort_during_settle = False
        self._conversion = Conversion()

    def abort(self) -> None:
        """An abort while the ``agent_before_settle`` handlers run: the run settles after them."""
        if self._before_settle:
            self._abort_during_settle = True

    def preview_manager(self, drafts: list[dict[str, Any]]) -> SessionManager:
        header = self._store.manager.get_header()
        if not header:
            raise ValueError("Session header is missing")
        preview = SessionManager.in_memory(
            self._store.cwd, entries=[header, *self._store.manager.get_branch()]
        )
        apply_drafts(preview, drafts)
        return preview

    def preview_projection(self, drafts: list[dict[str, Any]]) -> dict[str, Any]:
        """The projection of the session with ``drafts`` applied (lists the caller may keep)."""
        if not all(isinstance(d, dict) and d.get("type") in _APPENDING_DRAFTS for d in drafts):
            return self.preview_manager(drafts).build_session_projection()
        header = self._store.manager.get_header()
        if not header:
            raise ValueError("Session header is missing")
        current = self._store.projection.get()
        projection = {**current, "entries": list(current["entries"]), "messages": list(current["messages"])}
        if drafts:
            # The drafts' entries as the session would make them, parented on its leaf.
            leaf = self._store.manager.get_leaf_entry()
            scratch = SessionManager.in_memory(self._store.cwd, entries=[header, *([leaf] if leaf else [])])
            for entry in apply_drafts(scratch, drafts):
                append_to_projection(projection, entry)
        return projection

    def context(self, drafts: list[dict[str, Any]], boundary: str) -> dict[str, Any]:
        projection = self.preview_projection(drafts)
        llm = self._conversion.convert(projection["messages"])
        final_role = llm[-1].get("role") if llm else None
        has_context = any(message.get("role") != "system" for message in llm)
        queued = self._agent.has_queued_messages()
        can_continue = (
            (has_context and final_role != "assistant")
            or bool(self._queues.custom)
            or (queued if boundary == "turn_end" else final_role == "assistant" and queued)
        )
        return {
            "contextEntries": projection["entries"],
            "contextMessages": projection["messages"],
            "llmMessages": llm,
            "pendingMessages": [*self._agent.peek_queued_messages(), *self._queues.custom],
            "canContinue": can_continue,
        }

    def _commit_drafts(self, drafts: list[dict[str, Any]]) -> None:
        try:
            appended = apply_drafts(self._store.manager, drafts)
        except SessionWriteError as exc:
            if not self._store.absorb_failure(exc):
                raise
            appended = []
        self._store.refresh()
        for entry in appended:
            self._bus.emit({"type": "entry_appended", "entry": entry})

    def _report_invalid_continuation(self, event: str) -> None:
        self._bus.emit_error(
            "<boundary>", event, f"{event} requested continuation without runnable model context"
        )

    async def _emit_boundary(self, event: dict[str, Any], boundary: str) -> dict[str, Any]:
        async def build(drafts: list[dict[str, Any]]) -> dict[str, Any]:
            return self.context(drafts, boundary)

        result = await self._bus.hooks.emit_boundary(event, build)
        if not result.get("valid", True):
            return {"entries": [], "continue": False}
        return result

    async def finish_turn(self, turn: Any, signal: Any) -> dict[str, Any] | None:
        continues = await self._dispatch_turn_end(turn.message, turn.tool_results)
        return {"action": "continue"} if continues and self._store.save_failure is None else None

    async def _dispatch_turn_end(
        self, message: dict[str, Any], tool_results: list[dict[str, Any]]
    ) -> bool:
        reason = message.get("stopReason")
        self._run.last_outcome = (
            "aborted" if reason == "aborted" else "error" if reason == "error" else "completed"
        )
        if not self._bus.hooks.has_handlers("turn_end"):
            return False
        entry_id = self._store.entry_id_of(message)
        if entry_id is None:
            self._bus.emit_error(
                "<boundary>", "turn_end", "turn_end could not resolve the persisted assistant entry ID"
            )
            return False
        result_ids = [
            found for result in tool_results if (found := self._store.entry_id_of(result)) is not None
        ]
        event = {
            "type": "turn_end",
            "turnIndex": self._run.turn_index,
            "message": message,
            "toolResults": tool_results,
            "messageEntryId": entry_id,
            "toolResultEntryIds": result_ids,
            "outcome": self._run.last_outcome,
        }
        result = await self._emit_boundary(event, "turn_end")
        self._commit_drafts(list(result.get("entries") or []))
        if result.get("continue") and not self.context([], "turn_end")["canContinue"]:
            self._report_invalid_continuation("turn_end")
            return False
        return bool(result.get("continue"))

    async def before_settle(self) -> bool:
        if not self._bus.hooks.has_handlers("agent_before_settle"):
            return self._agent.has_queued_messages()
        self._before_settle = True
        self._abort_during_settle = False
        try:
            event = {"type": "agent_before_settle", "outcome": self._run.last_outcome}
            result = await self._emit_boundary(event, "agent_before_settle")
            self._commit_drafts(list(result.get("entries") or []))
            self._store.append_custom_messages(self._queues.take_custom())
            final = self.context([], "agent_before_settle")
            if self._abort_during_settle:
                return False
            should_continue = bool(result.get("continue")) or self._agent.has_queued_messages()
            if should_continue and not final["canContinue"]:
                if result.get("continue"):
                    self._report_invalid_continuation("agent_before_settle")
                return False
            return should_continue
        finally:
            self._before_settle = False
