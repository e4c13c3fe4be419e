"""One configured MCP server: its connection through the official SDK, and its state.

A connection opens on first use and is shared by every caller; a server that closes the connection
(a crash, a restart) shows as ``disconnected`` and reconnects on the next call (pi
``extensions/mcp/runtime.ts``). Requests carry pi's timeout (``timeout`` seconds, default 60),
which progress notifications reset; results stay plain JSON with the server's key order (the SDK's
models would reorder them, and sessions must read as pi writes them).

Errors keep pi's words: ``MCP connection closed``, ``MCP request timed out after 60000ms``,
``MCP server "x" failed to connect: …``, ``MCP server "x" requires sign-in. Run /mcp to sign in.``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.bundled.mcp.transport import StderrTail, open_transport, resolved_headers, uses_oauth

__all__ = [
    "McpAbortError",
    "McpConnectionClosedError",
    "McpRequestError",
    "McpServerConnection",
    "McpTimeoutError",
]

DEFAULT_TIMEOUT_SECONDS = 60
CONNECT_RETRY_DELAYS = (0.25, 1.0)
MAX_LIST_PAGES = 100
_CONNECTION_CLOSED = -32000
_METHOD_NOT_FOUND = -32601


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


def _quiet_sdk_logs() -> None:
    # The SDK logs transport noise (a server that dies mid-line, a failed session DELETE) through
    # `logging`; Python's last-resort handler would print it over tau's output.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)


def _raw_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, Any])


def _error_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class _Client:
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
                self._ready.set_exception(_translated(exc))
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


class McpServerConnection:
    """A configured server. ``state``: ``connecting``, ``connected``, ``disconnected`` (reconnects on
    the next call), ``failed``, ``needs-auth`` or ``closed``; ``error`` says why for the last three.

    Args:
        name: The server's name.
        config: Its validated ``mcpServers`` entry.
        cwd: The session's directory (stdio ``cwd`` resolves against it; the root sent to servers).
        log: Where server messages and stderr go (:class:`~tau.bundled.mcp.log.McpServerLog`).
        on_tools: Called with the connection whenever its tool list is (re)read.
        on_change: Called whenever the state changes.
        auth: The OAuth support of HTTP servers (:mod:`tau.bundled.mcp.oauth`), or ``None``.
        provider_token: ``provider -> token`` for servers with ``auth: {"provider"}``.
    """

    def __init__(
        self,
        name: str,
        config: dict[str, Any],
        cwd: str,
        *,
        log: Any = None,
        on_tools: Callable[[McpServerConnection], None] | None = None,
        on_change: Callable[[McpServerConnection], None] | None = None,
        auth: Any = None,
        provider_token: Callable[[str], str | None] | None = None,
        version: str = "0",
    ) -> None:
        _quiet_sdk_logs()
        self.name = name
        self.entry_config = config
        self.cwd = cwd
        self.state = "connecting"
        self.error: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.has_resources = False
        self.instructions: str | None = None
        self._log = log
        self._on_tools = on_tools
        self._on_change = on_change
        self._auth = auth
        self._provider_token = provider_token
        self._version = version
        self._client: _Client | None = None
        self._opening: asyncio.Future[_Client] | None = None
        self._shutdown = False
        self.stderr_tail: str | None = None
        self.auth_required = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()

    # -- facts -----------------------------------------------------------------------------------

    @property
    def timeout(self) -> float:
        """Seconds each request may take (``timeout``, default 60)."""
        return float(self.entry_config.get("timeout") or DEFAULT_TIMEOUT_SECONDS)

    @property
    def timeout_ms(self) -> int:
        return int(self.timeout * 1000)

    @property
    def oauth_url(self) -> str | None:
        """The server URL when the server authenticates with OAuth."""
        return self.entry_config["url"] if uses_oauth(self.entry_config) else None

    @property
    def closed(self) -> bool:
        return self._shutdown

    def client_info(self) -> Any:
        import mcp_types

        return mcp_types.Implementation(name="tau", version=self._version)

    def http_auth(self) -> Any:
        if self._auth is None or self.oauth_url is None:
            return None
        return self._auth.connection_auth(self)

    async def auth_headers(self) -> dict[str, str]:
        provider = (
            (self.entry_config.get("auth") or {}).get("provider") if "url" in self.entry_config else None
        )
        if not provider or self._provider_token is None:
            return {}
        token = self._provider_token(provider)
        return {"Authorization": f"Bearer {token}"} if token else {}

    # -- callbacks from the client ---------------------------------------------------------------

    def log_message(self, params: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(self.name, params)

    def log_stderr(self, line: str) -> None:
        if self._log is not None:
            self._log.stderr(self.name, line)

    def tools_changed(self, client: _Client) -> None:
        """The server announced a changed tool list: read it again."""
        task = asyncio.ensure_future(self._refresh_tools(client))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def sign_in_required(self) -> None:
        """The server wants an OAuth sign-in the connection cannot do by itself."""
        self.auth_required.set()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    # -- connecting ------------------------------------------------------------------------------

    async def get_client(self) -> _Client:
        """The open client, connecting first when there is none (callers share one attempt)."""
        if self._shutdown:
            raise McpRequestError(f'MCP server "{self.name}" is shut down')
        client = self._client
        if client is not None and not client.dead:
            return client
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
            self._opening.add_done_callback(self._opened)
        return await asyncio.shield(self._opening)

    def _opened(self, future: asyncio.Future[_Client]) -> None:
        if self._opening is future:
            self._opening = None
        if not future.cancelled():
            future.exception()  # retrieved: a failure is in the state, and every waiter got it

    async def _open(self) -> _Client:
        self.state = "connecting"
        self._changed()
        retries = CONNECT_RETRY_DELAYS if "url" in self.entry_config else ()
        attempt = 0
        while True:
            self.stderr_tail = None
            try:
                return await self._connect_once()
            except McpAuthRequiredError as exc:
                raise self._needs_sign_in(exc) from None
            except Exception as exc:
                if self._shutdown or attempt >= len(retries) or not _transient(exc):
                    raise self._connect_failed(exc) from None
                await asyncio.sleep(retries[attempt])
                attempt += 1

    async def _connect_once(self) -> _Client:
        self.auth_required.clear()
        client = _Client(self)
        try:
            await client.open(self.timeout)
        except BaseException:
            self.stderr_tail = _tail(client)
            raise
        try:
            tools = await self._list_tools(client) if "tools" in client.capabilities else []
        except BaseException:
            self.stderr_tail = _tail(client)
            await client.close()
            raise
        if self._shutdown:
            await client.close()
            raise McpRequestError("shut down while connecting")
        if client.dead:
            self.stderr_tail = _tail(client)
            raise McpRequestError("connection closed during setup")
        client.on_close = lambda: self._client_closed(client)
        self._client = client
        self.tools = tools
        self.has_resources = "resources" in client.capabilities
        self.instructions = client.instructions
        self.state = "connected"
        self.error = None
        if self._on_tools is not None:
            self._on_tools(self)
        self._changed()
        return client

    def _connect_failed(self, exc: BaseException) -> McpRequestError:
        message = _error_text(_translated(exc))
        self.state = "closed" if self._shutdown else "failed"
        if isinstance(exc, McpConnectionClosedError) and (self.stderr_tail or "").startswith("spawn "):
            # The guard could not start the command: its one line says why, as Node's spawn error does.
            self.error = self.stderr_tail
        else:
            self.error = f"{message}\n{self.stderr_tail}" if self.stderr_tail else message
        self._changed()
        return McpRequestError(f'MCP server "{self.name}" failed to connect: {self.error}')

    def _needs_sign_in(self, exc: BaseException) -> McpRequestError:
        self.state = "needs-auth"
        self.error = None
        self._changed()
        return McpRequestError(f'MCP server "{self.name}" requires sign-in. Run /mcp to sign in.')

    def _client_closed(self, client: _Client) -> None:
        """The server closed the connection: the next call reconnects; until then the state says why."""
        if self._client is not client or self._shutdown:
            return
        self._client = None
        self.state = "disconnected"
        tail = _tail(client)
        self.error = f"Connection closed\n{tail}" if tail else "Connection closed"
        self._changed()

    async def _refresh_tools(self, client: _Client) -> None:
        try:
            tools = await self._list_tools(client)
        except Exception as exc:
            self.error = f"Failed to refresh tools: {_error_text(exc)}"
            self._changed()
            return
        if self._client is not client or self._shutdown:
            return
        self.tools = tools
        if self._on_tools is not None:
            self._on_tools(self)
        self._changed()

    # -- requests --------------------------------------------------------------------------------

    async def _paged(self, client: _Client, request_type: Any, key: str) -> list[dict[str, Any]]:
        import mcp_types

        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        method = request_type.model_fields["method"].default
        for _ in range(MAX_LIST_PAGES):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await client.request(request_type(params=params), self.timeout)
            items.extend(item for item in page.get(key) or [] if isinstance(item, dict))
            cursor = page.get("nextCursor") or None
            if cursor is None:
                return items
            if cursor in seen:
                raise McpRequestError(f"MCP {method} returned duplicate cursor: {cursor}")
            seen.add(cursor)
        raise McpRequestError(f"MCP {method} exceeded {MAX_LIST_PAGES} pages")

    async def _list_tools(self, client: _Client) -> list[dict[str, Any]]:
        import mcp_types

        return await self._paged(client, mcp_types.ListToolsRequest, "tools")

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        signal: Any = None,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> dict[str, Any]:
        """``tools/call``; the result as the server sent it. Never retried (the server may have run it)."""
        import mcp_types

        request = mcp_types.CallToolRequest(
            params=mcp_types.CallToolRequestParams(name=name, arguments=arguments)
        )
        return await self._with_client(
            lambda client: client.request(request, self.timeout, signal, on_progress or (lambda *args: None))
        )

    async def _read_only(self, run: Callable[[_Client], Any]) -> Any:
        """A listing or read, retried once after a transient failure."""
        return await self._with_client(run, read_only=True)

    async def _with_client(self, run: Callable[[_Client], Any], read_only: bool = False) -> Any:
        """Run a request, reconnecting when needed (pi ``withClient``): a listing or read is retried
        once after a transient HTTP failure; a request the server answered with an unknown session
        (it restarted: it did not run it) is retried once on a new session; a closed connection is
        dropped, so the next call reconnects. Tool calls are never retried otherwise."""
        for attempt in (1, 2):
            client = await self.get_client()
            try:
                return await run(client)
            except McpRequestError as exc:
                http = "url" in self.entry_config
                if attempt == 1 and read_only and http and _transient(exc):
                    await asyncio.sleep(CONNECT_RETRY_DELAYS[0])
                    continue
                if attempt == 1 and http and _session_expired(exc):
                    self._drop(client)
                    continue
                if isinstance(exc, McpConnectionClosedError):
                    self._drop(client)
                raise
        raise AssertionError("unreachable")

    def _drop(self, client: _Client) -> None:
        """Forget a client whose connection is gone (an HTTP server that went away says so only
        through failing requests); it closes in the background."""
        if self._client is not client:
            return
        self._client_closed(client)
        task = asyncio.ensure_future(client.close())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def read_resource(self, uri: str, signal: Any = None) -> dict[str, Any]:
        import mcp_types

        request = mcp_types.ReadResourceRequest(params=mcp_types.ReadResourceRequestParams(uri=uri))
        return await self._read_only(lambda client: client.request(request, self.timeout, signal))

    async def resources_page(self, cursor: str | None, signal: Any = None) -> dict[str, Any]:
        import mcp_types

        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        request = mcp_types.ListResourcesRequest(params=params)
        return await self._read_only(lambda client: client.request(request, self.timeout, signal))

    async def resource_templates_page(self, cursor: str | None, signal: Any = None) -> dict[str, Any]:
        import mcp_types

        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        request = mcp_types.ListResourceTemplatesRequest(params=params)
        try:
            return await self._read_only(lambda client: client.request(request, self.timeout, signal))
        except McpRequestError as exc:
            if exc.code == _METHOD_NOT_FOUND:  # servers without templates do not implement the method
                return {"resourceTemplates": []}
            raise

    async def all_resources(self) -> list[dict[str, Any]]:
        import mcp_types

        return await self._read_only(
            lambda client: self._paged(client, mcp_types.ListResourcesRequest, "resources")
        )

    async def all_resource_templates(self) -> list[dict[str, Any]]:
        import mcp_types

        try:
            return await self._read_only(
                lambda client: self._paged(
                    client, mcp_types.ListResourceTemplatesRequest, "resourceTemplates"
                )
            )
        except McpRequestError as exc:
            if exc.code == _METHOD_NOT_FOUND:
                return []
            raise

    # -- ending ----------------------------------------------------------------------------------

    async def reconnect(self) -> None:
        """Connect again (after a sign-in, or on request)."""
        if self._opening is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._opening)
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        await self.get_client()

    async def sign_out(self) -> None:
        """Disconnect after the stored credentials were removed."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        if not self._shutdown:
            self.state = "needs-auth"
            self.error = None
            self._changed()

    async def close(self) -> None:
        """Stop the server (or end the HTTP session); resolves once no transport is open."""
        self._shutdown = True
        self.state = "closed"
        self._changed()
        client, self._client = self._client, None
        opening = self._opening
        if client is not None:
            await client.close()
        if opening is not None:
            with contextlib.suppress(BaseException):
                late = await asyncio.shield(opening)
                await late.close()


def _translated(exc: BaseException) -> Exception:
    """The failure to report for an exception the SDK raised (groups unwrapped, pi's words)."""
    from mcp.shared.exceptions import MCPError

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        if exc.error.code == _CONNECTION_CLOSED:
            return McpConnectionClosedError()
        return McpRequestError(exc.error.message, exc.error.code)
    return exc if isinstance(exc, Exception) else McpConnectionClosedError()


def _tail(client: _Client) -> str | None:
    if client.stderr is None:
        return None
    text = client.stderr.text.strip()
    return text[-2000:] or None


def _session_expired(exc: BaseException) -> bool:
    """The HTTP server no longer knows the session (a 404 after the session started)."""
    return isinstance(exc, McpRequestError) and exc.code == -32600 and str(exc) == "Session terminated"


def _transient(exc: BaseException) -> bool:
    """Network failures and overloaded or restarting HTTP servers, worth another attempt."""
    try:
        import httpx2
    except ImportError:  # pragma: no cover - the SDK depends on it
        return False
    if isinstance(exc, httpx2.TransportError):
        return True
    if isinstance(exc, McpRequestError):
        return exc.code == -32603 and "error response" in str(exc)  # the SDK's stand-in for a 5xx
    return False
