"""An in-process RPC client: a real session (faux model) behind :class:`tau.modes.rpc.RpcMode`.

The client writes command lines into the mode and reads back the records it writes, as a
program talking to ``tau --mode rpc`` over pipes would, without the subprocess.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from tau.llm.providers import faux
from tau.modes.rpc import RpcMode
from tau.modes.run import build_runtime, parse_args


class _Capture:
    """A binary stdout that hands each written line to the client."""

    def __init__(self, client: RpcClient) -> None:
        self._client = client
        self.raw = bytearray()

    def write(self, data: bytes) -> int:
        self.raw += data
        for line in bytes(data).split(b"\n")[:-1]:
            self._client._received(json.loads(line))
        return len(data)

    def flush(self) -> None:
        return None


class RpcClient:
    """Drives one :class:`RpcMode`; use ``async with RpcClient.start(...) as client``."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.mode: RpcMode | None = None
        self.runtime: Any = None
        self._task: asyncio.Task[int] | None = None
        self.out = _Capture(self)

    @classmethod
    async def start(
        cls, *cli: str, script: list[dict] | None = None, extensions: list[Any] = ()
    ) -> RpcClient:
        """Build the session from ``tau`` command-line arguments and start the mode."""
        from tau.extension.loader import load_factory

        client = cls()
        args = parse_args(["--mode", "rpc", "-ne", "--model", "faux/faux-1", *cli])
        client.runtime = await build_runtime(args, "rpc")
        if script is not None:  # this session's script (its registry's), as --faux-script gives one
            client.runtime.session.model_registry.faux = faux.provider_for(script)
        for factory in extensions:
            await load_factory(client.runtime.extensions, factory, path=f"<inline:{factory.__name__}>")
        client.mode = RpcMode(client.runtime.session, client.runtime.extensions, client.out)
        client._task = asyncio.get_running_loop().create_task(client.mode.run(client._input()))
        await asyncio.sleep(0)
        return client

    async def __aenter__(self) -> RpcClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._task is not None and not self._task.done():
            await self.close()
        self.runtime.session.session_manager.close()

    async def _input(self) -> AsyncIterator[str]:
        while (line := await self._lines.get()) is not None:
            yield line

    def _received(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        self._changed.set()

    # -- sending -----------------------------------------------------------------------------

    def send_line(self, line: str) -> None:
        self._lines.put_nowait(line)

    def send(self, **command: Any) -> None:
        self.send_line(json.dumps(command))

    async def close(self, timeout: float = 60) -> int:
        """End of input; returns the mode's exit code."""
        self._lines.put_nowait(None)
        assert self._task is not None
        return await asyncio.wait_for(self._task, timeout)

    # -- receiving ---------------------------------------------------------------------------
    # The timeouts only keep a broken test from hanging: generous, so a loaded machine never hits them.

    async def wait_for(self, predicate: Any, timeout: float = 60, start: int = 0) -> dict[str, Any]:
        """The first record (from index ``start``) matching ``predicate``, waiting for it if needed."""

        async def scan() -> dict[str, Any]:
            seen = start
            while True:
                for record in self.records[seen:]:
                    if predicate(record):
                        return record
                seen = len(self.records)
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def response(self, request_id: str, timeout: float = 60) -> dict[str, Any]:
        return await self.wait_for(
            lambda r: r.get("type") == "response" and r.get("id") == request_id, timeout
        )

    async def request(self, timeout: float = 60, **command: Any) -> dict[str, Any]:
        """Send a command with an id and return its response."""
        command.setdefault("id", f"r{len(self.records)}-{command['type']}")
        self.send(**command)
        return await self.response(command["id"], timeout)

    async def event(self, kind: str, timeout: float = 60, start: int = 0) -> dict[str, Any]:
        return await self.wait_for(lambda r: r.get("type") == kind, timeout, start)

    async def settled(self, start: int = 0, timeout: float = 60) -> dict[str, Any]:
        return await self.event("agent_settled", timeout, start)

    def types(self, start: int = 0) -> list[str]:
        return [r.get("type") for r in self.records[start:]]
