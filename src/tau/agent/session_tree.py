"""Moving in the session tree: ``navigate_tree`` (with an optional branch summary), ``fork``, ``new_session``.

pi-host §2.8. Navigation stays in the same file; a fork writes a new file holding the path to the
chosen entry; a new session starts an empty file. Fork and new session replace the session manager
of this :class:`~tau.agent.session.AgentSession` in place and announce it to extensions with
``session_shutdown`` then ``session_start`` (pi tears the runtime down and builds a new one).
"""

from __future__ import annotations

from typing import Any

from tau.llm.messages import content_text
from tau.llm.stream import AbortSignal
from tau.session.manager import SessionManager

__all__ = ["TreeMixin"]


class TreeMixin:
    """Tree operations of :class:`~tau.agent.session.AgentSession`."""

    # state of the session these methods set (declared with its type in AgentSession.__init__)
    _steering_texts: list[str]
    _follow_up_texts: list[str]

    async def navigate_tree(
        self: Any,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Move the leaf to ``target_id``; returns ``{cancelled, editorText?, summaryEntry?, aborted?}``.

        A user or custom message target moves the leaf to its parent and gives its text back
        (``editorText``); any other target becomes the leaf. With ``summarize`` the branch left
        behind is summarized into a ``branch_summary`` entry at the new position.
        """
        if self.is_streaming or self._run.prompt_preflight > 0:
            raise RuntimeError("Wait for the current response to finish before navigating the session tree.")
        if self.is_compacting:
            raise RuntimeError(
                "Wait for the current compaction or tree navigation to finish before navigating the session tree."
            )
        from tau.agent.compaction.branch_summary import collect_entries_for_branch_summary

        manager = self._store.manager
        old_leaf = manager.get_leaf_id()
        if target_id == old_leaf:
            return {"cancelled": False}
        if summarize and self.agent.state.model is None:
            raise RuntimeError("No model available for summarization")
        target = manager.get_entry(target_id)
        if target is None:
            raise RuntimeError(f"Entry {target_id} not found")
        entries, common = collect_entries_for_branch_summary(manager, old_leaf, target_id)
        signal = self._run.start("branch_summary")
        try:
            decision = await self._before_tree(
                target_id,
                old_leaf,
                common,
                entries,
                summarize,
                custom_instructions,
                replace_instructions,
                label,
                signal,
            )
            if decision.get("cancel"):
                return {"cancelled": True}
            custom_instructions = decision.get("customInstructions", custom_instructions)
            replace_instructions = decision.get("replaceInstructions", replace_instructions)
            label = decision.get("label", label)
            summary, from_extension = decision.get("summary") if summarize else None, True
            if summary is None and summarize and entries:
                from_extension = False
                summary = await self._compactor.branch_summary(
                    entries, signal, custom_instructions, replace_instructions
                )
                if summary.get("aborted"):
                    return {"cancelled": True, "aborted": True}
            return await self._move_leaf(target, old_leaf, summary, from_extension, label)
        finally:
            self._run.end("branch_summary", signal)
            self._run.mark_idle_if_idle()

    async def _before_tree(
        self: Any,
        target_id: str,
        old_leaf: Any,
        common: Any,
        entries: Any,
        summarize: bool,
        custom: Any,
        replace: bool,
        label: Any,
        signal: AbortSignal,
    ) -> dict[str, Any]:
        if not self._bus.hooks.has_handlers("session_before_tree"):
            return {}
        preparation = {
            "targetId": target_id,
            "oldLeafId": old_leaf,
            "commonAncestorId": common,
            "entriesToSummarize": entries,
            "userWantsSummary": summarize,
            "customInstructions": custom,
            "replaceInstructions": replace,
            "label": label,
        }
        answer = await self._bus.hooks.emit(
            {"type": "session_before_tree", "preparation": preparation, "signal": signal}
        )
        return answer or {}

    async def _move_leaf(
        self: Any, target: dict[str, Any], old_leaf: Any, summary: Any, from_extension: bool, label: Any
    ) -> dict[str, Any]:
        manager = self._store.manager
        editor_text = None
        if target.get("type") == "message" and (target.get("message") or {}).get("role") == "user":
            new_leaf, editor_text = (
                target.get("parentId"),
                content_text(target["message"].get("content") or "", ""),
            )
        elif target.get("type") == "custom_message":
            new_leaf, editor_text = target.get("parentId"), content_text(target.get("content") or "", "")
        else:
            new_leaf = target["id"]
        summary_entry = None
        text = summary.get("summary") if summary else None
        if text:
            summary_id = manager.branch_with_summary(
                new_leaf, text, summary.get("details"), from_extension, summary.get("usage")
            )
            summary_entry = manager.get_entry(summary_id)
            if label:
                manager.append_label_change(summary_id, label)
        elif new_leaf is None:
            manager.reset_leaf()
        else:
            manager.branch(new_leaf)
        if label and not text:
            manager.append_label_change(target["id"], label)
        self._store.refresh()
        self._restore_tools_from_transcript()
        self._apply_loadout()
        self._run.end("branch_summary")
        await self._bus.emit_hook(
            {
                "type": "session_tree",
                "newLeafId": manager.get_leaf_id(),
                "oldLeafId": old_leaf,
                "summaryEntry": summary_entry,
                "fromExtension": from_extension if text else None,
            }
        )
        result: dict[str, Any] = {"cancelled": False}
        if editor_text is not None:
            result["editorText"] = editor_text
        if summary_entry is not None:
            result["summaryEntry"] = summary_entry
        return result

    async def fork(self: Any, entry_id: str, position: str = "before") -> dict[str, Any]:
        """Continue in a new session file holding the path up to ``entry_id`` (pi ``/fork``, ``/clone``).

        ``position="before"`` needs a user message: the new leaf is its parent and its text is
        returned (``selectedText``); ``"at"`` keeps the entry. Returns ``{cancelled, selectedText?}``.
        """
        answer = await self._bus.emit_hook(
            {"type": "session_before_fork", "entryId": entry_id, "position": position}
        )
        if answer and answer.get("cancel"):
            return {"cancelled": True}
        manager: SessionManager = self._store.manager
        selected = manager.get_entry(entry_id)
        if selected is None:
            raise RuntimeError("Invalid entry ID for forking")
        selected_text = None
        if position == "at":
            leaf = selected["id"]
        else:
            if selected.get("type") != "message" or (selected.get("message") or {}).get("role") != "user":
                raise RuntimeError("Invalid entry ID for forking")
            leaf = selected.get("parentId")
            selected_text = content_text(selected["message"].get("content") or "", "")
        previous = manager.get_session_file()
        await self._shutdown("fork", None)
        if leaf is None:
            manager.new_session(parent_session=previous)
        else:
            manager.create_branched_session(leaf)
        await self._restart("fork", previous)
        result: dict[str, Any] = {"cancelled": False}
        if selected_text is not None:
            result["selectedText"] = selected_text
        return result

    async def new_session(self: Any, *, parent_session: str | None = None) -> dict[str, Any]:
        """Start an empty session (pi ``/new``); returns ``{cancelled}``."""
        answer = await self._bus.emit_hook({"type": "session_before_switch", "reason": "new"})
        if answer and answer.get("cancel"):
            return {"cancelled": True}
        previous = self._store.manager.get_session_file()
        await self._shutdown("new", None)
        self._store.manager.new_session(parent_session=parent_session)
        await self._restart("new", previous)
        return {"cancelled": False}

    async def _shutdown(self: Any, reason: str, target: str | None) -> None:
        await self.abort()
        event: dict[str, Any] = {"type": "session_shutdown", "reason": reason}
        if target is not None:
            event["targetSessionFile"] = target
        await self._bus.emit_hook(event)

    async def _restart(self: Any, reason: str, previous: str | None) -> None:
        self._store.reset()
        self._queues.reset()
        self.agent.clear_queues()
        self.agent.stream_options.session_id = self._store.manager.get_session_id()
        context = self._store.manager.build_session_context()
        self._has_existing = bool(context["messages"])
        self.agent.state.messages = context["messages"]
        self._record_initial_selection()
        self._restore_tools_from_transcript()
        self._apply_loadout()
        event: dict[str, Any] = {"type": "session_start", "reason": reason}
        if previous is not None:
            event["previousSessionFile"] = previous
        await self._bus.emit_hook(event)
