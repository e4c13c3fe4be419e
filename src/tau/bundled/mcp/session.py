"""One open session with an MCP server through the official SDK, and the errors of its requests.

The SDK's transport and ``ClientSession`` are anyio contexts: a task of their own owns them from
:meth:`SdkSession.open` to :meth:`SdkSession.close` (or the end of the stream). Requests carry pi's
timeout, which progress notifications reset, and answer with the server's JSON in its key order.
:class:`~tau.bundled.mcp.connection.McpServerConnection` opens, shares and reopens these sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.bundled.mcp.transport import StderrTail, open_transport, resolved_headers

if TYPE_CHECKING:
    from tau.bundled.mcp.connection import McpServerConnection

__all__ = [
    "McpAbortError",
    "McpAuthRequiredError",
    "McpConnectionClosedError",
    "McpRequestError",
    "McpTimeoutError",
    "SdkSession",
    "stderr_tail",
    "translated_error",
]

_CONNECTION_CLOSED = -32000


class McpRequestError(Exception):
    """A request failed; ``code`` is the JSON-RPC error code when the server answered with one."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class McpConnectionClosedError(McpRequestError):
    def __init__(self, message: str = "MCP connection closed") -> None:
        super().__init__(message)


class McpTimeoutError(McpRequestError):
    def __init__(self, timeout_ms: int) -> None:
        super().__init__(f"MCP request timed out after {timeout_ms}ms")


class McpAbortError(McpRequestError):
    def __init__(self) -> None:
        super().__init__("MCP request aborted")


class McpAuthRequiredError(McpRequestError):
    """The server needs an OAuth sign-in the connection cannot do by itself."""


def _raw_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, Any])


