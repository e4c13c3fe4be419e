"""A faux session for interactive-mode tests, and helpers to read what the screen model holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faux_model import FauxModel
from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.modes.interactive.model import ChatController
from tau.modes.interactive.render import BlockRenderer
from tau.session.manager import SessionManager


def faux_session(
    cwd: Path, steps: list[dict[str, Any]], *, compaction: dict[str, Any] | None = None, **options: Any
) -> AgentSession:
    """An AgentSession on faux-1 answering ``steps``, its file under ``cwd/sessions``."""
    scripted = FauxModel(steps, record=None)
    values = {"retry": {"enabled": False}, "compaction": {"enabled": False, **(compaction or {})}}
    settings = Settings.in_memory(values)
    manager = SessionManager.create(cwd, cwd / "sessions")
    return AgentSession(manager, settings, scripted.registry, scripted.model, cwd=cwd, **options)


def controlled(session: AgentSession) -> ChatController:
    """A controller fed by ``session``'s event stream."""
    controller = ChatController()
    session.subscribe(controller.handle_event)
    return controller


def screen_text(controller: ChatController, width: int = 80) -> str:
    """Everything the controller holds, rendered as plain text."""
    return BlockRenderer().render(controller.blocks, width, color=False)


class Screen:
    """The interactive mode in process: keys through a pipe, output through ``pyte``.

    ``await screen.start()`` runs the mode; ``send`` types raw terminal input; ``wait_for``
    polls a condition (never a fixed sleep) with a generous timeout for loaded machines.
    """

    def __init__(
        self,
        session: AgentSession,
        runner: Any = None,
        *,
        rows: int = 30,
        columns: int = 100,
        **mode_options: Any,
    ) -> None:
        import io

        import pyte
        from prompt_toolkit.data_structures import Size
        from prompt_toolkit.input import create_pipe_input
        from prompt_toolkit.output.vt100 import Vt100_Output

        from tau.modes.interactive.app import InteractiveMode

        self._pipe_cm = create_pipe_input()
        self.pipe = self._pipe_cm.__enter__()
        self.size = Size(rows=rows, columns=columns)
        self.stdout = io.StringIO()
        self.output = Vt100_Output(self.stdout, lambda: self.size, term="xterm-256color")
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self._fed = 0
        self.session = session
        self.mode = InteractiveMode(session, runner, input=self.pipe, output=self.output, **mode_options)
        self.task: Any = None

    async def start(self, initial: str | None = None, messages: tuple[str, ...] = ()) -> None:
        import asyncio

        self.task = asyncio.ensure_future(self.mode.run(initial, messages))
        await self.wait_for(lambda: self.mode.app.is_running and "ctx " in self.text())

    def text(self) -> str:
        data = self.stdout.getvalue()
        self.stream.feed(data[self._fed :])
        self._fed = len(data)
        return "\n".join(line.rstrip() for line in self.screen.display)

    def send(self, data: str) -> None:
        self.pipe.send_text(data)

    async def wait_for(self, condition: Any, timeout: float = 30.0) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if loop.time() > deadline:
                raise AssertionError(f"timed out; screen:\n{self.text()}")
            if self.task is not None and self.task.done():
                self.task.result()
                raise AssertionError(f"the mode ended; screen:\n{self.text()}")
            await asyncio.sleep(0.02)

    async def wait_text(self, text: str, timeout: float = 30.0) -> None:
        await self.wait_for(lambda: text in self.text(), timeout)

    async def quit(self) -> int:
        import asyncio

        self.mode.exit()
        code = await asyncio.wait_for(self.task, 30)
        self._pipe_cm.__exit__(None, None, None)
        return code
