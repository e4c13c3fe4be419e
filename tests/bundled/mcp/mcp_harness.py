"""What the MCP tests share: the issue-29 server (the SDK's own server library), configs, a tau
command line with the scripted model, and process checks by pid."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import tau_process
from tau_process import tau_command

REPO = Path(__file__).resolve().parents[3]
SERVER = REPO / "tests" / "regressions" / "data" / "pi29" / "server.py"
FACTORY = f"{REPO / 'tests' / 'regressions' / 'pi22_faux.py'}:respond"
# A loaded machine takes seconds to import the SDK in a server; no test may depend on how fast.
STARTUP_WAIT = "120"


def stdio_server(**extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry for the issue-29 server over stdio."""
    return {"command": sys.executable, "args": [str(SERVER)], **extra}


def write_config(directory: Path, servers: dict[str, Any], **top: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mcp.json"
    path.write_text(json.dumps({**top, "mcpServers": servers}, indent=2))
    return path


def call(tool: str, arguments: dict[str, Any] | None = None) -> str:
    """A prompt the scripted model answers with that tool call."""
    return f"call: {tool} " + json.dumps(arguments or {}, separators=(",", ":"))


def tau_argv(
    tmp_path: Path, *args: str, extensions: tuple[str, ...] = ("builtin:mcp", "builtin:tool-search")
) -> list[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": FACTORY}]))
    loaded = [item for name in extensions for item in ("-e", name)]
    return tau_command(
        "--offline", "-ne", *loaded, "--model", "faux/faux-1", "--faux-script", str(script), *args
    )


def tau_env(agent_dir: Path, **extra: str) -> dict[str, str]:
    given = {"TAU_MCP_STARTUP_WAIT": STARTUP_WAIT, "TAU_FAUX_SCRIPT": None, **extra}
    return tau_process.tau_env(given, agent_dir=agent_dir)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids(path: Path) -> list[int]:
    """The server and helper pids a pid file lists."""
    if not path.exists():
        return []
    return [int(word) for line in path.read_text().splitlines() for word in line.split()]


def wait_until(condition: Any, timeout: float = 60.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:.0f} s")
        time.sleep(0.05)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """The issue-29 server over streamable HTTP on a free loopback port."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None) -> None:
        import subprocess

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

        def accepting() -> bool:
            import socket

            if self.proc.poll() is not None:
                raise AssertionError("the HTTP MCP server exited")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            except OSError:
                return False
            return True

        wait_until(accepting, 120, "the HTTP MCP server to accept connections")

    def stop(self) -> None:
        import subprocess

        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
