"""Small asyncio helpers shared by the tools."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

from tau.llm.stream import AbortSignal
from tau.tools.base import ToolAborted

T = TypeVar("T")


def raise_if_aborted(signal: AbortSignal | None) -> None:
    """Raise pi's ``Operation aborted`` when ``signal`` has fired."""
    if signal is not None and signal.aborted:
        raise ToolAborted()


async def in_thread_until_aborted(function: Callable[[], T], signal: AbortSignal | None) -> T:
    """Run blocking ``function`` in a worker thread; give up with ``Operation aborted`` on abort.

    The thread itself cannot be interrupted: its result is dropped (pi's read rejects the same way).
    It is a daemon thread, not one of the loop's executor, so one blocked for good (a slow network
    file system) holds neither ``asyncio.run``'s shutdown nor the interpreter's exit.
    """
    raise_if_aborted(signal)
    work = asyncio.ensure_future(_in_daemon_thread(function))
    if signal is None:
        return await work
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if work.done():
        return work.result()
    # Drop the late result quietly (or the cancellation when the loop closes while the thread still runs).
    work.add_done_callback(lambda task: task.cancelled() or task.exception())
    raise ToolAborted()


async def _in_daemon_thread(function: Callable[[], T]) -> T:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.cancelled():
            outcome()

    def work() -> None:
        try:
            result = function()
        except BaseException as exc:  # handed to the awaiting task, raised there
            error = exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(settle, lambda: done.set_exception(error))
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, lambda: done.set_result(result))

    threading.Thread(target=work, name="tau-tool-thread", daemon=True).start()
    return await done
