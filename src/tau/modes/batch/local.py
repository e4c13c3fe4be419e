"""The local backend of ``tau batch``: a pool of worker processes on this machine.

Workers ignore SIGINT (a terminal's Ctrl+C reaches the whole process group): the driver catches it
and sets a shared event, and each running task aborts its session, saves it and reports
``cancelled``; tasks that had not started are reported ``cancelled`` by the driver.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from tau.modes.batch.results import FINISHED_DIR
from tau.modes.batch.tasks import Task
from tau.modes.batch.worker import TaskRun, empty_result, run_task

__all__ = ["run_local"]

Done = Callable[[Task, dict[str, Any]], None]
_cancel: Any = None  # the batch's cancel event, in a worker process


def _start_worker(cancel: Any, driver: int) -> None:
    global _cancel
    _cancel = cancel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(driver)


def _die_with(driver: int) -> None:
    """End this worker when the driver ends, however it ends (a SIGKILL runs no clean-up of its own).

    Linux's parent-death signal; a driver that died before it was armed is seen as a new parent.
    The commands a task started are stopped by the batch's watchdog (:mod:`.watchdog`).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog still ends this worker
            pass
    if os.getppid() != driver:
        os._exit(1)


def _run_in_worker(task: Task, where: TaskRun) -> dict[str, Any]:
    return run_task(task, where, _cancel.is_set)


def run_local(tasks: list[Task], out: Path, workers: int, done: Done) -> None:
    """Run ``tasks`` on ``workers`` processes; ``done(task, payload)`` hears each one as it ends.

    Raises ``KeyboardInterrupt`` after a Ctrl+C, once every task has been reported.
    """
    context = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads
    cancel = context.Event()
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(tasks))),
        mp_context=context,
        initializer=_start_worker,
        initargs=(cancel, os.getpid()),
    )
    futures: dict[Future[dict[str, Any]], Task] = {}
    reported: set[Future[dict[str, Any]]] = set()
    try:
        # A Ctrl+C may come while tasks are still being submitted (a large batch takes a while):
        # it cancels as one during the run does, or shutdown would wait for every running task.
        try:
            for task in tasks:
                where = TaskRun(
                    sessions=str(out / "sessions"),
                    work=str(out / "work" / task.id),
                    finished=str(out / FINISHED_DIR),
                )
                futures[pool.submit(_run_in_worker, task, where)] = task
            for future in as_completed(futures):
                reported.add(future)
                done(futures[future], _payload(future, futures[future]))
        except KeyboardInterrupt:
            cancel.set()
            print("tau batch: cancelling: running sessions are aborted and saved", file=sys.stderr)
            for future in futures:
                future.cancel()
            for future, task in futures.items():
                if future not in reported:
                    done(task, _payload(future, task))
            for task in tasks[len(futures) :]:
                done(task, _not_started(task))
            raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _payload(future: Future[dict[str, Any]], task: Task) -> dict[str, Any]:
    if future.cancelled():
        return _not_started(task)
    try:
        return future.result()
    except Exception as exc:  # boundary: a worker that died (killed, out of memory) fails its task only
        return {
            "result": empty_result(task.id, "error", f"worker failed: {exc or type(exc).__name__}"),
            "warnings": [],
        }


def _not_started(task: Task) -> dict[str, Any]:
    return {"result": empty_result(task.id, "cancelled", "cancelled before it started"), "warnings": []}
