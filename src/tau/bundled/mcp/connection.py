"""One configured MCP server: its state, and the SDK session (:mod:`.session`) it opens on demand.

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
from typing import Any

from tau.bundled.mcp.session import (
    McpAbortError,
    McpAuthRequiredError,
    McpConnectionClosedError,
    McpRequestError,
    McpTimeoutError,
    SdkSession,
    stderr_tail,
    translated_error,
)
from tau.bundled.mcp.transport import uses_oauth

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
_METHOD_NOT_FOUND = -32601


def _quiet_sdk_logs() -> None:
    # The SDK logs transport noise (a server that dies mid-line, a failed session DELETE) through
    # `logging`; Python's last-resort handler would print it over tau's output.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)


def _error_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


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
        self._client: SdkSession | None = None
        self._opening: asyncio.Future[SdkSession] | None = None
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

    def tools_changed(self, client: SdkSession) -> None:
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

    async def get_client(self) -> SdkSession:
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

    def _opened(self, future: asyncio.Future[SdkSession]) -> None:
        if self._opening is future:
            self._opening = None
        if not future.cancelled():
            future.exception()  # retrieved: a failure is in the state, and every waiter got it

    async def _open(self) -> SdkSession:
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

    async def _connect_once(self) -> SdkSession:
        self.auth_required.clear()
        client = SdkSession(self)
        try:
            await client.open(self.timeout)
        except BaseException:
            self.stderr_tail = stderr_tail(client)
            raise
        try:
            tools = await self._list_tools(client) if "tools" in client.capabilities else []
        except BaseException:
            self.stderr_tail = stderr_tail(client)
            await client.close()
            raise
        if self._shutdown:
            await client.close()
            raise McpRequestError("shut down while connecting")
        if client.dead:
            self.stderr_tail = stderr_tail(client)
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
        message = _error_text(translated_error(exc))
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

    def _client_closed(self, client: SdkSession) -> None:
        """The server closed the connection: the next call reconnects; until then the state says why."""
        if self._client is not client or self._shutdown:
            return
        self._client = None
        self.state = "disconnected"
        tail = stderr_tail(client)
        self.error = f"Connection closed\n{tail}" if tail else "Connection closed"
        self._changed()

    async def _refresh_tools(self, client: SdkSession) -> None:
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

    async def _paged(self, client: SdkSession, request_type: Any, key: str) -> list[dict[str, Any]]:
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

    async def _list_tools(self, client: SdkSession) -> list[dict[str, Any]]:
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

    async def _read_only(self, run: Callable[[SdkSession], Any]) -> Any:
        """A listing or read, retried once after a transient failure."""
        return await self._with_client(run, read_only=True)

    async def _with_client(self, run: Callable[[SdkSession], Any], read_only: bool = False) -> Any:
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

    def _drop(self, client: SdkSession) -> None:
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
