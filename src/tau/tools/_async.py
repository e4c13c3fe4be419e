"""Small asyncio helpers shared by the tools."""

from __future__ import annotations

import asyncio
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
    """
    raise_if_aborted(signal)
    work = asyncio.ensure_future(asyncio.to_thread(function))
    if signal is None:
        return await work
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if work.done():
        return work.result()
    work.add_done_callback(lambda task: task.exception())  # drop the late result quietly
    raise ToolAborted()
