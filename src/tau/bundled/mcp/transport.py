"""Opening an MCP server's transport with the official SDK: stdio (under the guard) or streamable HTTP.

stdio servers get ``command``/``args``/``cwd`` with ``~/`` expanded (relative ``cwd`` against the
session's directory) and tau's environment plus ``env`` (``${VAR}`` and ``!command`` values resolved
now); their stderr is kept (the last 2,000 characters, for error reports) and appended to
``mcp.log``. HTTP servers get ``headers`` (resolved the same way) and, unless one of them is
``Authorization`` or ``auth`` names a provider, OAuth with the tokens in ``mcp-auth.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from tau.bundled.mcp.guard import guarded_command
from tau.extension import resolve_config_value_or_raise

__all__ = ["STDERR_TAIL_CHARS", "StderrTail", "expand_home", "open_transport", "uses_oauth"]

STDERR_TAIL_CHARS = 2_000


def expand_home(value: str) -> str:
    """``~`` and ``~/…`` name the home directory, as in a shell."""
    if value == "~":
        return str(Path.home())
    if value.startswith("~/"):
        return str(Path.home() / value[2:])
    return value


def uses_oauth(config: dict[str, Any]) -> bool:
    """HTTP servers authenticate with OAuth unless the config sends an ``Authorization`` header or ``auth``."""
    if "url" not in config or config.get("auth"):
        return False
    return not any(header.lower() == "authorization" for header in config.get("headers") or {})


class StderrTail:
    """A stdio server's stderr: read from a pipe, kept as a bounded tail, each line passed on."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self._on_line = on_line
        self._tail = ""
        self._partial = ""
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_fd = read_fd
        # What the SDK hands the child as its stderr (it needs a file object with a descriptor).
        self.file = os.fdopen(write_fd, "w")
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_fd, self._read)
        self._closed = False

    @property
    def text(self) -> str:
        return self._tail

    def _read(self) -> None:
        try:
            chunk = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._finish()
            return
        text = chunk.decode("utf-8", "replace")
        self._tail = (self._tail + text)[-STDERR_TAIL_CHARS:]
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._on_line(line.rstrip("\r"))

    def _finish(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._partial:
            self._on_line(self._partial)
            self._partial = ""
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._read_fd)
        with contextlib.suppress(OSError):
            os.close(self._read_fd)

    def close_writer(self) -> None:
        """tau's copy of the write end: the child holds its own once started."""
        with contextlib.suppress(OSError):
            self.file.close()

    def close(self) -> None:
        self.close_writer()
        self._finish()


def _stdio_parameters(name: str, config: dict[str, Any], cwd: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = dict(os.environ)
    for key, value in (config.get("env") or {}).items():
        env[key] = resolve_config_value_or_raise(value, f'MCP server "{name}" env "{key}"', cached=False)
    command, args = guarded_command(
        expand_home(config["command"]), [expand_home(arg) for arg in config.get("args") or []]
    )
    return StdioServerParameters(
        command=command,
        args=args,
        env=env,
        cwd=str(Path(cwd, expand_home(config.get("cwd") or ".")).resolve()),
        encoding_error_handler="replace",
    )


@contextlib.asynccontextmanager
async def open_transport(
    name: str,
    config: dict[str, Any],
    cwd: str,
    *,
    stderr: StderrTail | None = None,
    headers: dict[str, str] | None = None,
    auth: Any = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The ``(read, write)`` streams of the server's transport; closing them stops a stdio server."""
    if "url" in config:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers or None, auth=auth)
        async with client, streamable_http_client(config["url"], http_client=client) as streams:
            yield streams
        return
    from mcp.client.stdio import stdio_client

    parameters = _stdio_parameters(name, config, cwd)
    errlog = stderr.file if stderr is not None else open(os.devnull, "w")  # noqa: SIM115 - closed below
    try:
        async with stdio_client(parameters, errlog=errlog) as streams:
            if stderr is not None:
                stderr.close_writer()  # EOF on the pipe once the server (and the guard) are gone
            yield streams
    finally:
        if stderr is None:
            errlog.close()


def resolved_headers(name: str, config: dict[str, Any]) -> dict[str, str]:
    """The configured HTTP headers with ``${VAR}`` and ``!command`` values resolved (raises naming the header)."""
    return {
        header: resolve_config_value_or_raise(value, f'MCP server "{name}" header "{header}"', cached=False)
        for header, value in (config.get("headers") or {}).items()
    }
