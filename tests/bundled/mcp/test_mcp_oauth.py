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


@pytest.fixture(scope="module")
def secured():
    import socket

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("oauth_server.py")), str(port)],
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
    yield f"http://127.0.0.1:{port}/mcp"
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
