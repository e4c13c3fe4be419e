"""OAuth for remote MCP servers on the SDK's client auth, with tokens in ``<agentDir>/mcp-auth.json``.

As in pi: a connection never opens a browser by itself. It sends the stored access token and
refreshes it when it expired; when the server still wants a sign-in, the server shows ``needs
sign-in`` and the user runs ``/mcp login <server>`` or ``tau mcp login <server>``, which runs the
authorization code flow with PKCE (protected-resource and authorization-server discovery, dynamic
client registration or a configured ``clientId``) against a loopback callback
``http://127.0.0.1:<port>/callback`` or a redirect URL pasted into the terminal.

The file keeps pi's layout: one state per ``mcp__<server>|<url>`` with ``clientInformation`` and
``tokens`` in OAuth's own field names (and ``tokensExpireAt`` in milliseconds). pi's refresh lock
shared between processes and ``oauth.authServerMetadataUrl`` are added around the SDK's flow
(:mod:`tau.bundled.mcp.oauth_flow`); pi's Client ID Metadata Documents are not offered
(docs/decisions.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tau.extension import mcp_namespace

__all__ = ["McpCredentialStore", "ServerAuth", "SignInCancelled", "sign_in"]

DEFAULT_SIGN_IN_TIMEOUT = 300.0


class SignInCancelled(Exception):
    """The sign-in was cancelled or did not finish in time."""


def _key(name: str, url: str) -> str:
    return f"{mcp_namespace(name)}|{url}"


class McpCredentialStore:
    """``mcp-auth.json``: per-server OAuth state, written 0600 under an advisory lock."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @contextlib.contextmanager
    def _locked(self) -> Any:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        if not text.strip():
            return {}
        data = json.loads(text)
        return data if isinstance(data, dict) else {}

    def _write(self, states: dict[str, Any]) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(states, indent=2, ensure_ascii=False) + "\n")

    def state(self, name: str, url: str) -> dict[str, Any]:
        with self._locked():
            state = self._read().get(_key(name, url))
        return state if isinstance(state, dict) else {}

    def update(self, name: str, url: str, change: Callable[[dict[str, Any]], None]) -> None:
        with self._locked():
            states = self._read()
            state = states.get(_key(name, url))
            state = dict(state) if isinstance(state, dict) else {}
            change(state)
            states[_key(name, url)] = state
            self._write(states)

    def tokens(self, name: str, url: str) -> dict[str, Any] | None:
        tokens = self.state(name, url).get("tokens")
        return tokens if isinstance(tokens, dict) else None

    def remove(self, name: str, url: str) -> bool:
        """Delete a server's credentials; whether there were any."""
        with self._locked():
            states = self._read()
            if _key(name, url) not in states:
                return False
            del states[_key(name, url)]
            self._write(states)
            return True

    def auth_for(self, name: str) -> ServerAuth:
        return ServerAuth(self, name)


