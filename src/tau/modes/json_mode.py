"""JSON mode (``tau --mode json``): the session header, then every session event, one JSON line each.

Exactly pi 1.6's stream: the header line comes first even with ``--no-session``; each event is
written as ``JSON.stringify(toJsonEvent(event))`` (``message_update`` reduced to its delta with the
message's ``usage``); nothing else reaches stdout. Notifications go nowhere; dialogs answer at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from tau.agent.events import to_json_event
from tau.common import jsjson
from tau.modes.print_mode import install_abort_signals, release_abort_signals, run_prompts
from tau.modes.std_streams import READER_GONE, silence

__all__ = ["JsonWriter", "run_json"]


class JsonWriter:
    """Writes events as JSON lines to a binary stream (raw UTF-8, as pi's ``writeRawStdout``).

    When the reader goes away (``| head -1``) the writer stops writing (``broken``), points the
    stream at ``/dev/null`` and calls ``on_broken`` once: the mode then stops the run and ends quietly.
    """

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.detach: Any = None
        self.broken = False
        self.on_broken: Callable[[], None] | None = None

    def attach(self, session: Any, runner: Any = None) -> None:
        """Write the session header, then follow the session's events (before ``session_start``)."""
        header = session.session_manager.get_header()
        if header:
            self.write(header)
        self.detach = session.subscribe(self.event)

    def write(self, value: Any) -> None:
        if self.broken:
            return
        try:
            self._out.write(jsjson.dumps(value) + b"\n")
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        self.broken = True
        silence(self._out)
        if self.on_broken is not None:
            self.on_broken()

    def event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "extension_error":  # pi's JSON mode reports these on stderr only
            print(f"Extension error ({event.get('extensionPath')}): {event.get('error')}", file=sys.stderr)
            return
        self.write(to_json_event(event))
        if event.get("type") in ("agent_settled", "agent_end"):
            self.flush()

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._out.flush()
        except BrokenPipeError:
            self._reader_gone()


async def run_json(
    session: Any,
    initial: str | None,
    messages: Sequence[str],
    *,
    images: Any = None,
    out: BinaryIO | None = None,
    err: Any = None,
    writer: JsonWriter | None = None,
) -> int:
    """The whole JSON mode; returns the process exit code (1 when a prompt was refused, 141 when the
    reader of the stream went away: the run is then aborted).

    ``writer``: one already attached to the session (header written); else one is attached now.
    """
    if writer is None:
        writer = JsonWriter(out or sys.stdout.buffer)
        writer.attach(session)
    err = err or sys.stderr
    unsubscribe = writer.detach
    state = install_abort_signals(session)
    loop = asyncio.get_running_loop()
    writer.on_broken = lambda: state["tasks"].add(loop.create_task(session.abort()))
    code = 0
    try:
        if writer.broken:  # the reader went away before the run: nothing is sent
            return READER_GONE
        await run_prompts(
            session, initial, messages, images, stop=lambda: bool(state["code"] or writer.broken)
        )
    except Exception as exc:  # boundary: a refused prompt (no model, no key) goes to stderr
        print(str(exc), file=err)
        code = 1
    finally:
        release_abort_signals(state)
        unsubscribe()
        writer.flush()
    if writer.broken and not state["code"]:
        return READER_GONE
    return state["code"] or code