class SdkSession:
    """One open session with the server: a task owns the SDK's transport and session contexts
    (anyio contexts close in the task that opened them) until :meth:`close` or end of stream."""

    def __init__(self, connection: McpServerConnection) -> None:
        self._connection = connection
        self._stop = asyncio.Event()
        self.closed = asyncio.Event()
        self._ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        # A failure after `open` gave up waiting (a sign-in is needed) is not news to anyone.
        self._ready.add_done_callback(lambda future: future.cancelled() or future.exception())
        self._task: asyncio.Task[None] | None = None
        self.session: Any = None
        self.initialize: Any = None
        self.stderr: StderrTail | None = None
        self.on_close: Callable[[], None] | None = None
        self._raw = _raw_adapter()

    async def open(self, timeout: float) -> None:
        self._task = asyncio.ensure_future(self._run())
        # An OAuth server that wants a sign-in fails inside the SDK's HTTP task, not in the request:
        # the connection's auth support raises the flag instead.
        auth_needed = asyncio.ensure_future(self._connection.auth_required.wait())
        try:
            done, _ = await asyncio.wait(
                {self._ready, auth_needed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if self._ready in done:
                self._ready.result()
                return
            await self.close()
            if auth_needed in done:
                raise McpAuthRequiredError(f'MCP server "{self._connection.name}" requires sign-in')
            raise McpTimeoutError(int(timeout * 1000))
        except BaseException:
            await self.close()
            raise
        finally:
            auth_needed.cancel()

    async def _run(self) -> None:
        import anyio
        from mcp.client.session import ClientSession

        connection = self._connection
        try:
            async with contextlib.AsyncExitStack() as stack:
                if "url" not in connection.entry_config:
                    self.stderr = StderrTail(lambda line: connection.log_stderr(line))
                    stack.callback(self.stderr.close)
                headers = (
                    resolved_headers(connection.name, connection.entry_config)
                    if "url" in connection.entry_config
                    else None
                )
                read, write = await stack.enter_async_context(
                    open_transport(
                        connection.name,
                        connection.entry_config,
                        connection.cwd,
                        stderr=self.stderr,
                        headers={**(headers or {}), **(await connection.auth_headers())},
                        auth=connection.http_auth(),
                    )
                )
                forward, watched = anyio.create_memory_object_stream[Any](0)
                group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(group.cancel_scope.cancel)
                group.start_soon(self._pump, read, forward)
                session = ClientSession(
                    watched,
                    write,
                    logging_callback=self._on_log,
                    message_handler=self._on_message,
                    list_roots_callback=self._on_list_roots,
                    client_info=connection.client_info(),
                )
                await stack.enter_async_context(session)
                self.session = session
                self.initialize = await session.initialize()
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # the task ends here; callers see it through `open` or `closed`
            if not self._ready.done():
                self._ready.set_exception(translated_error(exc))
        finally:
            self.closed.set()
            if self.on_close is not None:
                self.on_close()

    async def _pump(self, read: Any, forward: Any) -> None:
        import anyio

        async with forward:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                async for item in read:
                    await forward.send(item)
        # The server closed the connection: calls from now on reconnect, before the teardown ends.
        self._stop.set()
        if self.on_close is not None:
            self.on_close()

    async def _on_log(self, params: Any) -> None:
        self._connection.log_message(params.model_dump(mode="json", exclude_none=True))

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._connection.tools_changed(self)

    async def _on_list_roots(self, context: Any) -> Any:
        import mcp_types

        cwd = Path(self._connection.cwd).resolve()
        # (pydantic validates the URI string into the FileUrl the model declares)
        root = mcp_types.Root(uri=cwd.as_uri(), name=cwd.name)  # type: ignore[arg-type]
        return mcp_types.ListRootsResult(roots=[root])

    @property
    def dead(self) -> bool:
        """Whether the connection ended or is ending (no request can succeed on it)."""
        return self._stop.is_set() or self.closed.is_set()

    @property
    def capabilities(self) -> dict[str, Any]:
        result = self.initialize
        if result is None or result.capabilities is None:
            return {}
        return result.capabilities.model_dump(mode="json", exclude_none=True, by_alias=True)

    @property
    def instructions(self) -> str | None:
        text = getattr(self.initialize, "instructions", None)
        return text.strip() or None if isinstance(text, str) else None

    async def request(
        self,
        request: Any,
        timeout: float,
        signal: Any = None,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> dict[str, Any]:
        """Send one request; its answer as the server's JSON. Progress resets the timeout."""
        from mcp.shared.exceptions import MCPError

        if self.dead or self.session is None:
            raise McpConnectionClosedError()
        loop = asyncio.get_running_loop()
        last_activity = loop.time()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            nonlocal last_activity
            last_activity = loop.time()
            if on_progress is not None:
                on_progress(value, total, message)

        task = asyncio.ensure_future(
            self.session.send_request(
                request, self._raw, progress_callback=progress if on_progress is not None else None
            )
        )
        remove = signal.add_callback(task.cancel) if signal is not None else None
        try:
            while True:
                remaining = last_activity + timeout - loop.time()
                if remaining <= 0:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                    raise McpTimeoutError(int(timeout * 1000))
                done, _ = await asyncio.wait({task}, timeout=remaining)
                if done:
                    break
            return task.result()
        except asyncio.CancelledError:
            if signal is not None and signal.aborted:
                raise McpAbortError() from None
            task.cancel()
            raise
        except MCPError as exc:
            if exc.error.code == _CONNECTION_CLOSED:
                raise McpConnectionClosedError() from None
            raise McpRequestError(exc.error.message, exc.error.code) from None
        finally:
            if remove is not None:
                remove()

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await self._task


def translated_error(exc: BaseException) -> Exception:
    """The failure to report for an exception the SDK raised (groups unwrapped, pi's words)."""
    from mcp.shared.exceptions import MCPError

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        if exc.error.code == _CONNECTION_CLOSED:
            return McpConnectionClosedError()
        return McpRequestError(exc.error.message, exc.error.code)
    return exc if isinstance(exc, Exception) else McpConnectionClosedError()


def stderr_tail(client: SdkSession) -> str | None:
    """The last 2,000 characters a stdio server wrote to stderr, or ``None``."""
    if client.stderr is None:
        return None
    text = client.stderr.text.strip()
    return text[-2000:] or None