class _Storage:
    """The SDK's ``TokenStorage`` over one server's state (a configured ``clientId`` wins)."""

    def __init__(
        self, store: McpCredentialStore, name: str, url: str, oauth: dict[str, Any], redirect: str
    ) -> None:
        self._store, self._name, self._url, self._oauth, self._redirect = store, name, url, oauth, redirect

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        state = self._store.state(self._name, self._url)
        tokens = state.get("tokens")
        if not isinstance(tokens, dict):
            return None
        token = OAuthToken.model_validate(tokens)
        expire_at = state.get("tokensExpireAt")
        if isinstance(expire_at, int | float):
            # What is left of the lifetime, so the SDK refreshes an expired token before using it.
            token.expires_in = max(0, int((expire_at - time.time() * 1000) / 1000))
        return token

    async def set_tokens(self, tokens: Any) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)

        def change(state: dict[str, Any]) -> None:
            state["tokens"] = data
            if tokens.expires_in is None:
                state.pop("tokensExpireAt", None)
            else:
                state["tokensExpireAt"] = int(time.time() * 1000) + int(tokens.expires_in) * 1000

        self._store.update(self._name, self._url, change)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        if self._oauth.get("clientId"):
            info: dict[str, Any] = {"client_id": self._oauth["clientId"], "redirect_uris": [self._redirect]}
            if self._oauth.get("clientSecret"):
                from tau.extension import resolve_config_value_or_raise

                info["client_secret"] = resolve_config_value_or_raise(
                    self._oauth["clientSecret"], f'MCP server "{self._name}" oauth.clientSecret', cached=False
                )
                info["token_endpoint_auth_method"] = "client_secret_post"
            else:
                info["token_endpoint_auth_method"] = "none"
            return OAuthClientInformationFull.model_validate(info)
        stored = self._store.state(self._name, self._url).get("clientInformation")
        if not isinstance(stored, dict):
            return None
        # A client registered for another redirect URI cannot finish this sign-in: register again.
        uris = stored.get("redirect_uris")
        if isinstance(uris, list) and uris and self._redirect not in uris:
            return None
        return OAuthClientInformationFull.model_validate(stored)

    async def set_client_info(self, client_info: Any) -> None:
        if self._oauth.get("clientId"):
            return
        data = client_info.model_dump(mode="json", exclude_none=True)
        self._store.update(self._name, self._url, lambda state: state.__setitem__("clientInformation", data))


def _redirect_url(oauth: dict[str, Any], port: int | None = None) -> str:
    """The loopback redirect URI: ``callbackUrl`` as written (its port added when it has none),
    else ``http://127.0.0.1:<callbackPort or port>/callback``."""
    url = oauth.get("callbackUrl")
    chosen = port or oauth.get("callbackPort") or 0
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        if parts.port is None and chosen:
            return parts._replace(netloc=f"{parts.hostname}:{chosen}").geturl()
        return url
    return f"http://127.0.0.1:{chosen}/callback"


def _provider(
    store: McpCredentialStore,
    name: str,
    config: dict[str, Any],
    redirect: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[Any]],
) -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    oauth = config.get("oauth") or {}
    metadata: dict[str, Any] = {
        "client_name": oauth.get("clientName") or "tau",
        "redirect_uris": [redirect],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_post" if oauth.get("clientSecret") else "none",
    }
    if oauth.get("scope"):
        metadata["scope"] = oauth["scope"]
    from tau.bundled.mcp.oauth_flow import TauOAuth

    provider = OAuthClientProvider(
        server_url=config["url"],
        client_metadata=OAuthClientMetadata.model_validate(metadata),
        storage=_Storage(store, name, config["url"], oauth, redirect),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    return TauOAuth(provider, store, name, config["url"], oauth.get("authServerMetadataUrl"))


class ServerAuth:
    """OAuth of one server for its connections: stored tokens and refreshes only."""

    def __init__(self, store: McpCredentialStore, name: str) -> None:
        self.store = store
        self.name = name

    def connection_auth(self, connection: Any) -> Any:
        from tau.bundled.mcp.session import McpAuthRequiredError

        async def on_redirect(url: str) -> None:
            connection.sign_in_required()
            raise McpAuthRequiredError(f'MCP server "{self.name}" requires sign-in')

        async def callback() -> Any:
            raise McpAuthRequiredError(f'MCP server "{self.name}" requires sign-in')

        url = connection.entry_config["url"]
        if not self.store.tokens(self.name, url):
            # Nothing to send or refresh: a 401 means sign in, without discovering and registering
            # a client on every connection attempt.
            return _SignInOn401(connection)
        oauth = connection.entry_config.get("oauth") or {}
        # The redirect URI the stored client was registered with, so a refresh does not re-register.
        stored = self.store.state(self.name, url).get("clientInformation") or {}
        uris = stored.get("redirect_uris") if isinstance(stored, dict) else None
        redirect = uris[0] if isinstance(uris, list) and uris else _redirect_url(oauth)
        return _provider(self.store, self.name, connection.entry_config, redirect, on_redirect, callback)


def _sign_in_on_401(connection: Any) -> Any:
    import httpx2

    class SignInOn401(httpx2.Auth):
        """For a server without stored tokens: an unauthorized answer means a sign-in is needed."""

        def auth_flow(self, request: Any) -> Any:
            response = yield request
            if response.status_code == 401:
                connection.sign_in_required()

    return SignInOn401()


_SignInOn401 = _sign_in_on_401


class _CallbackServer:
    """A loopback HTTP server that receives the authorization response on ``/callback``."""

    def __init__(self, host: str, port: int, path: str) -> None:
        self.host, self.port, self.path = host, port, path
        self.result: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
            parts = urlsplit(target)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            done = parts.path == self.path and ("code" in query or "error" in query)
            body = (
                "Signed in to the MCP server. You may now close this page."
                if done and "code" in query
                else f"Sign-in failed: {query.get('error_description') or query.get('error') or 'unexpected request'}"
            )
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                + f"Content-Length: {len(body.encode())}\r\n\r\n".encode()
                + body.encode()
            )
            await writer.drain()
            if done and not self.result.done():
                self.result.set_result(query)
        writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()


