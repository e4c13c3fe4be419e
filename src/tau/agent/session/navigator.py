"""Moving in the session tree and between session files (pi-host §2.8, pi ``AgentSessionRuntime``).

``navigate_tree`` (with an optional branch summary) stays in the same file; ``fork`` writes a new
file holding the path to the chosen entry; ``new_session`` starts an empty file; ``switch_session``
(``/resume``) continues in another file. pi tears its runtime down and builds a new one for the
last three; tau keeps the same session and points its store at the new file, then restores what a
session resumed at startup gets: the recorded model (when it still has credentials), the recorded
thinking level and the tool loadout the file's system messages declare. Extensions hear
``session_shutdown`` then ``session_start``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from tau.agent.agent import Agent
from tau.agent.session.bus import EventBus
from tau.agent.session.compaction import Compactor
from tau.agent.session.input_queues import InputQueues
from tau.agent.session.run_state import RunState
from tau.agent.session.selection import initial_thinking_level, record_initial_selection
from tau.agent.session.store import SessionStore
from tau.agent.session_setup import session_model
from tau.agent.settings import Settings
from tau.llm.messages import content_text
from tau.llm.registry import ModelRegistry
from tau.llm.stream import AbortSignal
from tau.session.manager import SessionManager

__all__ = ["Navigator"]


class Navigator:
    """Tree navigation, fork, new session and resume for one session.

    Args:
        store: the session file (and the one a resume adopts).
        agent: the agent (its model, thinking level, transcript and queues follow the file).
        bus: events and extension hooks.
        run: the run state (no navigation while a run or a compaction goes on).
        queues: the held input, dropped when the file changes.
        compactor: the branch summaries.
        registry: the models a resumed file may name.
        settings: the thinking-level defaults.
        abort: aborts the session's run and waits until it is idle.
        reload_tools: restores the tool loadout the transcript declares and applies it.
    """

    def __init__(
        self,
        store: SessionStore,
        agent: Agent,
        bus: EventBus,
        run: RunState,
        queues: InputQueues,
        compactor: Compactor,
        registry: ModelRegistry,
        settings: Settings,
        abort: Callable[[], Awaitable[None]],
        reload_tools: Callable[[], None],
    ) -> None:
        self._store = store
        self._agent = agent
        self._bus = bus
        self._run = run
        self._queues = queues
        self._compactor = compactor
        self._registry = registry
        self._settings = settings
        self._abort = abort
        self._reload_tools = reload_tools

    async def navigate_tree(
        self,
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
        if self._run.active or self._run.prompt_preflight > 0:
            raise RuntimeError("Wait for the current response to finish before navigating the session tree.")
        if self._run.is_compacting:
            raise RuntimeError(
                "Wait for the current compaction or tree navigation to finish before navigating the session tree."
            )
        from tau.agent.compaction.branch_summary import collect_entries_for_branch_summary

        manager = self._store.manager
        old_leaf = manager.get_leaf_id()
        if target_id == old_leaf:
            return {"cancelled": False}
        if summarize and self._agent.state.model is None:
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
        self,
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
        self, target: dict[str, Any], old_leaf: Any, summary: Any, from_extension: bool, label: Any
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
        self._reload_tools()
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

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
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

    async def new_session(self, *, parent_session: str | None = None) -> dict[str, Any]:
        """Start an empty session (pi ``/new``); returns ``{cancelled}``."""
        answer = await self._bus.emit_hook({"type": "session_before_switch", "reason": "new"})
        if answer and answer.get("cancel"):
            return {"cancelled": True}
        previous = self._store.manager.get_session_file()
        await self._shutdown("new", None)
        self._store.manager.new_session(parent_session=parent_session)
        await self._restart("new", previous)
        return {"cancelled": False}

    async def _shutdown(self, reason: str, target: str | None) -> None:
        await self._abort()
        event: dict[str, Any] = {"type": "session_shutdown", "reason": reason}
        if target is not None:
            event["targetSessionFile"] = target
        await self._bus.emit_hook(event)

    async def _restart(self, reason: str, previous: str | None) -> None:
        self._store.reset()
        self._queues.reset()
        self._agent.clear_queues()
        options = self._agent.stream_options
        if options is not None:
            options.session_id = self._store.manager.get_session_id()
        context = self._store.manager.build_session_context()
        self._agent.state.messages = context["messages"]
        record_initial_selection(self._store.manager, self._agent.state, bool(context["messages"]))
        self._reload_tools()
        event: dict[str, Any] = {"type": "session_start", "reason": reason}
        if previous is not None:
            event["previousSessionFile"] = previous
        await self._bus.emit_hook(event)

    async def switch_session(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Continue in the session file ``path``; returns ``{"cancelled": bool}``.

        ``session_before_switch {reason: "resume", targetSessionFile}`` handlers may cancel. Then,
        as pi: any run is aborted (its turn is kept in the file being left), extensions get
        ``session_shutdown {reason: "resume", targetSessionFile}``, the file is opened, and
        ``session_start {reason: "resume", previousSessionFile}`` announces it. Raises
        ``RuntimeError`` when the file is not a session, is locked by another process, or names a
        working directory that no longer exists (nothing is changed then).
        """
        target = str(path)
        answer = await self._bus.emit_hook(
            {"type": "session_before_switch", "reason": "resume", "targetSessionFile": target}
        )
        if answer and answer.get("cancel"):
            return {"cancelled": True}
        previous_manager: SessionManager = self._store.manager
        previous = previous_manager.get_session_file()
        same_file = previous is not None and os.path.realpath(previous) == os.path.realpath(target)
        if same_file:
            previous_manager.close()  # its lock would refuse the second writer
        manager = _open_session(target, self._store.cwd)
        await self._shutdown("resume", manager.get_session_file())
        if not same_file:
            previous_manager.close()
        self._adopt_manager(manager)
        await self._restart("resume", previous)
        return {"cancelled": False}

    def _adopt_manager(self, manager: SessionManager) -> None:
        self._store.adopt(manager)
        context = manager.build_session_context()
        recorded = session_model(manager.get_branch())
        model = self._registry.find(*recorded) if recorded else None
        if model is None or not self._registry.has_configured_auth(model):
            model = self._agent.state.model  # pi falls back to the default model; tau keeps the current one
        self._agent.state.model = model
        self._agent.state.thinking_level = initial_thinking_level(
            manager, self._settings, model, None, context
        )


def _open_session(path: str, fallback_cwd: str) -> SessionManager:
    try:
        manager = SessionManager.open(path)
    except Exception as exc:  # the file's own error (not a session, locked) says what is wrong
        raise RuntimeError(f"Cannot resume {path}: {exc}") from exc
    cwd = manager.get_cwd()
    if cwd and not os.path.isdir(cwd):
        manager.close()
        raise RuntimeError(
            f"Stored session working directory does not exist: {cwd}\n"
            f"Session file: {path}\nCurrent working directory: {fallback_cwd}"
        )
    return manager
