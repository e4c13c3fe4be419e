"""The host side of one script run: the worker process, the calls it makes, its deadline and abort.

Each run starts ``worker.py`` in a fresh interpreter (``python -P``) and exchanges JSON lines with it
(see that module). Tool calls and globals run here, in tau's event loop; the script only ever sees
their JSON results. The first terminal event wins: the script's ``done``, a crash of the worker,
the deadline, or an abort; then running calls are aborted through their signals (a running ``bash``
is killed), and the worker process is killed, which stops a script in any state.

At most ``TAU_CODEMODE_MAX_WORKERS`` (default 2) workers run at once per event loop; later scripts
wait for a free one in arrival order, within their deadline and at most 60 seconds (pi's rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signal_module
import sys
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.bundled.codemode.prelude import PRELUDE
from tau.bundled.codemode.source import to_identifier
from tau.common.dataclass import dataclass
from tau.extension import AbortSignal

__all__ = [
    "UNDEFINED",
    "WORKER_WAIT_MS",
    "SandboxGlobal",
    "SandboxTool",
    "ScriptCallError",
    "ScriptError",
    "ScriptResult",
    "max_workers",
    "release_worker",
    "reserve_worker",
    "run_script",
]

WORKER = Path(__file__).with_name("worker.py")
DEFAULT_MAX_WORKERS = 2
WORKER_WAIT_MS = 60_000
# One output line may carry an image of up to 16 Mi characters of base64.
_LINE_LIMIT = 64 * 1024 * 1024
_STDERR_TAIL = 2000


class _Undefined:
    """JavaScript's ``undefined`` (``None`` is ``null``)."""

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()


class ScriptCallError(Exception):
    """A call failed; the script's promise rejects with an ``Error`` carrying this message."""


@dataclass
class SandboxTool:
    name: str
    description: str
    execute: Callable[[Any, AbortSignal], Awaitable[Any]]

    @property
    def js_name(self) -> str:
        return to_identifier(self.name)


@dataclass
class SandboxGlobal:
    """A top-level function (``searchTools``) or a member of a frozen object (``models.classify``)."""

    name: str
    execute: Callable[[Any, AbortSignal], Any]
    spread: bool = True


@dataclass
class ScriptError:
    kind: str  # "script" | "timeout" | "aborted" | "sandbox"
    message: str
    name: str | None = None
    stack: str | None = None


@dataclass
class ScriptResult:
    ok: bool
    output: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    value: Any = UNDEFINED
    error: ScriptError | None = None
    store_writes: dict[str, Any] = field(default_factory=lambda: {"set": {}, "delete": []})


# -- worker slots ---------------------------------------------------------------------------------


def max_workers() -> int:
    """``TAU_CODEMODE_MAX_WORKERS`` when it is a positive integer, read per call."""
    try:
        value = int(os.environ.get("TAU_CODEMODE_MAX_WORKERS", ""))
    except ValueError:
        return DEFAULT_MAX_WORKERS
    return value if value > 0 else DEFAULT_MAX_WORKERS


class _Slots:
    def __init__(self) -> None:
        self.active = 0
        self.waiters: deque[asyncio.Future[None]] = deque()

    def admit(self) -> None:
        while self.waiters and self.active < max_workers():
            waiter = self.waiters.popleft()
            if not waiter.done():
                self.active += 1
                waiter.set_result(None)

    def release(self) -> None:
        self.active -= 1
        self.admit()


_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Slots] = weakref.WeakKeyDictionary()


def _slots() -> _Slots:
    loop = asyncio.get_running_loop()
    slots = _SLOTS.get(loop)
    if slots is None:
        slots = _SLOTS[loop] = _Slots()
    return slots


async def reserve_worker(signal: AbortSignal | None, timeout_ms: float) -> str:
    """Wait for a free worker: ``"reserved"`` (release it with the returned run), ``"aborted"``, or
    ``"timeout"``."""
    if signal is not None and signal.aborted:
        return "aborted"
    slots = _slots()
    if not slots.waiters and slots.active < max_workers():
        slots.active += 1
        return "reserved"
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    slots.waiters.append(waiter)
    slots.admit()
    remove = signal.add_callback(lambda: waiter.done() or waiter.cancel()) if signal is not None else None
    try:
        await asyncio.wait_for(
            asyncio.shield(waiter), None if timeout_ms == float("inf") else timeout_ms / 1000
        )
        return "reserved"
    except (TimeoutError, asyncio.CancelledError):
        if waiter.done() and not waiter.cancelled():
            return "reserved"
        waiter.cancel()
        with contextlib.suppress(ValueError):
            slots.waiters.remove(waiter)
        if signal is not None and signal.aborted:
            return "aborted"
        return "timeout"
    finally:
        if remove is not None:
            remove()


