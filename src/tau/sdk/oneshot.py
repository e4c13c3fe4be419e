"""``tau.run``: one prompt (or a few, in order) to the end, from synchronous code."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from tau.common.dataclass import dataclass
from tau.sdk.session import create_agent_session
from tau.sdk.usage import Usage

__all__ = ["RunResult", "run"]


@dataclass(frozen=True)
class RunResult:
    """What a :func:`run` left behind.

    Attributes:
        text: The last reply's text (``None`` when it had none).
        messages: The session's messages (pi's message dicts), the user's prompts included.
        usage: Requests, tokens and cost of the run.
        session_file: Where the session was saved (``None`` for an in-memory session).
        stop_reason: The last reply's ``stopReason``: ``stop``, ``length``, ``toolUse``, ``error`` or
            ``aborted`` (``None`` when no request was made).
        error: The last reply's ``errorMessage`` when it failed.
    """

    text: str | None
    messages: list[dict[str, Any]] = field(repr=False)
    usage: Usage
    session_file: str | None
    stop_reason: str | None
    error: str | None = None


def run(prompt: str | Sequence[str], **options: Any) -> RunResult:
    """Start a session with ``options`` (those of :func:`~tau.create_agent_session`), run ``prompt``, close it.

    A list of prompts runs them one after the other in the same session. Works from plain
    synchronous code and from a thread whose event loop is running (a notebook): the session then
    runs on a thread of its own.
    """
    prompts = [prompt] if isinstance(prompt, str) else list(prompt)
    if not prompts or not all(isinstance(text, str) for text in prompts):
        raise TypeError(f"prompt must be a string or a non-empty list of strings, not {prompt!r}")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_run(prompts, options))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tau-run") as pool:
        return pool.submit(asyncio.run, _run(prompts, options)).result()


async def _run(prompts: list[str], options: dict[str, Any]) -> RunResult:
    async with await create_agent_session(**options) as session:
        for index, text in enumerate(prompts):
            session.announce_prompts(len(prompts) - index - 1)
            await session.prompt(text)
        last = next((m for m in reversed(session.messages) if m.get("role") == "assistant"), None)
        return RunResult(
            text=session.last_assistant_text(),
            messages=list(session.messages),
            usage=session.usage(),
            session_file=session.session_file,
            stop_reason=last.get("stopReason") if last else None,
            error=last.get("errorMessage") if last else None,
        )
