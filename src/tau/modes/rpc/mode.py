"""The RPC mode loop: commands in on stdin, responses and events out on stdout (pi-host §8.2).

Every input line is handled as it arrives, concurrently, like pi's ``void handleInputLine(line)``:
a ``prompt`` is answered as soon as it is accepted (``started`` just before its ``agent_start``,
``queued`` after its ``queue_update``, or ``handled``) while its events keep streaming, so the
client can ``steer``, ``abort`` or ``get_state`` meanwhile. Lines that are not JSON get a
``parse`` error without id; ``extension_ui_response`` lines resolve open dialogs. End of input,
SIGINT, SIGTERM and SIGHUP shut down in order: the run is aborted, extensions get
``session_shutdown``, and the process exits (0 at end of input; 130 / 143 / 129 for the signals, the
codes pi exits with; a second signal exits at once, even while a tool's thread is blocked). Nothing
but protocol records is written to stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from tau.agent.events import to_json_event
from tau.common import jsjson
from tau.common.dataclass import dataclass
from tau.modes.rpc.bash import UserBash
from tau.modes.rpc.commands import COMMANDS, UNSUPPORTED
from tau.modes.rpc.framing import LineSplitter, serialize_line
from tau.modes.rpc.responses import MISSING, error, parse_error, success, unknown_command, unsupported
from tau.modes.rpc.ui import RpcUI
from tau.modes.signal_exit import SIGNAL_EXIT_CODES, exit_now, guard
from tau.modes.std_streams import READER_GONE, silence
from tau.session.errors import SessionWriteError

__all__ = ["RpcMode", "read_stdin_lines"]

# At end of input, commands already received get this long to be answered before the shutdown.
END_OF_INPUT_GRACE_SECONDS = 5.0


@dataclass
class _Preflight:
    """A prompt waiting to be answered; ``eligible`` if its run's ``agent_start`` answers it."""

    request_id: Any
    eligible: bool
    answered: bool = False


