"""What tau adds to the SDK's OAuth flow: pi's refresh lock and ``oauth.authServerMetadataUrl``.

The SDK's ``OAuthClientProvider`` is an ``httpx`` auth flow: a generator that yields the requests
it wants sent (the request being authenticated, a token refresh, metadata discovery, registration)
and receives their responses. :class:`TauOAuth` drives it through that public protocol and steps in
at two kinds of request, the SDK itself unchanged:

- **A token refresh** is sent while holding a lock file shared with every other process using the
  same ``mcp-auth.json`` (pi's lock: ``<agentDir>/mcp-auth-refresh-<16 hex>.lock``, a directory
  created atomically, renewed while held, taken over when stale), and only after re-reading the
  stored tokens: when another process refreshed meanwhile (or the user signed in again), the SDK is
  answered with the stored tokens instead of sending a refresh token that may already be spent.
  Many servers rotate refresh tokens, so two refreshes with the same one lose the grant. A 401
  for a stored token starts the SDK's flow once more with the token marked expired, so it is
  refreshed as pi refreshes it, not replaced by a new sign-in.
- **Discovery**, when ``oauth.authServerMetadataUrl`` is set: the configured document is fetched
  and stands in for the authorization server the protected resource metadata names (or, when the
  server publishes none, for the metadata the SDK would look for at the server's origin). pi trusts
  that document as configured, so its issuer becomes the authorization server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx2

__all__ = ["RefreshLockBusy", "TauOAuth", "refresh_lock", "refresh_lock_path"]

# pi's figures (proper-lockfile's): a lock not renewed for 20 s is stale (its holder was killed);
# a waiter gives up after 25 s, longer than a stale lock lives; it looks again every 100 ms.
REFRESH_LOCK_STALE = 20.0
REFRESH_LOCK_WAIT = 25.0
REFRESH_LOCK_RETRY = 0.1
# pi refreshes access tokens this close to their expiry before sending them.
REFRESH_SKEW = 30.0


class RefreshLockBusy(Exception):
    """Another process held the refresh lock for the whole wait."""


def refresh_lock_path(directory: str | os.PathLike[str], key: str) -> Path:
    """The lock of one server's state ``key`` (``mcp__<server>|<url>``), named as pi names it."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(directory) / f"mcp-auth-refresh-{digest}.lock"


