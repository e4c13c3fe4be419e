"""One batch task, start to end, through the SDK: its directory and setup, its session, its result line.

:func:`run_task` is what every backend runs (in a pool process, or in a Ray worker); it never
raises for a task that goes wrong: the result says what happened.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.batch.tasks import Task

__all__ = ["RESULT_KEYS", "TaskRun", "empty_result", "run_task"]

RESULT_KEYS = (
    "id",
    "status",
    "exit_reason",
    "requests",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "cost",
    "duration_s",
    "final_text",
    "session",
)
_POLL_S = 0.2  # how often a running task looks at its deadline and the batch's cancel flag
_SETUP_TAIL = 400  # characters of a failed setup's output kept in exit_reason


@dataclass
class TaskRun:
    """Where one task runs and writes.

    Attributes:
        sessions: The directory of the task's session file ``<id>.jsonl`` (and its ``sol/`` archives).
        work: The task's fresh working directory when it has no ``cwd`` (created here).
        env: Environment variables set for the task (credentials passed by a remote driver).
        finished: Where the task writes its result as it ends (``finished/`` of the output directory,
            when the task runs on the driver's machine): a driver killed before it recorded the
            result finds it there on the next run.
    """

    sessions: str
    work: str
    env: dict[str, str] = field(default_factory=dict)
    finished: str | None = None


def empty_result(task_id: str, status: str, exit_reason: str, session: str | None = None) -> dict[str, Any]:
    """A result line for a task that made no request (yet)."""
    result: dict[str, Any] = dict.fromkeys(RESULT_KEYS, 0)
    result.update(
        id=task_id,
        status=status,
        exit_reason=exit_reason,
        cost=0.0,
        duration_s=0.0,
        final_text=None,
        session=session,
    )
    return result


def run_task(task: Task, where: TaskRun, cancelled: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """Run ``task`` and return ``{"result": <result line>, "warnings": [...]}``.

    ``cancelled()`` is polled while the task runs; once it is true the session is aborted (and saved)
    and the result is ``cancelled``. The session file is ``where.sessions/<id>.jsonl``.
    """
    if cancelled():  # queued to this worker before the batch was cancelled
        return {"result": empty_result(task.id, "cancelled", "cancelled before it started"), "warnings": []}
    saved = {name: os.environ.get(name) for name in where.env}
    os.environ.update(where.env)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = asyncio.run(_run(task, where, cancelled))
        if where.finished is not None:
            from tau.modes.batch.results import write_finished

            write_finished(Path(where.finished), result)
        return {"result": result, "warnings": sorted({str(w.message) for w in caught})}
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


async def _run(task: Task, where: TaskRun, cancelled: Callable[[], bool]) -> dict[str, Any]:
    started = time.monotonic()
    deadline = started + task.timeout_s if task.timeout_s is not None else None
    session_file = Path(where.sessions, f"{task.id}.jsonl")
    outcome = await _prepare_directory(task, where, deadline, cancelled)
    if isinstance(outcome, dict):
        outcome["duration_s"] = round(time.monotonic() - started, 3)
        return outcome
    result = await _run_session(task, outcome, session_file, deadline, cancelled)
    result["duration_s"] = round(time.monotonic() - started, 3)
    return result


async def _prepare_directory(
    task: Task, where: TaskRun, deadline: float | None, cancelled: Callable[[], bool]
) -> str | dict[str, Any]:
    """The task's directory, or its result when there is none to run in (a failed setup)."""
    if task.cwd is not None:
        if not os.path.isdir(task.cwd):
            return empty_result(task.id, "error", f"cwd {task.cwd!r} is not a directory")
        return task.cwd
    Path(where.work).mkdir(parents=True, exist_ok=False)
    if task.setup is None:
        return where.work
    return await _setup(task, where.work, deadline, cancelled)


async def _setup(
    task: Task, work: str, deadline: float | None, cancelled: Callable[[], bool]
) -> str | dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        task.setup or "",
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the whole group is killed on a timeout or a cancel
    )
    reader = asyncio.ensure_future(process.communicate())
    stop = await _watch(reader, deadline, cancelled)
    if stop is not None:
        _kill_group(process.pid)
        await reader
        status = "timeout" if stop == "timeout" else "cancelled"
        return empty_result(task.id, status, f"setup {_stopped(stop, task)}")
    output = (reader.result()[0] or b"").decode("utf-8", "replace").strip()
    if process.returncode != 0:
        tail = output[-_SETUP_TAIL:]
        return empty_result(
            task.id, "error", f"setup failed (exit {process.returncode})" + (f": {tail}" if tail else "")
        )
    return work


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _stopped(stop: str, task: Task) -> str:
    return f"timed out after {task.timeout_s:g}s" if stop == "timeout" else "cancelled"


async def _watch(
    work: asyncio.Future[Any], deadline: float | None, cancelled: Callable[[], bool]
) -> str | None:
    """Wait for ``work``; ``"timeout"`` or ``"cancelled"`` when one of them came first (``work`` still runs)."""
    while not work.done():
        await asyncio.wait({work}, timeout=_POLL_S)
        if work.done():
            break
        if cancelled():
            return "cancelled"
        if deadline is not None and time.monotonic() >= deadline:
            return "timeout"
    return None


async def _run_session(
    task: Task, cwd: str, session_file: Path, deadline: float | None, cancelled: Callable[[], bool]
) -> dict[str, Any]:
    from tau.sdk.session import create_agent_session

    try:
        session = await create_agent_session(
            cwd=cwd,
            model=task.model,
            thinking=task.thinking,
            session=session_file,
            settings=task.settings or None,
            faux_script=task.faux_script,
        )
    except Exception as exc:  # boundary: a task that cannot start is that task's error, not the batch's
        return empty_result(task.id, "error", str(exc) or type(exc).__name__)
    stopped: list[str] = []
    failure: Exception | None = None
    try:
        run = asyncio.ensure_future(_prompts(session, task.prompts, stopped))
        stop = await _watch(run, deadline, cancelled)
        if stop is not None:
            stopped.append(stop)
            await session.abort()
        try:
            await run
        except Exception as exc:  # boundary: a refused prompt (no model, no key) ends this task only
            failure = exc
        return _result(task, session, stopped[0] if stopped else None, failure)
    finally:
        await session.close()


async def _prompts(session: Any, prompts: list[str], stopped: list[str]) -> None:
    for text in prompts:
        if stopped:  # aborted: the remaining prompts do not run
            return
        await session.prompt(text)


def _result(task: Task, session: Any, stop: str | None, failure: BaseException | None) -> dict[str, Any]:
    last = next((m for m in reversed(session.messages) if m.get("role") == "assistant"), None)
    reason = last.get("stopReason") if last else None
    if stop is not None:
        status, exit_reason = ("timeout" if stop == "timeout" else "cancelled"), _stopped(stop, task)
    elif failure is not None:
        status, exit_reason = "error", str(failure) or type(failure).__name__
    elif reason == "stop":
        status, exit_reason = "ok", "stop"
    else:
        status = "error"
        detail = (last or {}).get("errorMessage") or ("no reply" if last is None else "")
        exit_reason = f"{reason}: {detail}" if reason and detail else (reason or detail)
    # A session that never held a message (a prompt refused for want of a key) left no file.
    saved = session.session_file is not None and os.path.isfile(session.session_file)
    result = empty_result(
        task.id, status, exit_reason, session=f"sessions/{task.id}.jsonl" if saved else None
    )
    result.update(asdict(session.usage()))
    result["final_text"] = session.last_assistant_text()
    return result
