"""OAuth for HTTP servers on the SDK's client auth, against an MCP server with the SDK's own
authorization server on loopback: without tokens a server needs a sign-in; ``tau mcp login`` runs
the browser flow (dynamic registration, PKCE, the loopback callback) and stores the tokens in
``mcp-auth.json`` (0600, pi's layout); connections then use them; ``logout`` deletes them."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from mcp_harness import free_port, wait_until, write_config

from tau.bundled.mcp.connection import McpServerConnection
from tau.bundled.mcp.oauth import McpCredentialStore, sign_in

pytest.importorskip("mcp")


def _start(*advertised: str):
    import socket

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("oauth_server.py")), str(port), *advertised],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def accepting() -> bool:
        assert proc.poll() is None, "the OAuth MCP server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    wait_until(accepting, 120, "the OAuth MCP server")
    return proc, f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def secured():
    proc, url = _start()
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def misadvertised():
    """A server whose metadata names an authorization server at a port where nothing listens."""
    proc, url = _start("http://127.0.0.1:9")
    yield url
    proc.terminate()
    proc.wait(10)


def _browser(url: str) -> None:
    """A browser that approves: it opens the page and follows the redirect to the callback."""
    threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=60).read(), daemon=True).start()


async def _connect(store: McpCredentialStore, url: str) -> McpServerConnection:
    connection = McpServerConnection("sso", {"url": url, "timeout": 60}, ".", auth=store.auth_for("sso"))
    try:
        await connection.get_client()
    except Exception:
        pass
    return connection


def test_sign_in_stores_tokens_that_connections_use(secured, tmp_path):
    store = McpCredentialStore(tmp_path / "mcp-auth.json")

    async def main() -> None:
        before = await _connect(store, secured)
        assert before.state == "needs-auth"
        await before.close()
        shown: list[str] = []

        def show(url: str) -> None:
            shown.append(url)
            _browser(url)

        count = await sign_in(store, "sso", {"url": secured}, str(tmp_path), show_url=show, timeout=120)
        assert (
            count == 1
            and shown
            and "code_challenge=" in shown[0]
            and "redirect_uri=http%3A%2F%2F127.0.0.1" in shown[0]
        )
        after = await _connect(store, secured)
        assert after.state == "connected" and [tool["name"] for tool in after.tools] == ["whoami"]
        assert (await after.call_tool("whoami", {}))["content"][0]["text"] == "signed in"
        await after.close()

    asyncio.run(main())
    path = tmp_path / "mcp-auth.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    state = json.loads(path.read_text())[f"mcp__sso|{secured}"]
    assert set(state) >= {"clientInformation", "tokens", "tokensExpireAt"}
    assert state["tokens"]["token_type"] == "Bearer" and state["tokens"]["refresh_token"]
    assert store.remove("sso", secured) is True and store.remove("sso", secured) is False


def test_tau_mcp_list_and_logout_name_the_sign_in(secured, tmp_path, isolated_agent_dir, monkeypatch, capsys):
    from tau.cli import main as cli_main

    monkeypatch.chdir(tmp_path)
    write_config(isolated_agent_dir, {"sso": {"url": secured}})
    assert cli_main(["mcp", "list"]) == 1
    out = capsys.readouterr().out
    assert out == f"sso: needs sign-in (codemode, global)\n  {secured}\n  sign in with: tau mcp login sso\n"
    store = McpCredentialStore(isolated_agent_dir / "mcp-auth.json")
    store.update(
        "sso", secured, lambda state: state.update(tokens={"access_token": "x", "token_type": "Bearer"})
    )
    assert cli_main(["mcp", "logout", "sso"]) == 0
    assert capsys.readouterr().out == 'Signed out of MCP server "sso".\n'


def _serve_document(document: dict) -> tuple[str, list[str], object]:
    """A loopback server with one authorization server metadata document; the paths asked for."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            asked.append(self.path)
            body = json.dumps(document).encode() if self.path == "/sso/metadata" else b"{}"
            self.send_response(200 if self.path == "/sso/metadata" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/sso/metadata", asked, httpd


def test_auth_server_metadata_url_replaces_discovery(misadvertised, tmp_path):
    # pi: "Pi uses that document instead of discovery and trusts it as configured". The server names
    # an authorization server nobody serves, so discovery alone cannot sign in; the configured
    # document names the real endpoints.
    base = misadvertised.removesuffix("/mcp")
    document = {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
    }
    metadata_url, asked, httpd = _serve_document(document)
    store = McpCredentialStore(tmp_path / "mcp-auth.json")
    config = {"url": misadvertised, "oauth": {"authServerMetadataUrl": metadata_url}}
    shown: list[str] = []

    def show(url: str) -> None:
        shown.append(url)
        _browser(url)

    try:
        count = asyncio.run(sign_in(store, "sso", config, str(tmp_path), show_url=show, timeout=120))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert count == 1 and shown[0].startswith(f"{base}/authorize?")
    assert asked and set(asked) == {"/sso/metadata"}
    state = json.loads((tmp_path / "mcp-auth.json").read_text())[f"mcp__sso|{misadvertised}"]
    assert state["tokens"]["access_token"] and state["clientInformation"]["client_id"]


def test_an_unreadable_auth_server_metadata_url_is_named(misadvertised, tmp_path):
    metadata_url, _, httpd = _serve_document({})
    store = McpCredentialStore(tmp_path / "mcp-auth.json")
    config = {
        "url": misadvertised,
        "oauth": {"authServerMetadataUrl": metadata_url.replace("metadata", "gone")},
    }
    try:
        with pytest.raises(Exception) as caught:
            asyncio.run(sign_in(store, "sso", config, str(tmp_path), show_url=_browser, timeout=120))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert "HTTP 404 loading authorization server metadata from" in repr(caught.value) + str(
        caught.value.__cause__ or caught.value.__context__
    )


def test_a_sign_in_done_elsewhere_is_picked_up_at_the_next_turn(
    secured, tmp_path, isolated_agent_dir, monkeypatch
):
    """As pi: a server waiting for a sign-in reconnects at the next turn once another process (here
    the test, as ``tau mcp login`` would) stored its tokens; no ``/mcp reconnect`` is needed."""
    from mcp_harness import FACTORY, call

    import tau

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TAU_MCP_STARTUP_WAIT", "120")
    write_config(isolated_agent_dir, {"sso": {"url": secured, "exposure": "direct", "timeout": 60}})
    store = McpCredentialStore(isolated_agent_dir / "mcp-auth.json")

    async def main() -> tuple[list[str], list[dict]]:
        async with await tau.create_agent_session(
            model="faux/faux-1",
            faux_script=[{"factory": FACTORY}],
            extensions=["builtin:mcp"],
            no_extensions=True,
        ) as session:
            await session.prompt("hello")  # the server answers 401: it waits for a sign-in
            before = [m for m in session.messages if m["role"] == "toolResult"]
            assert before == []
            count = await sign_in(
                store, "sso", {"url": secured}, str(tmp_path), show_url=_browser, timeout=120
            )
            assert count == 1
            await session.prompt(call("mcp__sso__whoami"))
            declared = [
                added["name"]
                for m in session.messages
                if m["role"] == "system"
                for added in m.get("toolsAdded") or []
            ]
            return declared, [m for m in session.messages if m["role"] == "toolResult"]

    declared, results = asyncio.run(main())
    assert "mcp__sso__whoami" in declared
    assert [r["content"] for r in results] == [[{"type": "text", "text": "signed in"}]]
