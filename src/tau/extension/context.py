"""``ctx``: what a handler, a tool and a command may know and do (pi's ``ExtensionContext``).

Every value is read when asked for, so a ctx kept by a handler follows the session (its model, its
signal, the current session file). After the session is replaced or the extensions reloaded, the
runner marks old contexts stale and every access raises ``RuntimeError``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.agent.hooks import resolve

if TYPE_CHECKING:
    from tau.extension.runner import ExtensionRunner
    from tau.extension.ui import ExtensionUI

__all__ = ["ExtensionCommandContext", "ExtensionContext", "ExtensionToolContext", "ReadonlySessionManager"]

_background: set[asyncio.Future[Any]] = set()


async def _drive(coro: Any, waiting: Any) -> Any:
    """Finish a coroutine whose first step already ran: wait for what it waits on, then resume it.

    This is what an asyncio Task does for a coroutine; a cancellation of the driver is passed on.
    """
    while True:
        resume, value = coro.send, None
        try:
            if waiting is None:
                await asyncio.sleep(0)
            else:
                waiting._asyncio_future_blocking = False  # what a Task does before it waits
                await asyncio.wait([waiting])
        except asyncio.CancelledError as exc:
            if waiting is not None and not waiting.done():
                waiting.cancel()  # the coroutine sees its own await cancelled
            else:
                resume, value = coro.throw, exc
        try:
            waiting = resume(value)
        except StopIteration as stop:
            return stop.value


def fire_and_forget(value: Any, on_error: Callable[[BaseException], None] | None = None) -> None:
    """Start an awaitable without waiting for it (pi's ``void promise``).

    A coroutine runs at once up to its first real suspension, as a JavaScript async function does,
    so work it does synchronously (queueing a message) happens before the caller goes on.
    """
    if not inspect.isawaitable(value):
        return
    if inspect.iscoroutine(value):
        try:
            waiting = value.send(None)
        except StopIteration:
            return
        except Exception as exc:
            if on_error is not None:
                on_error(exc)
            return
        future: asyncio.Future[Any] = asyncio.ensure_future(_drive(value, waiting))
    else:
        future = asyncio.ensure_future(value)
    _background.add(future)

    def done(task: asyncio.Future[Any]) -> None:
        _background.discard(task)
        if not task.cancelled() and task.exception() is not None and on_error is not None:
            on_error(task.exception())  # type: ignore[arg-type]

    future.add_done_callback(done)


class ReadonlySessionManager:
    """The read-only part of the session manager that extensions get (pi-host §2.7).

    It always reads the session's current manager, so it stays right after ``/new`` or a fork.
    Entries are the store's own dicts: treat them as read-only.
    """

    def __init__(self, get_manager: Callable[[], Any]) -> None:
        self._get = get_manager

    def get_cwd(self) -> str:
        return self._get().get_cwd()

    def get_session_dir(self) -> str:
        return self._get().get_session_dir()

    def get_session_id(self) -> str:
        return self._get().get_session_id()

    def get_session_file(self) -> str | None:
        return self._get().get_session_file()

    def get_leaf_id(self) -> str | None:
        return self._get().get_leaf_id()

    def get_leaf_entry(self) -> dict[str, Any] | None:
        return self._get().get_leaf_entry()

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        return self._get().get_entry(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        return self._get().get_label(entry_id)

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        return self._get().get_branch(from_id)

    def build_context_entries(self) -> list[dict[str, Any]]:
        return self._get().build_context_entries()

    def build_session_projection(self) -> dict[str, Any]:
        return self._get().build_session_projection()

    def get_header(self) -> dict[str, Any] | None:
        return self._get().get_header()

    def get_entries(self) -> list[dict[str, Any]]:
        return self._get().get_entries()

    def get_tree(self) -> list[dict[str, Any]]:
        return self._get().get_tree()

    def get_session_name(self) -> str | None:
        return self._get().get_session_name()


class ExtensionContext:
    """Given to every handler as its second argument.

    Attributes (read when accessed): ``ui``, ``mode`` (``"tui" | "rpc" | "json" | "print" | "sdk"``),
    ``has_ui`` (true in the interactive and RPC modes), ``cwd``, ``session_manager`` (read-only view),
    ``model_registry`` (``find``, ``complete``, ...), ``model``, ``thinking_level``, ``signal`` (the
    running request's :class:`~tau.llm.stream.AbortSignal`, or ``None`` when idle).
    """

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner

    def _host(self) -> Any:
        return self._runner.require_host()

    @property
    def ui(self) -> ExtensionUI:
        self._runner.assert_active()
        return self._runner.ui

    @property
    def mode(self) -> str:
        self._runner.assert_active()
        return self._runner.mode

    @property
    def has_ui(self) -> bool:
        self._runner.assert_active()
        return self._runner.mode in ("tui", "rpc")

    @property
    def cwd(self) -> str:
        self._runner.assert_active()
        return self._runner.cwd

    @property
    def session_manager(self) -> ReadonlySessionManager:
        return ReadonlySessionManager(lambda: self._host().session_manager)

    @property
    def model_registry(self) -> Any:
        return self._host().model_registry

    @property
    def model(self) -> Any:
        return self._host().model

    @property
    def thinking_level(self) -> str:
        return self._host().get_thinking_level()

    @property
    def signal(self) -> Any:
        return self._host().signal

    def is_idle(self) -> bool:
        return bool(self._host().is_idle())

    def is_project_trusted(self) -> bool:
        self._runner.assert_active()
        return self._runner.trusted

    def has_pending_messages(self) -> bool:
        return bool(self._host().has_pending_messages())

    def has_waiting_input(self) -> bool:
        """Whether a human message waits to be sent (tau only): a queued steer or follow-up, a prompt
        held until the ``agent_settled`` handlers return, or the next prompt of ``tau -p P1 P2 …``."""
        host = self._host()
        waiting = getattr(host, "has_waiting_input", None)
        return bool(waiting() if waiting is not None else host.has_pending_messages())

    def abort(self) -> None:
        """Abort the current run (returns at once; the run ends with ``stopReason: "aborted"``)."""
        fire_and_forget(self._host().abort())

    def shutdown(self) -> None:
        """Ask the mode to end tau gracefully once the current work is done."""
        self._runner.assert_active()
        self._runner.request_shutdown()

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{"tokens": int | None, "contextWindow": int, "percent": float | None}``, or ``None``."""
        return self._host().get_context_usage()

    def get_system_prompt(self) -> str:
        return self._host().get_system_prompt()

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        on_complete: Callable[[Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        keep_recent_tokens: int | None = None,
    ) -> None:
        """Start a compaction without waiting for it; ``on_complete(result)`` or ``on_error(exc)`` follows.

        ``keep_recent_tokens`` (tau only) replaces ``compaction.keepRecentTokens`` for this compaction.
        """
        host = self._host()

        async def run() -> None:
            try:
                if keep_recent_tokens is None:
                    result = await resolve(host.compact(custom_instructions))
                else:
                    result = await resolve(
                        host.compact(custom_instructions, keep_recent_tokens=keep_recent_tokens)
                    )
            except Exception as exc:  # reported to the caller's callback, as pi does
                if on_error is not None:
                    await resolve(on_error(exc))
                return
            if on_complete is not None:
                await resolve(on_complete(result))

        fire_and_forget(run())


class ExtensionToolContext(ExtensionContext):
    """Given to an extension tool's ``execute``: the handler ctx plus nested tool calls.

    Attributes the extension context lacks (``shell_path``, ``session_environment()``, ...) come from
    the built-in :class:`~tau.tools.ToolContext` of the call, ``tool_context``, so a wrapped built-in
    tool can be given this ctx as it is.
    """

    def __init__(self, runner: ExtensionRunner, tool_call_id: str, signal: Any, tool_context: Any) -> None:
        super().__init__(runner)
        self.tool_call_id = tool_call_id
        self.tool_context = tool_context
        self._call_signal = signal

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or self.__dict__.get("tool_context") is None:
            raise AttributeError(name)
        return getattr(self.__dict__["tool_context"], name)

    @property
    def tools(self) -> list[Any]:
        """The tools ``execute_tool`` can call (the active direct tools and the callable ones)."""
        host = self._host()
        getter = getattr(host, "get_callable_tools", None)
        if getter is not None:
            return list(getter())
        active = set(host.get_active_tool_names())
        return [tool for tool in host.get_all_tools() if tool.name in active]

    async def execute_tool(
        self, name: str, args: Any, *, signal: Any = None, on_update: Callable[[Any], Any] | None = None
    ) -> Any:
        """Run another tool as part of this call; it gets the id ``<this id>/<n>``.

        It goes through validation and the ``tool_call``/``tool_result`` handlers, its
        ``tool_execution_*`` events carry ``parentToolCallId``, and it never raises for a tool
        failure: the outcome (``tool_call``, ``result``, ``is_error``, ``duration_ms``) says so.
        """
        return await resolve(
            self._host().execute_tool(
                self.tool_call_id, name, args, signal=signal or self._call_signal, on_update=on_update
            )
        )


class ExtensionCommandContext(ExtensionContext):
    """Given to command handlers: the handler ctx plus session control."""

    async def wait_for_idle(self) -> None:
        """Return once the agent has settled."""
        host = self._host()
        waiter = getattr(host, "wait_for_idle", None)
        if waiter is not None:
            await resolve(waiter())
            return
        while not host.is_idle():
            await asyncio.sleep(0.01)

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> Any:
        """Move the session to ``target_id`` in its tree (pi's ``navigateTree``).

        Returns the session's answer, ``{"cancelled": bool, "editorText"?, ...}``.
        """
        return await resolve(
            self._host().navigate_tree(
                target_id,
                summarize=summarize,
                custom_instructions=custom_instructions,
                replace_instructions=replace_instructions,
                label=label,
            )
        )

    async def fork(self, entry_id: str, *, position: str = "before") -> Any:
        """Continue in a new session file branched at ``entry_id`` (``"before"`` or ``"at"`` it)."""
        return await resolve(self._host().fork(entry_id, position=position))

    async def new_session(self) -> Any:
        """Start a new, empty session (``/new``)."""
        return await resolve(self._host().new_session())