@contextlib.asynccontextmanager
async def refresh_lock(
    path: Path, *, wait: float = REFRESH_LOCK_WAIT, stale: float = REFRESH_LOCK_STALE
) -> AsyncIterator[None]:
    """Hold ``path`` (a directory, as pi's proper-lockfile makes it) across processes.

    A directory is created atomically on every filesystem, and pi's lock is one, so tau and pi
    processes sharing an agent dir exclude each other too. Raises :class:`RefreshLockBusy` when
    another holder keeps it fresh for ``wait`` seconds.
    """
    import anyio

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    deadline = time.monotonic() + wait
    while True:
        try:
            os.mkdir(path, 0o700)
            break
        except FileExistsError:
            with contextlib.suppress(FileNotFoundError):
                if time.time() - path.stat().st_mtime > stale:
                    # Its holder stopped renewing it: killed. Take it over.
                    with contextlib.suppress(FileNotFoundError, OSError):
                        os.rmdir(path)
                    continue
        if time.monotonic() >= deadline:
            raise RefreshLockBusy(f"another process is refreshing ({path})")
        await anyio.sleep(REFRESH_LOCK_RETRY)
    done = threading.Event()

    def renew() -> None:
        # Keeps the lock fresh while a slow authorization server answers, so no one takes it over.
        while not done.wait(stale / 2):
            with contextlib.suppress(OSError):
                os.utime(path)

    renewer = threading.Thread(target=renew, name="tau-mcp-refresh-lock", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        done.set()
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _form(request: httpx2.Request) -> dict[str, str]:
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return {}
    try:
        body = request.content.decode()
    except (httpx2.RequestNotRead, UnicodeDecodeError):
        return {}
    return {key: values[0] for key, values in parse_qs(body).items()}


def _is_refresh(request: httpx2.Request) -> bool:
    return request.method == "POST" and _form(request).get("grant_type") == "refresh_token"


def _json_response(request: httpx2.Request, status: int, data: Any) -> httpx2.Response:
    return httpx2.Response(status, json=data, request=request)


class TauOAuth(httpx2.Auth):
    """The SDK's OAuth flow (``inner``) with the refresh lock and the configured metadata document.

    Args:
        inner: the SDK's ``OAuthClientProvider``.
        store: the :class:`~tau.bundled.mcp.oauth.McpCredentialStore` its storage writes to.
        name, url: the server, which names its state in the store.
        metadata_url: ``oauth.authServerMetadataUrl``, or ``None`` for the SDK's discovery.
    """

    requires_response_body = True

    def __init__(self, inner: Any, store: Any, name: str, url: str, metadata_url: str | None = None) -> None:
        self.inner, self.store, self.name, self.url = inner, store, name, url
        self.metadata_url = metadata_url
        self._expiry_known = False

    def _load_expiry(self) -> None:
        """Tell the SDK when the stored access token expires (pi's 30 s early).

        The SDK knows an expiry only from a token response it received itself; tokens it loads
        from storage count as valid for ever, so after a restart it would send an expired token and,
        on the 401, start a new sign-in instead of refreshing. ``context`` is the provider's public
        state; its ``token_expiry_time`` is what the SDK compares with the clock.
        """
        if self._expiry_known:
            return
        self._expiry_known = True
        expire_at = self.store.state(self.name, self.url).get("tokensExpireAt")
        context = getattr(self.inner, "context", None)
        if (
            isinstance(expire_at, int | float)
            and context is not None
            and hasattr(context, "token_expiry_time")
        ):
            context.token_expiry_time = expire_at / 1000 - REFRESH_SKEW

    def _lock_path(self) -> Path:
        from tau.extension import mcp_namespace

        return refresh_lock_path(self.store.path.parent, f"{mcp_namespace(self.name)}|{self.url}")

    def _stored_answer(self, refresh: httpx2.Request, rejected: str | None) -> httpx2.Response | None:
        """The tokens another process saved since the SDK read them, as a token response; ``None``
        when the stored ones are still the expired (or ``rejected``) ones this refresh replaces."""
        state = self.store.state(self.name, self.url)
        tokens = state.get("tokens")
        if not isinstance(tokens, dict) or not tokens.get("access_token"):
            return None
        expire_at = state.get("tokensExpireAt")
        # Fresh by pi's measure: not within 30 s of expiring (else it is the one to replace).
        fresh = isinstance(expire_at, int | float) and expire_at - REFRESH_SKEW * 1000 > time.time() * 1000
        rotated = tokens.get("refresh_token") != _form(refresh).get("refresh_token")
        if tokens["access_token"] == rejected or not (fresh or rotated):
            return None
        answer = dict(tokens)
        if isinstance(expire_at, int | float):
            answer["expires_in"] = max(0, int((expire_at - time.time() * 1000) / 1000))
        return _json_response(refresh, 200, answer)

    def _refreshable(self) -> bool:
        tokens = self.store.state(self.name, self.url).get("tokens")
        context = getattr(self.inner, "context", None)
        return (
            isinstance(tokens, dict)
            and bool(tokens.get("refresh_token"))
            and hasattr(context, "token_expiry_time")
        )

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        self._load_expiry()
        flow = self.inner.async_auth_flow(request)
        discovery = _Discovery(self.metadata_url, self.url) if self.metadata_url else None
        rejected: str | None = None  # the access token the server refused, once
        try:
            outgoing = await flow.__anext__()
            while True:
                if _is_refresh(outgoing):
                    try:
                        async with refresh_lock(self._lock_path()):
                            response = self._stored_answer(outgoing, rejected)
                            if response is None:
                                if discovery is not None:
                                    if discovery.document is None:
                                        fetched = yield discovery.document_request()
                                        await fetched.aread()
                                        discovery.fetched(fetched)
                                    # A new process's SDK knows no token endpoint but the server's
                                    # origin `/token`; pi refreshes where the document says.
                                    outgoing = discovery.token_request(outgoing)
                                response = yield outgoing
                            # The SDK saves what the refresh returned before it asks for anything
                            # else, so the lock covers reading the tokens through saving new ones.
                            outgoing = await flow.asend(response)
                    except RefreshLockBusy:
                        # As pi: no refresh now (it could spend a refresh token another process is
                        # using); the server then asks for a sign-in, and the stored tokens stay.
                        outgoing = await flow.asend(
                            _json_response(outgoing, 400, {"error": "temporarily_unavailable"})
                        )
                    continue
                if discovery is not None and outgoing is not request:
                    kind = discovery.replaces(outgoing)
                    if kind is not None:
                        if discovery.document is None:
                            fetched = yield discovery.document_request()
                            await fetched.aread()
                            discovery.fetched(fetched)
                        if kind == "prm":
                            response = yield outgoing
                            await response.aread()
                            outgoing = await flow.asend(discovery.resource_metadata(outgoing, response))
                        else:
                            # The document is the authorization server's metadata: nothing to send.
                            outgoing = await flow.asend(_json_response(outgoing, 200, discovery.document))
                        continue
                response = yield outgoing
                if discovery is not None and outgoing is request:
                    discovery.challenged(response)
                if outgoing is request and response.status_code == 401 and rejected is None:
                    token = _bearer(outgoing)
                    if token is not None and self._refreshable():
                        # pi refreshes a token the server refused before its expiry; the SDK would
                        # start a sign-in. Start the SDK's flow again with the token marked expired:
                        # it refreshes (under the lock above), then sends the request again.
                        rejected = token
                        await flow.aclose()
                        self.inner.context.token_expiry_time = 1.0
                        flow = self.inner.async_auth_flow(request)
                        outgoing = await flow.__anext__()
                        continue
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


def _bearer(request: httpx2.Request) -> str | None:
    value = request.headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else None


class _Discovery:
    """Answers the SDK's discovery from the configured authorization server metadata document."""

    def __init__(self, metadata_url: str, server_url: str) -> None:
        self.metadata_url, self.server_url = metadata_url, server_url
        self.document: dict[str, Any] | None = None
        self.challenge: httpx2.Response | None = None

    def challenged(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.challenge = response

    def _prm_urls(self) -> list[str]:
        from mcp.client.auth.utils import (
            build_protected_resource_metadata_discovery_urls,
            extract_resource_metadata_from_www_auth,
        )

        www = extract_resource_metadata_from_www_auth(self.challenge) if self.challenge is not None else None
        return build_protected_resource_metadata_discovery_urls(www, self.server_url)

    def replaces(self, request: httpx2.Request) -> str | None:
        """``prm`` or ``asm`` for a discovery request this document affects, else ``None``."""
        if request.method != "GET":
            return None
        url = str(request.url)
        if url in self._prm_urls():
            return "prm"
        path = request.url.path
        if "/.well-known/oauth-authorization-server" in path or "/.well-known/openid-configuration" in path:
            return "asm"
        return None

    def fetched(self, response: httpx2.Response) -> None:
        if response.status_code != 200:
            raise RuntimeError(
                f"HTTP {response.status_code} loading authorization server metadata from {self.metadata_url}"
            )
        document = json.loads(response.content)
        if not isinstance(document, dict) or not isinstance(document.get("issuer"), str):
            raise RuntimeError(f"the authorization server metadata at {self.metadata_url} names no issuer")
        self.document = document

    def token_request(self, request: httpx2.Request) -> httpx2.Request:
        endpoint = (self.document or {}).get("token_endpoint")
        if not isinstance(endpoint, str) or endpoint == str(request.url):
            return request
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        return httpx2.Request("POST", endpoint, content=request.content, headers=headers)

    def document_request(self) -> httpx2.Request:
        from mcp.client.auth.utils import create_oauth_metadata_request

        return create_oauth_metadata_request(self.metadata_url)

    def resource_metadata(self, request: httpx2.Request, response: httpx2.Response) -> httpx2.Response:
        """The server's protected resource metadata (for its resource and scopes) naming the
        configured authorization server; when the server publishes none at the last place the SDK
        looks, a minimal one, so the SDK does not fall back to the server's origin as issuer."""
        document = self.document or {}
        if response.status_code == 200:
            with contextlib.suppress(ValueError):
                data = json.loads(response.content)
                if isinstance(data, dict):
                    return _json_response(
                        request, 200, {**data, "authorization_servers": [document["issuer"]]}
                    )
        if response.status_code >= 500 or response.status_code == 429:
            return response
        if str(request.url) != self._prm_urls()[-1]:
            return response
        from mcp.shared.auth_utils import resource_url_from_server_url

        return _json_response(
            request,
            200,
            {
                "resource": resource_url_from_server_url(self.server_url),
                "authorization_servers": [document["issuer"]],
            },
        )
