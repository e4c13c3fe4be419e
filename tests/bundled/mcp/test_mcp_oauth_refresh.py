"""pi's cross-process refresh lock: two tau processes sharing ``mcp-auth.json`` with an expired
token refresh it once, the second using the tokens the first saved (servers that rotate refresh
tokens reject the spent one, which would cost the second process its sign-in). Against a loopback
authorization server that counts refresh requests and rotates refresh tokens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

pytest.importorskip("mcp")

from tau.bundled.mcp.oauth import McpCredentialStore
from tau.bundled.mcp.oauth_flow import refresh_lock_path
from tau_process import tau_env

CLIENT = Path(__file__).with_name("refresh_client.py")
# How long the first refresh is held, once the second process is about to send, for a second
# refresh to arrive. With the lock none can (the second process waits for the lock), so this only
# bounds how long the test waits; without it the second refresh arrives within it on any machine
# that runs the second process's next few lines of Python in that time.
HOLD = 8.0


class RotatingServer:
    """A protected resource at ``/mcp`` and a token endpoint at ``/token`` that rotates refresh
    tokens: each refresh token works once. The first refresh is held until ``release``."""

    def __init__(self, token_path: str = "/token") -> None:
        self.access, self.refresh = "access-0", "refresh-0"
        self.refreshes: list[str] = []
        self.first_arrived = threading.Event()
        self.second_ready = threading.Event()
        self.second_arrived = threading.Event()
        self.first_done = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: str, content_type: str = "application/json") -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/as/metadata":
                    base = server.url.removesuffix("/mcp")
                    document = {
                        "issuer": f"{base}/as",
                        "authorization_endpoint": f"{base}/as/authorize",
                        "token_endpoint": f"{base}{token_path}",
                        "response_types_supported": ["code"],
                    }
                    self._send(200, json.dumps(document))
                elif self.path == "/mcp" and self.headers.get("Authorization") == f"Bearer {server.access}":
                    self._send(200, "ok", "text/plain")
                elif self.path == "/mcp":
                    self._send(401, "{}")
                else:
                    self._send(404, "{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if self.path != token_path or form.get("grant_type") != "refresh_token":
                    self._send(404, "{}")
                    return
                with server.lock:
                    server.refreshes.append(form.get("refresh_token", ""))
                    first = len(server.refreshes) == 1
                if first:
                    server.first_arrived.set()
                    server.second_ready.wait(120)
                    server.second_arrived.wait(HOLD)
                else:
                    server.second_arrived.set()
                    server.first_done.wait(120)
                with server.lock:
                    if form.get("refresh_token") == server.refresh:
                        n = len(server.refreshes)
                        server.access, server.refresh = f"access-{n}", f"refresh-{n}"
                        answer = {
                            "access_token": server.access,
                            "token_type": "Bearer",
                            "expires_in": 3600,
                            "refresh_token": server.refresh,
                        }
                        status = 200
                    else:
                        answer, status = {"error": "invalid_grant"}, 400
                if first:
                    server.first_done.set()
                self._send(status, json.dumps(answer))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> RotatingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.second_ready.set()
        self.second_arrived.set()
        self.first_done.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _expired_state(store: McpCredentialStore, url: str) -> None:
    def change(state: dict) -> None:
        state["clientInformation"] = {
            "client_id": "tau-client",
            "redirect_uris": ["http://127.0.0.1:9/callback"],
            "token_endpoint_auth_method": "none",
        }
        state["tokens"] = {"access_token": "access-0", "token_type": "Bearer", "refresh_token": "refresh-0"}
        state["tokensExpireAt"] = int(time.time() * 1000) - 60_000

    store.update("sso", url, change)


def _client(auth: Path, url: str, *metadata_url: str) -> subprocess.Popen[str]:
    env = tau_env()  # the client script imports this checkout's tau
    return subprocess.Popen(
        [sys.executable, str(CLIENT), str(auth), url, *metadata_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_two_processes_refresh_an_expired_token_once(tmp_path):
    auth = tmp_path / "agent" / "mcp-auth.json"
    store = McpCredentialStore(auth)
    with RotatingServer() as server:
        _expired_state(store, server.url)
        first = _client(auth, server.url)
        second = None
        try:
            assert server.first_arrived.wait(120), first.stderr.read() if first.poll() is not None else ""
            # The first process is inside its refresh now; the second starts with the same expired token.
            second = _client(auth, server.url)
            assert second.stdout is not None
            assert second.stdout.readline().strip() == "ready"
            server.second_ready.set()
            out_first, err_first = first.communicate(timeout=120)
            out_second, err_second = second.communicate(timeout=120)
        finally:
            for proc in (first, second):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait(10)
    assert server.refreshes == ["refresh-0"], (server.refreshes, out_second, err_second)
    assert out_first.splitlines()[-1] == "200 ok", err_first
    # The second process used the tokens the first saved, without refreshing or signing in again.
    assert out_second.splitlines() == ["200 ok"], err_second
    state = json.loads(auth.read_text())[f"mcp__sso|{server.url}"]
    assert state["tokens"]["access_token"] == "access-1" and state["tokens"]["refresh_token"] == "refresh-1"
    assert not refresh_lock_path(auth.parent, f"mcp__sso|{server.url}").exists()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    auth = tmp_path / "agent" / "mcp-auth.json"
    store = McpCredentialStore(auth)
    with RotatingServer() as server:
        server.second_ready.set()
        server.second_arrived.set()
        _expired_state(store, server.url)
        # pi's lock, as a process killed while refreshing leaves it: a directory nobody renews.
        lock = refresh_lock_path(auth.parent, f"mcp__sso|{server.url}")
        lock.mkdir(parents=True)
        os.utime(lock, (time.time() - 60, time.time() - 60))
        proc = _client(auth, server.url)
        out, err = proc.communicate(timeout=120)
    assert out.splitlines()[-1] == "200 ok", err
    assert server.refreshes == ["refresh-0"] and not lock.exists()


def test_a_new_process_refreshes_at_the_configured_metadata_s_token_endpoint(tmp_path):
    # The SDK, knowing no metadata yet, would post the refresh to the server's origin `/token`.
    auth = tmp_path / "agent" / "mcp-auth.json"
    store = McpCredentialStore(auth)
    with RotatingServer(token_path="/as/token") as server:
        server.second_ready.set()
        server.second_arrived.set()
        _expired_state(store, server.url)
        proc = _client(auth, server.url, server.url.replace("/mcp", "/as/metadata"))
        out, err = proc.communicate(timeout=120)
    assert out.splitlines()[-1] == "200 ok", (out, err)
    assert server.refreshes == ["refresh-0"]


def test_a_token_the_server_refuses_before_its_expiry_is_refreshed(tmp_path):
    # pi's onUnauthorized: a 401 with a stored refresh token refreshes (under the lock) and sends again;
    # the SDK alone would start a sign-in.
    auth = tmp_path / "agent" / "mcp-auth.json"
    store = McpCredentialStore(auth)
    with RotatingServer() as server:
        server.second_ready.set()
        server.second_arrived.set()
        _expired_state(store, server.url)
        store.update(
            "sso", server.url, lambda state: state.update(tokensExpireAt=int(time.time() * 1000) + 3_600_000)
        )
        server.access = "access-revoked"  # the server no longer accepts access-0
        proc = _client(auth, server.url)
        out, err = proc.communicate(timeout=120)
    assert out.splitlines() == ["ready", "200 ok"], (out, err)
    assert server.refreshes == ["refresh-0"]
    assert json.loads(auth.read_text())[f"mcp__sso|{server.url}"]["tokens"]["access_token"] == "access-1"


def test_the_lock_is_named_as_pi_names_it(tmp_path):
    # pi's proper-lockfile locks `<agentDir>/mcp-auth-refresh-<16 hex>` as the directory `<that>.lock`,
    # so tau and pi processes sharing an agent dir wait for each other. The hex is from Node:
    # createHash("sha256").update(key).digest("hex").slice(0, 16).
    path = refresh_lock_path(tmp_path, "mcp__sso|https://example.com/mcp")
    assert path == tmp_path / "mcp-auth-refresh-19a7e35a4d677cdb.lock"
