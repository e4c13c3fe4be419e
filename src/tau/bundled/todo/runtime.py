"""The ``todo`` extension wired to tau's public extension API.

``extension(tau)`` registers the model tool ``todo`` (namespace ``tasks``), the human command
``/todo``, and handlers for the session's life: ``session_start`` (a new store, recovered from the
branch), ``session_tree`` and ``session_compact`` (recovered again), ``session_shutdown`` and the
``context`` hook (the snapshot block). Every reconcile retires an open overlay.

Other extensions read the checklist through the event bus: ``await tau.events.emit(READ_CHANNEL,
request)`` fills in ``request["todo"]`` (see :meth:`TodoExtension.on_read`). todo-loop reads it so.

Fail closed: when a different ``todo`` tool is already visible (``get_all_tools()``: other
parameters or another source), nothing is registered, nothing is appended, and the user is told
once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau.bundled.todo import schema
from tau.bundled.todo.context import Blocks
from tau.bundled.todo.results import Reply, snapshot
from tau.bundled.todo.store import Store
from tau.common.jsstr import ms_now
from tau.extension import ToolDefinition, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from tau.bundled.todo.overlay import TodoOverlay

__all__ = ["READ_CHANNEL", "STATUS_KEY", "USAGE", "TodoExtension", "extension"]

READ_CHANNEL = "pi-todo:read"
STATUS_KEY = "pi-todo"
USAGE = (
    "/todo opens the checklist in the interactive mode. Here the model keeps it with the todo tool: "
    '{"action":"list"} first, then add, update, remove or clear with the current baseRevision. '
    "/todo reconcile re-reads the checklist after the session file was repaired."
)


class TodoExtension:
    """One loaded ``todo`` extension: its store for the current session, and its open overlay."""

    def __init__(self, tau: Any) -> None:
        self.tau = tau
        self.store: Store | None = None
        self.blocks = Blocks()
        self.overlay: TodoOverlay | None = None
        self.collision: str | None = None
        self._told = False

    # ------------------------------------------------------------------------------ registration

    def install(self) -> None:
        self.collision = self._find_collision()
        self.tau.on("session_start", self.on_session_start)
        if self.collision is not None:
            return
        self.tau.register_tool(
            ToolDefinition(
                name=schema.NAME,
                label="Todo",
                description=schema.DESCRIPTION,
                parameters=schema.PARAMETERS,
                execute=self.execute,
                prompt_snippet=schema.SNIPPET,
                prompt_guidelines=list(schema.GUIDELINES),
                namespace=schema.NAMESPACE,
                # The checklist is the plan Online Context Compact watches: a codemode script's call
                # would get a nested id no turn reports, so its boundary could never compact (seed 003).
                exposure="model-only",
            )
        )
        self.tau.register_command(
            "todo", "Show and edit the todo checklist (/todo reconcile: re-read it)", self.command
        )
        self.tau.on("session_tree", self.on_reconcile)
        self.tau.on("session_compact", self.on_reconcile)
        self.tau.on("session_shutdown", self.on_shutdown)
        self.tau.on("context", self.on_context)
        self.tau.events.on(READ_CHANNEL, self.on_read)

    def _find_collision(self) -> str | None:
        """The source of a different visible ``todo`` definition, if there is one."""
        try:
            tools = self.tau.get_all_tools()
        except RuntimeError:  # not bound to a session yet: nothing else is visible
            return None
        for tool in tools:
            if tool.get("name") != schema.NAME:
                continue
            source = tool.get("sourceInfo") or {}
            ours = source.get("path") == self.tau.path and tool.get("parameters") == schema.PARAMETERS
            if not ours:
                return str(source.get("path") or source.get("source") or "unknown source")
        return None

    # ---------------------------------------------------------------------------------- lifecycle

    def on_session_start(self, event: Any, ctx: Any) -> None:
        if self.collision is not None:
            if not self._told:
                self._told = True
                ctx.ui.notify(
                    f'todo: another "todo" tool is active ({self.collision}); pi-todo not loaded', "warning"
                )
            return
        self._retire_overlay()
        self.blocks.forget()
        self.store = Store(
            ctx.session_manager, self.tau.append_entry, warn=lambda text: ctx.ui.notify(text, "warning")
        )
        self.store.recover()
        self._show_status(ctx)

    def on_reconcile(self, event: Any, ctx: Any) -> None:
        self._retire_overlay()
        self._store(ctx).recover()
        self._show_status(ctx)

    def on_shutdown(self, event: Any, ctx: Any) -> None:
        self._retire_overlay()

    def on_context(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        store = self._store(ctx)
        store.refresh()
        messages = self.blocks.transform(
            event.messages,
            active=schema.NAME in self.tau.get_active_tools(),
            state=store.state,
            note=store.note,
            reason=store.reason,
            recorded=store.recorded,
            now_ms=ms_now(),
        )
        return None if messages is None else {"messages": messages}

    def on_read(self, request: Any) -> None:
        """``pi-todo:read`` on the event bus: the checklist as this extension reads it.

        Fills ``request["todo"]`` with ``{"state": a copy of {schemaVersion, revision, tasks} or None,
        "reason": why the storage is unavailable or None, "mode": the storage mode, "recorded": whether
        a snapshot backs the state (``False``: no list was ever made on this branch, the state is the
        implicit empty one)}``. ``request["ctx"]`` (optional) finds the session when no
        ``session_start`` has come yet.
        """
        if not isinstance(request, dict):
            return
        ctx = request.get("ctx")
        if self.store is None and ctx is None:
            return
        store = self._store(ctx)
        store.refresh()
        state = snapshot(store.state) if store.state is not None else None
        request["todo"] = {
            "state": state,
            "reason": store.reason,
            "mode": store.mode,
            "recorded": store.recorded,
        }

    def _store(self, ctx: Any) -> Store:
        """The store of the current session (made on first use when no ``session_start`` came)."""
        if self.store is None:
            self.store = Store(ctx.session_manager, self.tau.append_entry)
            self.store.recover()
        return self.store

    def _retire_overlay(self) -> None:
        if self.overlay is not None:
            self.overlay.retire()
            self.overlay = None

    def _show_status(self, ctx: Any) -> None:
        if self.store is not None:
            # No list yet: nothing to show (a fresh session's footer said `todo 0/0 (not yet persisted)`).
            state = self.store.state
            empty = state is not None and not state["tasks"]
            ctx.ui.set_status(STATUS_KEY, None if empty else self.store.status_text())

    # ------------------------------------------------------------------------------------- tool

    async def execute(
        self, tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        store = self._store(ctx)
        params = params if isinstance(params, dict) else {}
        reply = store.list() if params.get("action") == "list" else store.mutate(params)
        self._show_status(ctx)
        if self.overlay is not None:
            self.overlay.request_render()
        return _tool_result(reply)

    # ---------------------------------------------------------------------------------- command

    async def command(self, args: str, ctx: Any) -> None:
        store = self._store(ctx)
        if args.strip() == "reconcile":
            self._retire_overlay()
            store.reconcile()
            self._show_status(ctx)
            text = store.status_text() if store.state is not None else f"todo unavailable: {store.reason}"
            ctx.ui.notify(text, "info" if store.state is not None else "warning")
            return
        if ctx.mode != "tui":
            ctx.ui.notify(f"{USAGE}\n{store.status_text()}", "info")
            return
        from tau.bundled.todo.overlay import TodoOverlay  # the /todo overlay: interactive mode only

        overlay = TodoOverlay(_StatusSource(store, lambda: self._show_status(ctx)))
        self.overlay = overlay
        await ctx.ui.custom(overlay)
        if self.overlay is overlay:
            self.overlay = None
        if not overlay.closed and not overlay.rendered:  # this UI could not show it
            ctx.ui.notify(f"{USAGE}\n{store.status_text()}", "info")


class _StatusSource:
    """The store as the overlay sees it; every edit refreshes the status line."""

    def __init__(self, store: Store, after_edit: Any) -> None:
        self._store = store
        self._after_edit = after_edit

    @property
    def state(self) -> Any:
        return self._store.state

    @property
    def reason(self) -> str | None:
        return self._store.reason

    @property
    def note(self) -> str | None:
        return self._store.note

    def mutate(self, params: dict[str, Any]) -> Reply:
        reply = self._store.mutate(params)
        self._after_edit()
        return reply


def _tool_result(reply: Reply) -> ToolResult:
    result = ToolResult(
        content=[{"type": "text", "text": reply.text}], details=reply.details, is_error=reply.is_error
    )
    if reply.structured is not None:
        result.structured_content = reply.structured
    return result


def extension(tau: Any) -> None:
    """The factory tau's loader calls (bundled name ``todo``)."""
    TodoExtension(tau).install()