def release_worker() -> None:
    """Give back the slot :func:`reserve_worker` reserved (once its worker has exited)."""
    _slots().release()


# -- one run --------------------------------------------------------------------------------------


@dataclass
class _Pending:
    record: dict[str, Any] | None
    started: float
    signal: AbortSignal


class _Run:
    def __init__(
        self,
        code: str,
        tools: list[SandboxTool],
        globals_: list[SandboxGlobal],
        signal: AbortSignal | None,
    ) -> None:
        self.code = code
        self.tools = {tool.name: tool for tool in tools}
        self.globals = {item.name: item for item in globals_}
        self.signal = signal
        self.output: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.pending: dict[int, _Pending] = {}
        self.result: asyncio.Future[ScriptResult] = asyncio.get_running_loop().create_future()
        self.process: asyncio.subprocess.Process | None = None
        self.stderr = b""
        self.stderr_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # terminal events ---------------------------------------------------------------------------

    def finish(self, error: ScriptError | None, value: Any = UNDEFINED, writes: Any = None) -> None:
        if self.result.done():
            return
        now = time.perf_counter()
        for pending in self.pending.values():
            if pending.record is not None:
                pending.record["durationMs"] = (now - pending.started) * 1000
            pending.signal.abort("Script ended")
        self.pending.clear()
        if error is not None:
            result = ScriptResult(False, self.output, self.calls, error=error)
        else:
            result = ScriptResult(True, self.output, self.calls, value=value)
            if writes is not None:
                result.store_writes = writes
        self._kill()
        self.result.set_result(result)

    def _kill(self) -> None:
        # os.kill, not Process.kill: Popen.send_signal polls first, and a poll that reaps a worker
        # which just exited on its own leaves asyncio's child watcher an "Unknown child process".
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.process.pid, signal_module.SIGKILL)

    # messages from the worker -----------------------------------------------------------------

    async def read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while not self.result.done():
            try:
                line = await stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                self.finish(ScriptError("sandbox", "The script sent a message larger than 64 MiB"))
                return
            if not line:
                break
            try:
                self.receive(json.loads(line))
            except Exception as exc:  # a message the host cannot decode ends the run
                self.finish(ScriptError("sandbox", f"Sandbox host failed: {exc}"))
                return
        if not self.result.done():
            await self._collect_stderr()
            code = await self.process.wait()
            tail = self.stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
            detail = f": {tail}" if tail else ""
            self.finish(
                ScriptError("sandbox", f"The codemode worker exited unexpectedly (code {code}){detail}")
            )

    async def _collect_stderr(self) -> None:
        task = self.stderr_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), 5)

    async def read_stderr(self) -> None:
        """Keep the tail of what the worker writes to stderr (only a crash of the interpreter does)."""
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr = (self.stderr + chunk)[-_STDERR_TAIL * 4 :]

    def receive(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "output":
            self.output.append(message["item"])
        elif kind == "call":
            task = asyncio.get_running_loop().create_task(self.call(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == "done":
            if message.get("ok"):
                value = UNDEFINED if message.get("value") is None else json.loads(message["value"])
                self.finish(None, value, _store_writes(message.get("writes") or "[]"))
            else:
                self.finish(_script_error(message.get("error") or "{}"))
        elif kind == "crash":
            self.finish(ScriptError("sandbox", str(message.get("message"))))
        else:
            raise ValueError(f"unknown message from the worker: {kind!r}")

    async def call(self, message: dict[str, Any]) -> None:
        call_id, name = int(message["id"]), str(message["name"])
        is_tool = message.get("target") == "tool"
        record = {"name": name, "status": "cancelled", "durationMs": 0} if is_tool else None
        if record is not None:
            self.calls.append(record)
        signal = AbortSignal()
        pending = _Pending(record, time.perf_counter(), signal)
        self.pending[call_id] = pending
        reply: dict[str, Any]
        try:
            target = (self.tools if is_tool else self.globals).get(name)
            if target is None:
                raise ScriptCallError(f'Unknown {"tool" if is_tool else "global"} "{name}"')
            args = None if message.get("args") is None else json.loads(message["args"])
            value = target.execute(args, signal)
            if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
                value = await value
            reply = {"id": call_id, "ok": True, "payload": None if value is UNDEFINED else _js_json(value)}
            status = "ok"
        except Exception as exc:
            reply = {"id": call_id, "ok": False, "payload": str(exc)}
            status = "error"
        if self.pending.pop(call_id, None) is None:
            return  # the run ended meanwhile: the record stays "cancelled"
        if record is not None:
            record["status"] = status
            record["durationMs"] = (time.perf_counter() - pending.started) * 1000
        await self.send(reply)

    async def send(self, message: dict[str, Any]) -> None:
        if self.result.done() or self.process is None or self.process.stdin is None:
            return
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the worker is gone; its exit ends the run


def _js_json(value: Any) -> str:
    from tau.common import jsjson

    return jsjson.dumps_str(value)


def _store_writes(text: str) -> dict[str, Any]:
    entries = json.loads(text)
    writes: dict[str, Any] = {"set": {}, "delete": []}
    for entry in entries:
        if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
            raise ValueError("store writes contain a malformed entry")
        if len(entry) == 1:
            writes["delete"].append(entry[0])
        else:
            writes["set"][entry[0]] = json.loads(entry[1])
    return writes


def _script_error(text: str) -> ScriptError:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        raise ValueError("script error is malformed")
    return ScriptError("script", data["message"], data.get("name"), data.get("stack"))


def _serialized_store(store: dict[str, Any] | None) -> dict[str, str]:
    out = {}
    for key, value in (store or {}).items():
        if value is UNDEFINED:
            continue
        out[key] = _js_json(value)
    return out


async def run_script(
    code: str,
    *,
    tools: list[SandboxTool],
    globals_: list[SandboxGlobal] = (),  # type: ignore[assignment]
    store: dict[str, Any] | None = None,
    timeout_ms: float = float("inf"),
    memory_limit: int | None = None,
    signal: AbortSignal | None = None,
    on_started: Callable[[], None] | None = None,
    release: Callable[[], None] | None = None,
) -> ScriptResult:
    """Run ``code`` (an async function body) in a new worker; never raises for script failures.

    ``release`` is called once the worker process has exited (a reserved worker slot).
    """
    run = _Run(code, list(tools), list(globals_), signal)
    timer = None
    remove_abort = None
    if signal is not None:
        if signal.aborted:
            if release is not None:
                release()
            return ScriptResult(False, error=ScriptError("aborted", _abort_message(signal)))
        remove_abort = signal.add_callback(lambda: run.finish(ScriptError("aborted", _abort_message(signal))))
    if timeout_ms != float("inf"):
        timer = asyncio.get_running_loop().call_later(
            timeout_ms / 1000,
            lambda: run.finish(ScriptError("timeout", f"Execution timed out after {_ms(timeout_ms)} ms")),
        )
    try:
        run.process = await asyncio.create_subprocess_exec(
            sys.executable,
            # The interpreter tau runs in (so quickjs imports wherever tau's does), without the
            # worker's own folder on the path: its neighbours would shadow modules of those names.
            "-P",
            str(WORKER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LINE_LIMIT,
        )
    except OSError as exc:
        run.finish(ScriptError("sandbox", f"Could not start the codemode worker: {exc}"))
        if release is not None:
            release()
    else:
        process = run.process
        if release is not None:
            _release_on_exit(process, release)
        if run.result.done():  # aborted or timed out while the worker started
            run._kill()
        else:
            if on_started is not None:
                on_started()
            start = {
                "code": code,
                "prelude": PRELUDE,
                "tools": [
                    {"name": tool.name, "jsName": tool.js_name, "description": tool.description}
                    for tool in tools
                ],
                "globals": [{"name": item.name, "spread": item.spread} for item in globals_],
                "store": _serialized_store(store),
                "memoryLimit": memory_limit,
            }
            await run.send(start)
            loop = asyncio.get_running_loop()
            run.stderr_task = loop.create_task(run.read_stderr())
            reader = loop.create_task(run.read())
            for task in (reader, run.stderr_task):
                run._tasks.add(task)
                task.add_done_callback(run._tasks.discard)
    try:
        result = await asyncio.shield(run.result)
    except asyncio.CancelledError:
        run.finish(ScriptError("aborted", "Execution aborted"))
        raise
    finally:
        if timer is not None:
            timer.cancel()
        if remove_abort is not None:
            remove_abort()
    # The worker exits after "done" or was killed: reap it, so nothing outlives the caller's loop.
    if run.process is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(run.process.wait(), 10)
    return result


def _release_on_exit(process: asyncio.subprocess.Process, release: Callable[[], None]) -> None:
    async def wait() -> None:
        try:
            await process.wait()
        finally:
            release()

    task = asyncio.get_running_loop().create_task(wait())
    _EXITS.add(task)
    task.add_done_callback(_EXITS.discard)


_EXITS: set[asyncio.Task[Any]] = set()


def _abort_message(signal: AbortSignal) -> str:
    reason = signal.reason
    return reason if isinstance(reason, str) and reason else "This operation was aborted"


def _ms(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
