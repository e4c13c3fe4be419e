"""The RPC ``bash`` command: a user's shell command, outside the model's tool calls.

pi 1.6 ``AgentSession.executeBash`` / ``bash-executor.ts``: output is streamed as
``bash_execution_update {id, delta}`` events (ANSI escapes, control characters and CRs removed),
the result is ``{output, exitCode, cancelled, truncated, fullOutputPath?}`` with the output cut to
its tail (2000 lines / 50 KB; the whole output then goes to ``<tmpdir>/tau-bash-<hex>.log``), and
:meth:`~tau.agent.session.AgentSession.record_bash_result` stores the ``bashExecution`` message
(after the current run when one is streaming, so a tool call and its result stay adjacent). A ``user_bash`` extension handler may answer the
command itself (``{"result"}``) or supply the shell (``{"operations"}``), as in pi.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from tau.llm.stream import AbortSignal
from tau.tools.bash_exec import CommandAborted, LocalBashOperations
from tau.tools.output import create_output_file, write_all
from tau.tools.shell import shell_environment
from tau.tools.truncate import DEFAULT_MAX_BYTES, truncate_tail

__all__ = ["UserBash", "sanitize_output"]

# CSI / OSC / two-character escape sequences (strip-ansi's pattern, simplified to what shells emit).
_ANSI = re.compile(
    r"[\u001b\u009b][\[\]()#;?]*(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007"
    r"|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]))"
)
_BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufff9-\ufffb]")


def sanitize_output(text: str) -> str:
    """What pi shows of raw shell output: no ANSI escapes, no control characters but tab/LF, no CR."""
    return _BINARY.sub("", _ANSI.sub("", text)).replace("\r", "")


class _Collector:
    """Decoded, sanitized output with a rolling tail and a spill file past 50 KB."""

    def __init__(self, on_chunk: Callable[[str], None]) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._on_chunk = on_chunk
        self._chunks: list[str] = []
        self._kept = 0
        self._raw_total = 0
        self.discarded = False
        self.path: str | None = None
        self._fd: int | None = None
        # Why the spill file is missing or incomplete (a full disk, ``ulimit -f``); then no
        # ``fullOutputPath`` is claimed, and nothing is raised into the output callback.
        self.failure: str | None = None

    def feed(self, data: bytes, final: bool = False) -> None:
        self._raw_total += len(data)
        text = sanitize_output(self._decoder.decode(data, final=final))
        if not text:
            return
        if self._raw_total > DEFAULT_MAX_BYTES:
            self.spill()
        if self._fd is not None:
            self._write(text)
        self._chunks.append(text)
        self._kept += len(text)
        while self._kept > DEFAULT_MAX_BYTES * 2 and len(self._chunks) > 1:
            self._kept -= len(self._chunks.pop(0))
            self.discarded = True
        self._on_chunk(text)

    def spill(self) -> None:
        if self._fd is not None or self.failure is not None:
            return
        try:
            self.path, self._fd = create_output_file("tau-bash", ".log")
        except OSError as exc:
            self.failure = exc.strerror or str(exc)
            return
        for chunk in self._chunks:
            self._write(chunk)

    def _write(self, text: str) -> None:
        if self._fd is None:
            return
        try:
            write_all(self._fd, text.encode("utf-8"))
        except OSError as exc:
            self.failure = exc.strerror or str(exc)
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def text(self) -> str:
        return "".join(self._chunks)


class UserBash:
    """Runs ``bash`` commands for one RPC session; ``abort()`` cancels every running one.

    Args:
        session: The :class:`~tau.agent.session.AgentSession` (cwd, settings, transcript).
        emit: Writes a session event (``bash_execution_update``) to the client.
        runner: The extension runner (``user_bash`` handlers), or ``None``.
    """

    def __init__(self, session: Any, emit: Callable[[dict[str, Any]], None], runner: Any = None) -> None:
        self._session = session
        self._emit = emit
        self._runner = runner
        self._signals: set[AbortSignal] = set()

    def abort(self) -> None:
        for signal in list(self._signals):
            signal.abort()

    @property
    def is_running(self) -> bool:
        return bool(self._signals)

    async def run(
        self, command: str, *, exclude_from_context: bool = False, request_id: Any = None
    ) -> dict[str, Any]:
        answer = await self._user_bash_hook(command, exclude_from_context)
        if answer and answer.get("result") is not None:
            result = dict(answer["result"])
        else:
            operations = (answer or {}).get("operations") or LocalBashOperations(
                self._session.settings.get("shellPath")
            )
            result = await self._execute(command, operations, request_id)
        self.record(command, result, exclude_from_context)
        return result

    async def _user_bash_hook(self, command: str, exclude: bool) -> dict[str, Any] | None:
        runner = self._runner
        if runner is None or not runner.has_handlers("user_bash"):
            return None
        event = {
            "type": "user_bash",
            "command": command,
            "excludeFromContext": exclude,
            "cwd": self._session.cwd,
        }
        return await runner.emit_user_bash(event)

    async def _execute(self, command: str, operations: Any, request_id: Any) -> dict[str, Any]:
        prefix = self._session.settings.get("shellCommandPrefix")
        resolved = f"{prefix}\n{command}" if prefix else command
        signal = AbortSignal()
        self._signals.add(signal)

        def on_chunk(delta: str) -> None:
            event: dict[str, Any] = {"type": "bash_execution_update"}
            if request_id is not None:
                event["id"] = request_id
            event["delta"] = delta
            self._emit(event)

        output = _Collector(on_chunk)
        exit_code: int | None = None
        try:
            exit_code = await operations.exec(
                resolved,
                self._session.cwd,
                on_data=output.feed,
                signal=signal,
                timeout=None,
                env=shell_environment({}),
            )
        except CommandAborted:
            pass
        finally:
            self._signals.discard(signal)
        output.feed(b"", final=True)
        return self._result(output, exit_code, signal.aborted)

    @staticmethod
    def _result(output: _Collector, exit_code: int | None, cancelled: bool) -> dict[str, Any]:
        full = output.text
        tail = truncate_tail(full)
        if tail["truncated"]:
            output.spill()
        output.close()
        result: dict[str, Any] = {"output": tail["content"] if tail["truncated"] else full}
        if not cancelled and exit_code is not None:
            result["exitCode"] = exit_code
        result["cancelled"] = cancelled
        result["truncated"] = output.discarded or bool(tail["truncated"])
        if output.path is not None and output.failure is None:
            result["fullOutputPath"] = output.path
        return result

    def record(self, command: str, result: dict[str, Any], exclude_from_context: bool) -> None:
        """Store the ``bashExecution`` message (the session holds it until a streaming run ends)."""
        self._session.record_bash_result(command, result, exclude_from_context=exclude_from_context)