def _response_from_url(text: str) -> dict[str, str]:
    query = parse_qs(urlsplit(text.strip()).query)
    return {key: values[0] for key, values in query.items()}


async def sign_in(
    store: McpCredentialStore,
    name: str,
    config: dict[str, Any],
    cwd: str,
    *,
    show_url: Callable[[str], None],
    paste: Callable[[], Awaitable[str | None]] | None = None,
    timeout: float = DEFAULT_SIGN_IN_TIMEOUT,
) -> int:
    """Run the browser sign-in for ``name`` and connect once with the new tokens; the tool count.

    ``show_url`` shows (and may open) the authorization page; ``paste`` may return a redirect URL
    the user pasted (a browser on another machine). Raises :class:`SignInCancelled` on timeout.
    """
    from mcp.shared.auth import AuthorizationCodeResult

    from tau.bundled.mcp.connection import McpServerConnection

    oauth = config.get("oauth") or {}
    redirect = urlsplit(_redirect_url(oauth, None))
    callback = _CallbackServer(
        redirect.hostname or "127.0.0.1", redirect.port or 0, redirect.path or "/callback"
    )
    await callback.start()
    redirect_uri = _redirect_url(oauth, callback.port)

    async def on_redirect(url: str) -> None:
        show_url(url)

    async def on_callback() -> Any:
        waiters: set[asyncio.Future[Any]] = {callback.result}
        pasted = asyncio.ensure_future(paste()) if paste is not None else None
        if pasted is not None:
            waiters.add(pasted)
        try:
            while True:
                done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                if callback.result in done:
                    query = callback.result.result()
                    break
                if pasted is not None and pasted in done:
                    waiters.discard(pasted)
                    value = pasted.result()
                    if value:
                        query = _response_from_url(value)
                        break
        finally:
            if pasted is not None:
                pasted.cancel()
        if "code" not in query:
            raise SignInCancelled(
                query.get("error_description") or query.get("error") or "no authorization code"
            )
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    class _Auth:
        def __init__(self) -> None:
            self.store = store

        def connection_auth(self, connection: Any) -> Any:
            return _provider(store, name, config, redirect_uri, on_redirect, on_callback)

    connection = McpServerConnection(name, {**config, "timeout": timeout}, cwd, auth=_Auth())
    try:
        await asyncio.wait_for(connection.get_client(), timeout)
        return len(connection.tools)
    except TimeoutError:
        raise SignInCancelled(f"not completed within {round(timeout)} seconds") from None
    finally:
        await connection.close()
        await callback.close()
