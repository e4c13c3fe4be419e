"""The extension's hooks, command and tool, on the public extension API only.

- ``turn_end``: at a settle with open tasks, one hidden marker draft and ``continue: True``, and a
  notice (``todo-loop: continuing, …`` or why it stopped with tasks open);
- ``context``: removes a marker that sits next to a human message, passes everything else through;
- ``before_agent_start``, ``message_end``, ``agent_settled``: whether a human wrote during the run;
  ``tool_execution_end``: whether tools other than ``todo`` did work (progress, against stalls);
- ``/todoloop [status|pause|resume]``: the live status;
- ``todo_loop_block``: the model's exit, until the next human message.

The list is read from the bundled ``todo`` itself, on the event bus (``pi-todo:read``), so both
agree on it (a quarantine or a disconnected branch is "unavailable" for both); without it, from the
branch's other sources (:mod:`.tasks`). The kill switch is checked in both hooks and in the tool on
every call.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from tau.bundled.todo_loop import notices
from tau.bundled.todo_loop.branch import BranchReader
from tau.bundled.todo_loop.killswitch import kill_switch
from tau.bundled.todo_loop.marker import MARKER_TYPE, is_marker, marker_draft, without_markers_next_to_human
from tau.bundled.todo_loop.state import TODO_TOOL, Limits, LoopState, Observation
from tau.extension import Settings, ToolDefinition, ToolResult, has_tool_calls, unchanged_prefix

__all__ = [
    "BLOCK_DESCRIPTION",
    "BLOCK_PARAMETERS",
    "BLOCK_TOOL",
    "COMMAND",
    "NOT_RUNNING",
    "READ_CHANNEL",
    "TodoLoop",
]

BLOCK_TOOL = "todo_loop_block"
COMMAND = "todoloop"
BLOCK_DESCRIPTION = "Stop the todo loop's automatic continuation when you need the user; give the reason."
BLOCK_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string", "minLength": 1}},
    "required": ["reason"],
    "additionalProperties": False,
}
NOT_RUNNING = "todo loop not running"
READ_CHANNEL = "pi-todo:read"  # the bundled todo answers with its own reading of the checklist
_SUBCOMMANDS = ("status", "pause", "resume")


class _MarkerScan:
    """Whether a request's messages hold a marker, remembered for the leading messages that are the
    same objects as last time (only the new ones are read; markers are never edited in place)."""

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._markers = 0

    def any(self, messages: list[Any]) -> bool:
        if unchanged_prefix(messages, self._given) < len(self._given):
            self._given, self._markers = [], 0
        self._markers += _count_markers(messages[len(self._given) :])
        self._given = list(messages)
        return self._markers > 0


def _count_markers(messages: list[Any]) -> int:
    """``sum(map(is_marker, messages))``, with a C-level look for the marker's type first."""
    try:
        if MARKER_TYPE not in map(dict.get, messages, repeat("customType")):
            return 0
    except TypeError:  # something that is not a dict: look at each one
        pass
    return sum(map(is_marker, messages))


