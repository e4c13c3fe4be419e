"""``<agentDir>/mcp.log``: what MCP servers say (pi ``extensions/mcp/log.ts``), plus their stderr.

``notifications/message`` lines read ``<time> [<server>] <level> <logger>: <message>`` as in pi;
tau also appends a stdio server's stderr (``<time> [<server>] stderr: <line>``), so a server that
fails or dies can be diagnosed from the file the report names. Several tau processes may write the
file: every line is one append. It moves to ``mcp.log.1`` past 5 MB. Write errors are ignored:
logging must never break a tool.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["MAX_LOG_BYTES", "McpServerLog", "format_log_message"]

MAX_LOG_BYTES = 5 * 1024 * 1024


def _iso(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _text(data: Any) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(data)


def format_log_message(server: str, params: Any, now: datetime | None = None) -> str:
    """One ``notifications/message`` as a log line; continuation lines are indented."""
    message = params if isinstance(params, dict) else {"data": params}
    level = message.get("level") if isinstance(message.get("level"), str) else "info"
    logger = f" {message['logger']}:" if isinstance(message.get("logger"), str) and message["logger"] else ""
    text = _text(message.get("data")).replace("\r\n", "\n").replace("\n", "\n    ")
    return f"{_iso(now or datetime.now(UTC))} [{server}] {level}{logger} {text}\n"


class McpServerLog:
    """Appends server messages to one file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._size: int | None = None

    def write(self, server: str, params: Any) -> None:
        """A ``notifications/message`` of ``server``."""
        self._append(format_log_message(server, params))

    def stderr(self, server: str, line: str) -> None:
        """A line a stdio server wrote to its stderr."""
        self._append(f"{_iso(datetime.now(UTC))} [{server}] stderr: {line}\n")

    def _append(self, line: str) -> None:
        data = line.encode("utf-8", "replace")
        try:
            if self._size is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._size = self._current_size()
            if self._size > MAX_LOG_BYTES:
                # Another process may have rotated it already; check before renaming.
                if self._current_size() > MAX_LOG_BYTES:
                    os.replace(self.path, f"{self.path}.1")
                self._size = self._current_size()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self._size += len(data)
        except OSError:
            pass  # the log is best effort

    def _current_size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0
