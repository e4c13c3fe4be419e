"""The bundled ``todo-loop`` extension: keep working while the todo list has unfinished tasks.

When the run would otherwise end (a final answer: no tool calls, ``stopReason: "stop"``, nothing
queued) and the task list (as the bundled ``todo`` reads it) still has ``pending`` or
``in_progress`` tasks, the ``turn_end`` boundary appends one hidden ``custom_message``
(``todo-loop:continue``) and asks for one more request, instead of waiting for a human to type
"continue", and says so in one ``ctx.ui.notice`` line. Bounded by ``todoLoop.maxRounds`` (25) per
human message and by stall detection (``todoLoop.maxStalls``: continuations without progress);
never while ``todo`` is not an active tool or its state is unavailable, nor after a human wrote
during the run; the model can stop it with ``todo_loop_block``; ``/todoloop`` shows, pauses and
resumes it; a kill switch turns it off on the next request. See ``docs/extensions/todo-loop.md``.

Built on the public extension API (``tau.extension``) only.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.todo_loop.loop import TodoLoop

__all__ = ["extension"]


def extension(tau: Any) -> None:
    """Register the hooks, the ``/todoloop`` command and the ``todo_loop_block`` tool."""
    TodoLoop(tau).register()
