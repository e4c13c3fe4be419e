"""The MCP server of the issue-29 goldens, written with the official SDK's server library
(``MCPServer``, the FastMCP of mcp 1.x). Both real pi 1.6 and tau connect to it.

    python server.py                 # stdio
    python server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp

With ``MCP_TEST_PID_FILE`` set, the server starts a helper process (``sleep``) and appends both pids
to that file as it starts. With ``MCP_TEST_BARRIER=DIR:N`` it leaves a file in ``DIR`` and answers
nothing until ``N`` servers have (so N servers all start only when they are started together).
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

# A 2x2 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="
)

server = MCPServer("demo", instructions="Demo tools for tests.\nA second line the summary leaves out.")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ValueError(f"failed: {reason}")


@server.tool()
def picture() -> Image:
    """A tiny picture."""
    return Image(data=PNG, format="png")


@server.tool()
def big(size: int) -> str:
    """Return a text of size bytes."""
    lines = "".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(size // 51 + 1))
    return lines[:size]


@server.tool()
def crash() -> str:
    """Crash the server in the middle of the call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def hang() -> str:
    """Never answer."""
    time.sleep(3600)
    return "late"


@server.resource("docs://readme", description="The readme")
def readme() -> str:
    return "Read me first."


@server.resource("docs://pages/{name}")
def page(name: str) -> str:
    return f"Page {name}"


def _barrier(spec: str) -> None:
    folder, count = spec.rsplit(":", 1)
    with open(os.path.join(folder, str(os.getpid())), "w"):
        pass
    deadline = time.monotonic() + 300
    while len(os.listdir(folder)) < int(count):
        if time.monotonic() > deadline:
            sys.exit("the other servers never started")
        time.sleep(0.05)


if __name__ == "__main__":
    if os.environ.get("MCP_TEST_BARRIER"):
        _barrier(os.environ["MCP_TEST_BARRIER"])
    if os.environ.get("MCP_TEST_PID_FILE"):  # process tests find the server (and a helper) by pid
        import subprocess

        # A helper process, as wrappers like npx leave one: it must end with the server too.
        helper = subprocess.Popen(["sleep", "3600"])
        with open(os.environ["MCP_TEST_PID_FILE"], "a") as handle:
            handle.write(f"{os.getpid()} {helper.pid}\n")
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
