"""A loopback HTTP server that replays scripted responses (SSE streams included) and records requests.

Used by the provider tests: the real ``anthropic`` / ``openai`` SDKs talk to it over 127.0.0.1, so
the SDK really parses the bytes, and the test asserts on the request bodies that went out.

A scripted :class:`Reply` is sent with chunked transfer encoding, one chunk per piece, so a reply
that stops early (``cut=True``) closes the socket in the middle of the body, the way a dropped
connection looks to a client. ``hang=True`` keeps the connection open after the pieces until the
client goes away or the server stops (for abort tests); ``stall=True`` sends nothing at all until
then (for timeout tests).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tau.llm.stream import StreamOptions

__all__ = [
    "BASH_TOOL",
    "READ_TOOL",
    "Captured",
    "LoopbackServer",
    "Reply",
    "event_types",
    "json_reply",
    "run_stream",
    "sse",
    "sse_reply",
    "system",
    "user",
]


@dataclass
class Reply:
    """One scripted HTTP response."""

    status: int = 200
    pieces: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    cut: bool = False  # close the socket after the pieces, without the final chunk
    hang: bool = False  # after the pieces, keep the connection open until the client leaves
    delay: float = 0.0  # seconds between pieces
    stall: bool = False  # send nothing at all, not even the status line, until the client leaves


@dataclass
class Captured:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event; ``data`` is JSON-encoded unless it is already ``str``/``bytes``."""
    if isinstance(data, bytes):
        payload = data.decode()
    elif isinstance(data, str):
        payload = data
    else:
        payload = json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def sse_reply(events: list[bytes], **kwargs: Any) -> Reply:
    return Reply(pieces=list(events), **kwargs)


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    all_headers = {"content-type": "application/json", **(headers or {})}
    return Reply(status=status, pieces=[json.dumps(body).encode()], headers=all_headers)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {key.lower(): value for key, value in self.headers.items()}
        self.server.owner.captured.append(Captured(self.command, self.path, headers, body))
        reply = self.server.owner.next_reply()
        try:
            self._send(reply)
        except OSError:
            pass  # the client went away (abort tests)

    def _send(self, reply: Reply) -> None:
        if reply.stall:
            self._wait_for_client()
            return
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.flush()
        for piece in reply.pieces:
            if reply.delay:
                time.sleep(reply.delay)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        if reply.cut:
            self._drop()
            return
        if reply.hang:
            self._wait_for_client()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True

    def _drop(self) -> None:
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _wait_for_client(self) -> None:
        """Block until the client closes its side, or the server stops."""
        self.connection.settimeout(0.05)
        while not self.server.owner.stopping.is_set():
            try:
                if self.connection.recv(1) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LoopbackServer


class LoopbackServer:
    """``with LoopbackServer([Reply(...), ...]) as server:`` then point a client at ``server.url``."""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.captured: list[Captured] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def next_reply(self) -> Reply:
        with self._lock:
            if not self.replies:
                return json_reply(500, {"error": {"message": "loopback: no reply scripted"}})
            return self.replies.pop(0)

    @property
    def bodies(self) -> list[Any]:
        return [request.body for request in self.captured]

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# -- running a provider call -----------------------------------------------------------------


def run_stream(stream_fn, model, context, options: StreamOptions | None = None, *, timeout: float = 30.0):
    """Run one provider call; returns ``(events, final_message)``."""

    async def main():
        stream = stream_fn(model, context, options)
        events = [event async for event in stream]
        return events, await stream.result()

    return asyncio.run(asyncio.wait_for(main(), timeout))


def event_types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def system(prompt: str, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "system", "content": prompt}
    if tools:
        message["toolsAdded"] = tools
    message["timestamp"] = 0
    return message


BASH_TOOL = {
    "name": "bash",
    "description": "Run a command",
    "parameters": {
        "type": "object",
        "required": ["command"],
        "properties": {"command": {"type": "string", "description": "Shell command"}},
    },
}
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
}