class RpcMode:
    """One RPC conversation over a session.

    Args:
        session: The :class:`~tau.agent.session.AgentSession`.
        runner: The extension runner bound to it (``None`` without extensions). Its UI becomes
            :class:`~tau.modes.rpc.ui.RpcUI` and ``ctx.shutdown()`` ends the mode once idle.
        out: Where records go (default: the process's stdout, raw bytes).
    """

    def __init__(self, session: Any, runner: Any = None, out: BinaryIO | None = None) -> None:
        self.session = session
        self.runner = runner
        self._out = out if out is not None else sys.stdout.buffer
        self.ui = RpcUI(self.write)
        self.bash = UserBash(session, self.write, runner)
        self._preflights: list[_Preflight] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._commands: set[asyncio.Task[Any]] = set()
        self._active_commands = 0
        self._shutdown_requested = False
        self._input_ready = False
        self._shutting_down = False
        self._signals = 0
        self._guard_installed = False
        self._reader_gone = False
        self._exit: asyncio.Future[int] | None = None
        self._unsubscribe: Any = None
        self._prompt_reports = "preflight_result" in inspect.signature(session.prompt).parameters
        if runner is not None:
            runner.set_ui(self.ui, "rpc")
            runner.set_shutdown_handler(self._request_shutdown)

    # -- output ------------------------------------------------------------------------------

    def write(self, record: dict[str, Any]) -> None:
        """Write one record and flush (clients read line by line)."""
        self._write_bytes(serialize_line(record))

    def _write_bytes(self, line: bytes) -> None:
        if self._reader_gone:
            return
        try:
            self._out.write(line)
            self._out.flush()
        except BrokenPipeError:
            # The client stopped reading: nobody can see an answer any more. End quietly.
            self._reader_gone = True
            silence(self._out)
            with contextlib.suppress(RuntimeError):  # no loop: the caller is shutting down anyway
                self._spawn(self.shutdown(READER_GONE))

    def attach(self) -> None:
        """Start streaming session events (call before ``session.start()`` so its events are seen)."""
        if self._unsubscribe is None:
            self._unsubscribe = self.session.subscribe(self._on_event)

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "agent_start":
            self._answer_started()
        self.write(to_json_event(event))
        if kind == "agent_settled":
            self._check_shutdown()

    # -- prompts -----------------------------------------------------------------------------

    def _answer(self, preflight: _Preflight, disposition: str) -> None:
        if preflight.answered:
            return
        preflight.answered = True
        self.write(success(preflight.request_id, "prompt", {"disposition": disposition}))

    def _answer_started(self) -> None:
        for preflight in self._preflights:
            if preflight.eligible and not preflight.answered:
                self._answer(preflight, "started")
                return

    def start_prompt(self, request_id: Any, text: str, images: Any, behavior: str | None) -> None:
        """Run ``prompt`` in the background; the response is written once the prompt is accepted."""
        was_streaming = bool(self.session.is_streaming)
        preflight = _Preflight(request_id, eligible=not was_streaming and not self._prompt_reports)
        self._preflights.append(preflight)  # at once: end of input waits for this answer
        self._spawn(self._run_prompt(preflight, text, images, behavior, was_streaming))

    async def _run_prompt(
        self, preflight: _Preflight, text: str, images: Any, behavior: str | None, was_streaming: bool
    ) -> None:
        request_id = preflight.request_id
        options: dict[str, Any] = {"images": images, "streaming_behavior": behavior, "source": "rpc"}
        if self._prompt_reports:
            options["preflight_result"] = lambda disposition: self._answer(preflight, disposition)
        self._active_commands += 1
        try:
            await self.session.prompt(text, **options)
        except Exception as exc:  # boundary: a refused prompt is the client's answer
            # A run that stopped because the session file cannot be written is answered again, with
            # the error, after its "started": the client must learn that the session is not saved.
            if not preflight.answered or isinstance(exc, SessionWriteError):
                preflight.answered = True
                self.write(error(request_id, "prompt", str(exc)))
        else:
            queued = was_streaming and behavior in ("steer", "followUp") and not self._is_command(text)
            self._answer(preflight, "queued" if queued else "handled")
        finally:
            self._preflights.remove(preflight)
            self._active_commands -= 1
            self._check_shutdown()

    def _is_command(self, text: str) -> bool:
        if self.runner is None or not text.startswith("/"):
            return False
        name = text[1:].split(" ", 1)[0]
        return self.runner.get_command(name) is not None

    def refuse_extension_command(self, text: str) -> None:
        """Extension commands cannot be queued (``steer`` / ``follow_up``), as in pi."""
        if self._is_command(text):
            name = text[1:].split(" ", 1)[0]
            raise RuntimeError(
                f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
            )

    # -- input -------------------------------------------------------------------------------

    def handle_line(self, line: str) -> None:
        """Handle one input line (commands run as background tasks, in arrival order).

        Every line gets exactly one response, whatever it holds: a line nested deeper than
        :data:`~tau.common.jsjson.MAX_DEPTH` levels is a parse error like any other that is not JSON.
        """
        try:
            parsed = jsjson.loads(line)
        except (ValueError, RecursionError) as exc:
            self.write(parse_error(str(exc) or type(exc).__name__))
            return
        if isinstance(parsed, dict) and parsed.get("type") == "extension_ui_response":
            self.ui.handle_response(parsed)
            return
        task = self._spawn(self._run_command(parsed if isinstance(parsed, dict) else {}))
        self._commands.add(task)
        task.add_done_callback(self._commands.discard)

    async def _run_command(self, command: dict[str, Any]) -> None:
        request_id = command.get("id", MISSING)
        kind = command.get("type", MISSING)
        self._active_commands += 1
        try:
            response = await self._dispatch(command, request_id, kind)
        except Exception as exc:  # boundary: any failure is the command's error response
            response = error(request_id, kind, str(exc) or type(exc).__name__)
        finally:
            self._active_commands -= 1
        if response is not None:
            self._write_response(response, request_id, kind)
        self._check_shutdown()

    def _write_response(self, response: dict[str, Any], request_id: Any, kind: Any) -> None:
        try:
            line = serialize_line(response)
        except Exception as exc:  # boundary: a response that cannot be written is still answered
            line = serialize_line(error(request_id, kind, f"cannot write the response: {exc}"))
        self._write_bytes(line)

    async def _dispatch(self, command: dict[str, Any], request_id: Any, kind: Any) -> dict[str, Any] | None:
        handler = COMMANDS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            return await handler(self, command)
        if kind in UNSUPPORTED:
            return unsupported(request_id, kind)
        return unknown_command(request_id, kind)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- lifetime ----------------------------------------------------------------------------

    async def run(self, lines: AsyncIterator[str]) -> int:
        """Handle ``lines`` until they end (or a signal, or ``ctx.shutdown()``); returns the exit code."""
        loop = asyncio.get_running_loop()
        self._exit = loop.create_future()
        self.attach()
        self._install_signals(loop)
        reader = loop.create_task(self._read(lines))
        self._input_ready = True
        self._check_shutdown()
        try:
            return await self._exit
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            self._remove_signals(loop)

    async def _read(self, lines: AsyncIterator[str]) -> None:
        async for line in lines:
            try:
                self.handle_line(line)
            except Exception as exc:  # boundary: one line never ends the conversation
                self.write(error(MISSING, "parse", f"internal error: {exc or type(exc).__name__}"))
            await asyncio.sleep(0)  # let the line's task start before the next line
        await self._answer_received_commands()
        await self.shutdown(0)

    async def _answer_received_commands(self) -> None:
        """End of input: dialogs can no longer be answered, user bash commands stop, and every
        command already received is answered (a prompt once accepted; its run is then aborted)."""
        self.ui.close()
        self.bash.abort()
        deadline = asyncio.get_running_loop().time() + END_OF_INPUT_GRACE_SECONDS
        while self._commands or any(not p.answered for p in self._preflights):
            if asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.005)

    def _request_shutdown(self) -> None:
        self._shutdown_requested = True
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_soon(self._check_shutdown)

    def _check_shutdown(self) -> None:
        if not self._shutdown_requested or self._shutting_down or not self._input_ready:
            return
        if self._active_commands > 0 or not self.session.is_idle():
            return
        self._spawn(self.shutdown(0))

    async def shutdown(self, code: int = 0) -> None:
        """Stop streaming, abort the run, tell extensions (``session_shutdown``), finish with ``code``."""
        if self._shutting_down:
            return
        self._shutting_down = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.ui.cancel_all()
        self.bash.abort()
        try:
            await self.session.shutdown()
        finally:
            with contextlib.suppress(BrokenPipeError):
                self._out.flush()
            for task in list(self._tasks):
                if task is not asyncio.current_task():
                    task.cancel()
            if self._exit is not None and not self._exit.done():
                self._exit.set_result(code)

    def _on_signal(self, name: str) -> None:
        """The first signal (in the loop): stop, answer what can be answered, exit with its code.

        A second one, or an orderly stop that takes longer than the guard's grace, exits at once
        (:class:`~tau.modes.signal_exit.SignalGuard`).
        """
        self._signals += 1
        from tau.tools.shell import kill_tracked_groups

        kill_tracked_groups()
        if not self._shutting_down:
            self._spawn(self.shutdown(SIGNAL_EXIT_CODES[name]))
        elif self._signals > 1:
            exit_now(SIGNAL_EXIT_CODES[name])

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        self._guard_installed = not guard.installed and guard.install()
        guard.attach(loop, self._on_signal)

    def _remove_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        guard.detach()
        if self._guard_installed:  # an embedding caller: its process outlives the mode
            guard.disarm()
            guard.restore()


async def read_stdin_lines(fd: int | None = None, chunk_size: int = 65536) -> AsyncIterator[str]:
    """Lines of a file descriptor (default: stdin), LF-framed, read by a helper thread.

    A thread reading the raw descriptor works for pipes, files and terminals alike and never holds
    the interpreter's stdin lock (so exit is not blocked by a pending read).
    """
    fd = sys.stdin.fileno() if fd is None else fd
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, chunk_size)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, data)
            except RuntimeError:  # the loop is gone: the mode has ended
                return
            if not data:
                return

    threading.Thread(target=pump, name="tau-rpc-stdin", daemon=True).start()
    splitter = LineSplitter()
    while True:
        data = await chunks.get()
        if not data:
            break
        for line in splitter.feed(data):
            yield line
    for line in splitter.end():
        yield line