class TodoLoop:
    """One loop per extension instance: its state, its branch reader, and the API object."""

    def __init__(self, tau: Any) -> None:
        self.tau = tau
        self.state = LoopState()
        self.reader = BranchReader()
        self._reported: set[str] = set()
        self._named: dict[tuple[str, ...], list[str]] = {}  # problems → the same, naming their files
        self._markers = _MarkerScan()

    # -- shared ------------------------------------------------------------------------------

    def disabled(self, ctx: Any) -> bool:
        """Whether the kill switch is set right now (read afresh on every call)."""
        return kill_switch(self.tau.agent_dir, ctx.cwd, project_trusted=ctx.is_project_trusted()) is not None

    def limits(self, ctx: Any) -> Limits:
        limits, problems = Limits.from_settings(self.tau.get_settings())
        if problems:  # name the file that holds the value; one not from a file stays "settings.json"
            key = tuple(problems)
            if key not in self._named:  # read the files once per set of problems, not at every settle
                self._named[key] = self._file_problems(ctx) or problems
            problems = self._named[key]
        for problem in problems:
            if problem not in self._reported:
                self._reported.add(problem)
                ctx.ui.notify(problem, "warning")
        return limits

    def _file_problems(self, ctx: Any) -> list[str]:
        """The problems of each settings file's own ``todoLoop`` block, each naming its file."""
        try:
            files = Settings.load(
                ctx.cwd, project_trusted=bool(ctx.is_project_trusted()), directory=self.tau.agent_dir
            )
        except Exception:  # the host reports a file it cannot read itself
            return []
        problems = []
        for path, data in (
            (files.global_path, files.global_settings),
            (files.project_path, files.project_settings),
        ):
            problems += Limits.from_settings(data, str(path))[1]
        return problems

    async def observe(self, ctx: Any) -> Observation:
        """The list as ``todo`` reads it (or the branch's other sources), the anchor, the tool set."""
        view = ctx.session_manager
        leaf = view.get_leaf_id()  # the branch as it is before todo is asked
        anchor = self.reader.anchor(view)
        active = TODO_TOOL in self.tau.get_active_tools()
        request: dict[str, Any] = {"ctx": ctx}
        await self.tau.events.emit(READ_CHANNEL, request)
        answer = request.get("todo")
        if not isinstance(answer, dict):  # the bundled todo is not loaded: another todo tool, maybe
            return Observation(self.reader.read(view, leaf).tasks, anchor, active)
        state = answer.get("state")
        if state is None:
            return Observation(None, anchor, active, str(answer.get("reason") or "unknown"))
        if answer.get("recorded") is False:  # the implicit empty list: none was ever made (seed 000)
            return Observation(None, anchor, active)
        from tau.bundled.todo_loop.tasks import (
            task_list_of_state,  # a recorded list: its reader, on first use
        )

        return Observation(task_list_of_state(state), anchor, active)

    # -- hooks -------------------------------------------------------------------------------

    def on_session_start(self, event: Any, ctx: Any) -> None:
        self.reader.forget()

    def on_before_agent_start(self, event: Any, ctx: Any) -> None:
        self.state.start_run(prompted=event.message_type == "user")

    def on_message_end(self, event: Any, ctx: Any) -> None:
        message = event.message
        if message.get("role") == "user" and not isinstance(message.get("customType"), str):
            self.state.saw_human()

    def on_agent_settled(self, event: Any, ctx: Any) -> None:
        self.state.end_run()

    def on_tool_execution_end(self, event: Any, ctx: Any) -> None:
        self.state.saw_tool(event.tool_name, bool(event.is_error))

    async def on_turn_end(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        message = event.message
        if message.get("stopReason") == "aborted" or event.outcome == "aborted":
            if not self.disabled(ctx):
                self.state.aborted()
            return None
        if has_tool_calls(message):
            return None  # the host makes the next request anyway: spend nothing
        if not self._would_end(event, ctx) or self.disabled(ctx):
            return None
        seen = await self.observe(ctx)
        limits = self.limits(ctx)
        if not self.state.settle(seen, limits):
            stopped = notices.stopped(seen, self.state.stop_reason)
            if stopped is not None:
                notices.show(ctx, stopped)
            return None
        notices.show(ctx, notices.continuing(seen, self.state.rounds, limits))
        draft = marker_draft(with_block=BLOCK_TOOL in self.tau.get_active_tools())
        return {"entries": [*event.entries, draft], "continue": True}

    def _would_end(self, event: Any, ctx: Any) -> bool:
        """No tool calls (checked before), ``stopReason: "stop"``, nothing queued, nobody continuing,
        and no human message waiting to be sent (the next prompt of ``tau -p P1 P2``, a follow-up)."""
        if event.message.get("stopReason") != "stop" or event.outcome != "completed":
            return False
        if event.continue_:
            return False
        pending = (event.context or {}).get("pendingMessages")
        return not pending and not ctx.has_waiting_input()

    def on_context(self, event: Any, ctx: Any) -> dict[str, Any] | None:
        if self.disabled(ctx):
            return None  # a disabled extension does not touch the request
        if not self._markers.any(event.messages):
            return None  # no marker: nothing to remove (the common request, read incrementally)
        kept = without_markers_next_to_human(event.messages)
        return None if kept is None else {"messages": kept}

    # -- command -----------------------------------------------------------------------------

    async def status_lines(self, ctx: Any) -> list[str]:
        seen = await self.observe(ctx)
        return self.state.status_lines(seen, self.limits(ctx), disabled=self.disabled(ctx))

    async def on_command(self, args: str, ctx: Any) -> None:
        word = args.strip()
        if word in ("", "status"):
            pass
        elif word == "pause":
            self.state.paused = True
        elif word == "resume":
            self.state.paused = False
        else:
            ctx.ui.notify(f"Unknown /todoloop argument {word!r}: use status, pause or resume", "error")
            return
        ctx.ui.notify("\n".join(await self.status_lines(ctx)), "info")

    @staticmethod
    def complete_argument(prefix: str) -> list[dict[str, str]] | None:
        items = [{"value": word, "label": word} for word in _SUBCOMMANDS if word.startswith(prefix.strip())]
        return items or None

    # -- tool --------------------------------------------------------------------------------

    async def execute_block(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        if self.disabled(ctx):
            return ToolResult.error(NOT_RUNNING)
        reason = params["reason"]
        self.state.block(reason, self.reader.anchor(ctx.session_manager))
        return ToolResult.text(
            f"todo loop stopped until the next human message: {reason}", details={"reason": reason}
        )

    def block_tool(self) -> ToolDefinition:
        return ToolDefinition(
            name=BLOCK_TOOL,
            label="Todo loop: block",
            description=BLOCK_DESCRIPTION,
            parameters=BLOCK_PARAMETERS,
            execute=self.execute_block,
        )

    # -- registration ------------------------------------------------------------------------

    def register(self) -> None:
        tau = self.tau
        tau.on("session_start", self.on_session_start)
        tau.on("before_agent_start", self.on_before_agent_start)
        tau.on("message_end", self.on_message_end)
        tau.on("tool_execution_end", self.on_tool_execution_end)
        tau.on("agent_settled", self.on_agent_settled)
        tau.on("turn_end", self.on_turn_end)
        tau.on("context", self.on_context)
        tau.register_tool(self.block_tool())
        tau.register_command(
            COMMAND,
            "Todo loop status; /todoloop pause and /todoloop resume",
            self.on_command,
            get_argument_completions=self.complete_argument,
        )
