"""The interactive mode on a terminal: ``prompt_toolkit`` for the editor and keys, ``rich`` for output.

The terminal keeps its scrollback: finished blocks are printed once, above the application, and
only the live part (the streaming answer, running tools, an overlay, the editor and the footer)
is redrawn. Keys: Enter sends (a steering message while the agent runs), Alt+Enter queues a
follow-up, Esc aborts the run and returns queued messages to the editor, Ctrl+O expands tool
output, Ctrl+C clears the editor (twice: quit), Ctrl+D quits on an empty editor.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import signal
import time
from collections.abc import Iterable, Sequence
from typing import Any

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.input import Input
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import Output

from tau.common.paths import agent_dir
from tau.modes.interactive.bindings import key_bindings
from tau.modes.interactive.commands import BUILTIN_COMMANDS, command_list, unknown_command
from tau.modes.interactive.editor import PromptCompleter, PromptEditor, relative_cwd
from tau.modes.interactive.keybindings import install, load_keybindings
from tau.modes.interactive.model import ChatController, NoticeBlock, content_text
from tau.modes.interactive.overlay import OverlayHost
from tau.modes.interactive.render import BlockRenderer, footer_lines, live_tail
from tau.modes.interactive.run_themes import RunThemes
from tau.modes.interactive.sanitize import sanitize_text
from tau.modes.interactive.startup_report import show_startup_report
from tau.modes.interactive.terminal import StrayOutput, output_without_cpr
from tau.modes.interactive.tool_timer import timer_tick
from tau.modes.interactive.ui import InteractiveUI
from tau.modes.wording import counted

__all__ = ["InteractiveMode"]


def _handles(runner: Any, event: str) -> bool:
    has_handlers = getattr(runner, "has_handlers", None)
    return bool(has_handlers(event)) if callable(has_handlers) else False


_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


REPRINT_ROWS = 5  # Ctrl+O prints again at most this many collapsed rows
ABORT_GRACE_SECONDS = 10.0
RELOAD = "\x00reload"  # switch_to for /reload of a session not saved yet: the same command line again


class InteractiveMode:
    """One interactive conversation over a session.

    Args:
        session: The :class:`~tau.agent.session.AgentSession` (started).
        runner: Its extension runner, or ``None``; the mode installs its UI (``ctx.mode == "tui"``).
        input, output: prompt_toolkit's terminal I/O (default: the process's terminal).
    """

    def __init__(
        self,
        session: Any,
        runner: Any = None,
        *,
        input: Input | None = None,
        output: Output | None = None,
        can_switch: bool = False,
        resume_at_start: bool = False,
        verbose: bool = False,
        theme_paths: Sequence[str] = (),
        no_themes: bool = False,
        use_theme: str | None = None,
    ) -> None:
        self.session = session
        self.controller = ChatController(on_change=self.invalidate)
        self.run_themes = RunThemes(
            session,
            self.controller,
            self.invalidate,
            paths=theme_paths,
            no_themes=no_themes,
            use_theme=use_theme,
            # extensions may add themes in resources_discover: an unknown theme name waits for them
            pending=bool(runner is not None and _handles(runner, "resources_discover")),
        )
        self.themes = self.run_themes.themes
        self.keybindings = load_keybindings(agent_dir())  # the user's keybindings.json
        install(self.keybindings)  # the keys the bindings, overlays and hints read
        self.resume_at_start = resume_at_start
        self.verbose = verbose
        self.runner = runner
        self.can_switch = can_switch
        self.switch_to: str | None = None
        self.switch_reason = "resume"  # what the next start says (session_start's reason)
        self.exit_message: str | None = None  # printed after the mode closed (``tau -r`` with no pick)
        self.overlays = OverlayHost(self.invalidate, on_error=self._component_failed)
        completer = PromptCompleter(lambda: command_list(self.runner, self.session), session.cwd)
        self.editor = PromptEditor(completer, self._history())
        self.ui = InteractiveUI(
            self.controller,
            self.overlays,
            self.editor,
            self._set_title,
            themes=self.themes,
            on_theme=self.set_theme,
        )
        self.renderer = BlockRenderer(
            self._tool_definition,
            self._message_renderer,
            lambda: self.session.settings.get("hideThinkingBlock") is True,
            lambda: self.themes.active,
            clock=lambda: self.controller.clock(),  # tests swap the controller's clock
        )
        self._tasks: set[asyncio.Task[Any]] = set()
        self._flushing = False
        self.last_ctrl_c = 0.0
        self.clock = time.monotonic  # the double Ctrl+C window; tests give a fixed clock
        self._live_cache: tuple[int, int, int, tuple[int, ...], str] | None = None
        self._version = 0
        self._pending_prompts: list[str] = []
        self.user_bash_count = 0
        self._interrupted = False
        self.user_bash: Any = None  # the running !cmd (Esc cancels it)
        self._reprinted: set[int] = set()  # printed rows Ctrl+O already printed again in full
        self.app: Application[Any] = self._build_app(input, output)
        self._show_start()
        self._unsubscribe = session.subscribe(self._on_event)
        if runner is not None:
            runner.set_ui(self.ui, "tui")
            runner.set_shutdown_handler(self.request_shutdown)
        self.refresh_footer()

    def _show_start(self) -> None:
        show_startup_report(
            self.controller,
            self.session,
            self.runner,
            self.themes,
            verbose=self.verbose,
            hold_back=[self.themes.unresolved] if self.run_themes.pending else [],
        )
        for warning in self.keybindings.warnings:
            self.controller.notice(warning, "warning")
        self.controller.load_messages(self.session.messages)

    def add_theme_paths(self, paths: Sequence[str]) -> None:
        """Themes extensions gave in ``resources_discover`` (:meth:`RunThemes.add_paths`)."""
        self.run_themes.add_paths(paths)

    def check_theme_file(self) -> None:
        """Redraw if the active theme's file changed (:meth:`RunThemes.check_file`)."""
        self.run_themes.check_file()

    def set_theme(self, name: str, *, save: bool = True) -> dict[str, Any]:
        """Use theme ``name`` from now on (:meth:`RunThemes.use`)."""
        return self.run_themes.use(name, save=save)

    # -- session data -------------------------------------------------------------------------

    def _history(self) -> list[str]:
        return [
            content_text(m.get("content"))
            for m in self.session.messages
            if m.get("role") == "user" and content_text(m.get("content")).strip()
        ]

    def _tool_definition(self, name: str) -> Any:
        """What draws a tool's rows: the extensions' tool renderers first (they also draw tools not
        registered, such as a resumed session's MCP calls before the server connects), else the tool."""
        definition = self.session.get_tool_definition(name)
        if self.runner is None:
            return definition
        return self.runner.get_tool_renderer(name, definition) or definition

    def _message_renderer(self, custom_type: str) -> Any:
        return self.runner.get_message_renderer(custom_type) if self.runner is not None else None

    async def cycle_model(self, direction: str) -> None:
        """Ctrl+P / Alt+P: the next (previous) model of the scope, or of the models with credentials."""
        try:
            result = await self.session.cycle_model(direction)
        except ValueError as exc:
            self.controller.notice(str(exc), "error")
            return
        if result is None:
            scoped = bool(getattr(self.session, "scoped_models", None))
            self.controller.notice("Only one model in scope" if scoped else "Only one model available")
            return
        model, level = result["model"], result["thinkingLevel"]
        thinking = f" (thinking: {level})" if model.reasoning and level != "off" else ""
        self.controller.notice(f"Switched to {model.name or model.id}{thinking}")
        self.refresh_footer()

    def refresh_footer(self) -> None:
        """Model, thinking level, context use and session name from the session."""
        self.controller.set_model(self.session.model, self.session.thinking_level)
        self.controller.footer.session_name = self.session.get_session_name()
        with contextlib.suppress(Exception):  # usage is informative; never break the screen for it
            self.controller.set_context(self.session.get_context_usage())

    def _on_event(self, event: dict[str, Any]) -> None:
        self.controller.handle_event(event)
        if event.get("type") in ("message_end", "agent_settled", "compaction_end", "model_select"):
            self.refresh_footer()
        if event.get("type") == "agent_settled" and self._pending_prompts:
            self.spawn(self._submit(self._pending_prompts.pop(0)))

    # -- layout -------------------------------------------------------------------------------

    def _build_app(self, input: Input | None, output: Output | None) -> Application[Any]:
        overlay_active = Condition(lambda: self.overlays.active is not None)
        editor_window = Window(
            BufferControl(
                self.editor.buffer,
                input_processors=[BeforeInput(lambda: "› " if not self.controller.footer.working else "⤷ ")],
            ),
            wrap_lines=True,
            dont_extend_height=True,
        )
        body = HSplit(
            [
                Window(FormattedTextControl(self._live_text), dont_extend_height=True, wrap_lines=False),
                Window(
                    FormattedTextControl(self._working_text),
                    dont_extend_height=True,
                    height=self._working_height,
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._overlay_text), dont_extend_height=True),
                    filter=overlay_active,
                ),
                Window(height=1, char="─", style="class:rule"),
                editor_window,
                CompletionsMenu(max_height=8, scroll_offset=1),
                Window(height=1, char="─", style="class:rule"),
                Window(
                    FormattedTextControl(self._footer_text), dont_extend_height=True, style="class:footer"
                ),
            ]
        )
        app: Application[Any] = Application(
            layout=Layout(body, focused_element=editor_window),
            key_bindings=key_bindings(self, overlay_active),
            full_screen=False,
            mouse_support=False,
            erase_when_done=False,
            input=input,
            output=output or output_without_cpr(),
            refresh_interval=0.25,
            min_redraw_interval=0.05,
        )
        app.ttimeoutlen = 0.05  # a lone Esc is a key, not the start of a sequence, after 50 ms
        app.timeoutlen = 0.3
        return app

    def _width(self) -> int:
        try:
            return max(20, self.app.output.get_size().columns)
        except Exception:  # no terminal size (tests): a usual width
            return 80

    def _rows(self) -> int:
        try:
            return max(8, self.app.output.get_size().rows)
        except Exception:
            return 24

    def _live_text(self) -> ANSI:
        width = self._width()
        budget = max(3, self._rows() - 6 - len(self._footer_lines(width)) - len(self.overlays.lines(width)))
        # A running tool row's timer changes each second without an event: redraw it then.
        tick = timer_tick(self.controller.live_blocks(), self.controller.clock())
        key = (self._version, width, budget, tick)
        if self._live_cache is None or self._live_cache[:4] != key:
            blocks = [live_tail(block) for block in self.controller.live_blocks()]
            text = self.renderer.render(blocks, width).rstrip("\n") if blocks else ""
            lines = text.split("\n") if text else []
            if len(lines) > budget:
                lines = ["\x1b[2m… (earlier lines print when finished)\x1b[0m", *lines[-(budget - 1) :]]
            self._live_cache = (*key, "\n".join(lines))
        return ANSI(self._live_cache[4])

    def _working_height(self) -> int:
        return 1 if self.controller.footer.working or self.controller.footer.working_message else 0

    def _working_text(self) -> ANSI:
        footer = self.controller.footer
        if not (footer.working or footer.working_message):
            return ANSI("")
        frame = _SPINNER[int(time.monotonic() * 8) % len(_SPINNER)]
        message = sanitize_text(footer.working_message or "Working…").replace("\n", " ")
        interrupt = self.keybindings.text("app.interrupt")
        hint = f" \x1b[2m({interrupt} to interrupt)\x1b[0m" if interrupt else ""
        return ANSI(f"\x1b[36m{frame}\x1b[0m {message}{hint}")

    def _overlay_text(self) -> ANSI:
        return ANSI("\n".join(self.overlays.lines(self._width())))

    def _footer_lines(self, width: int) -> list[str]:
        return footer_lines(self.controller.footer, width, cwd=relative_cwd(self.session.cwd))

    def _footer_text(self) -> ANSI:
        return ANSI("\x1b[2m" + "\n".join(self._footer_lines(self._width())) + "\x1b[0m")

    def invalidate(self) -> None:
        """Redraw soon, and print whatever finished."""
        self._version += 1
        app = getattr(self, "app", None)
        if app is None or not app.is_running:
            return
        app.invalidate()
        if not self._flushing and self.controller.committed < len(self.controller.blocks):
            self.spawn(self._flush())

    async def _flush(self) -> None:
        """Print finished blocks into the scrollback, above the live area."""
        if self._flushing:
            return
        self._flushing = True
        try:
            while True:
                blocks = self.controller.take_committed()
                if not blocks:
                    break
                text = self.renderer.render(blocks, self._width())
                await run_in_terminal(functools.partial(self._print_committed, text), in_executor=False)
        finally:
            self._flushing = False

    def _print_committed(self, text: str) -> None:
        # run_in_terminal redraws right after this returns: the live area must already leave out
        # what was just printed, or it draws those blocks a second time below their printed copy.
        self._live_cache = None
        self._write(text)

    def _write(self, text: str) -> None:
        out = self.app.output
        out.write_raw(text.replace("\r\n", "\n").replace("\n", "\r\n") + "\r\n")
        out.flush()

    def _set_title(self, title: str) -> None:
        self.app.output.set_title(sanitize_text(title).replace("\n", " "))

    # -- actions ------------------------------------------------------------------------------

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.controller.notice(str(task.exception()) or type(task.exception()).__name__, "error")

    def submit(self, text: str, behavior: str = "steer") -> None:
        """Send what the user typed: a command, a prompt, or (while running) a queued message."""
        if not text.strip():
            return
        self.spawn(self._submit(text, behavior))

    async def _submit(
        self, text: str, behavior: str = "steer", images: list[dict[str, Any]] | None = None
    ) -> None:
        if text.startswith("!"):
            from tau.modes.interactive.more_commands import run_user_bash

            await run_user_bash(self, text)
            return
        name, _, args = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
        command = BUILTIN_COMMANDS.get(name.strip()) if name else None
        if command is not None and command.run is not None:
            await command.run(self, args)
            return
        unknown = unknown_command(text, self.runner, self.session)
        if unknown is not None:
            self.controller.notice(f"Unknown command /{unknown}: /help lists the commands", "warning")
            if not self.editor.get_text():
                self.editor.set_text(text)
            return
        if self.session.is_streaming:
            await self.session.prompt(text, streaming_behavior=behavior)
            return
        try:
            await self.session.prompt(text, images=images)
        except Exception as exc:  # boundary: a refused prompt is shown, and the text kept
            self.controller.notice(str(exc), "error")
            if not self.editor.get_text():
                self.editor.set_text(text)

    async def _resume_first(self, first: str | None, images: list[dict[str, Any]] | None) -> None:
        """``tau -r``: pick the session first (none picked: leave, as pi), then send the prompts."""
        from tau.modes.interactive.commands import pick_session

        if not await pick_session(self):
            self.exit_message = "No session selected"
            self.exit()
            return
        if first is not None:
            await self._submit(first, images=images)

    def restore_queue_to_editor(self) -> int:
        """Empty the queues into the editor (queued texts first, then what was typed)."""
        queued = self.session.clear_queue()
        texts = [*queued.get("steering", []), *queued.get("followUp", [])]
        if texts:
            combined = [t for t in ("\n\n".join(texts), self.editor.get_text()) if t.strip()]
            self.editor.set_text("\n\n".join(combined))
        return len(texts)

    def escape(self) -> None:
        """Esc: abort a run (queued messages return to the editor), else close the completion menu."""
        if self.user_bash is not None:
            self.user_bash.abort()
            return
        if self.session.is_streaming or not self.session.is_idle():
            self.restore_queue_to_editor()
            self.spawn(self.session.abort())
        elif self.editor.buffer.complete_state:
            self.editor.buffer.cancel_completion()

    def reload_view(self) -> None:
        """Show the session's current branch again (after /tree, /fork, /new, /resume)."""
        self.controller.reset()
        width = self._width()
        label = self.session.get_session_name() or self.session.session_id
        self.controller.add(NoticeBlock("─" * max(0, min(width, 40) - 2) + f" {label}"))
        self.controller.load_messages(self.session.messages)
        self.refresh_footer()

    def _component_failed(self, component: Any, exc: BaseException) -> None:
        self.controller.notice(f"Overlay {type(component).__name__} failed: {exc}", "error")

    def request_shutdown(self) -> None:
        """``ctx.shutdown()``: leave once the agent is idle."""

        async def when_idle() -> None:
            await self.session.wait_for_idle()
            self.exit()

        self.spawn(when_idle())

    def _on_signal(self) -> None:
        from tau.tools.shell import kill_tracked_groups

        kill_tracked_groups()
        self.exit()

    def write_terminal_control(self, sequence: str) -> None:
        """Write a control sequence (OSC 52 for /copy) to the terminal as it is."""
        self.app.output.write_raw(sequence)
        self.app.output.flush()

    def reload(self) -> None:
        """``/reload``: start again on this session (the caller rebuilds settings, context, extensions)."""
        file = self.session.session_manager.get_session_file()
        self.switch_session(file if file and os.path.exists(file) else RELOAD)
        self.switch_reason = "reload"

    def toggle_expanded(self) -> None:
        """Ctrl+O: expand or collapse the tool rows still shown; when expanding, rows already printed
        with hidden lines are printed again below, in full (the scrollback cannot be redrawn)."""
        from tau.modes.interactive.tool_rows import folded_rows

        self.controller.toggle_tools_expanded()
        if not self.controller.tools_expanded:
            return
        printed = self.controller.blocks[: self.controller.committed]
        collapsed = folded_rows(printed, self._tool_definition, self._reprinted)
        if not collapsed:
            return
        shown = collapsed[-REPRINT_ROWS:]
        self._reprinted.update(id(block) for block in collapsed)
        earlier = len(collapsed) - len(shown)
        expand = self.keybindings.text("app.tools.expand") or "expand"
        note = f"{expand}: {counted(len(shown), 'row')} printed above, in full"
        if earlier:
            note += f" ({earlier} earlier: /export shows everything)"
        self.controller.add(NoticeBlock(note, "dim"))
        for block in shown:
            self.controller.add(dataclasses.replace(block, expanded=True))

    def switch_session(self, path: str) -> None:
        """Leave this session for ``path`` (the caller restarts the mode on it: ``can_switch``)."""
        self.switch_to = path
        self.exit()

    def exit(self) -> None:
        """Leave the mode (``/quit``, Ctrl+D, ``ctx.shutdown()``)."""
        self.overlays.close_all()
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit()

    # -- lifetime -----------------------------------------------------------------------------

    async def run(
        self,
        initial: str | None = None,
        messages: Iterable[str] = (),
        images: list[dict[str, Any]] | None = None,
    ) -> int:
        """Run until the user quits; ``initial`` (with ``images``, the ``@`` files) and ``messages``
        are sent first, one after another."""
        first = initial if initial and (initial.strip() or images) else None
        prompts = [p for p in list(messages) if p.strip()]
        if first is None and prompts:
            first, images = prompts.pop(0), None
        self._pending_prompts = prompts

        def started() -> None:
            self.invalidate()
            self.spawn(self.run_themes.watch_file())
            if self.resume_at_start:
                self.spawn(self._resume_first(first, images))
            elif first is not None:
                self.spawn(self._submit(first, images=images))

        # The start line and a resumed history are finished: print them before the first frame.
        # Drawn as a live frame first, they left a stale, truncated copy (editor and footer included)
        # in the scrollback once printed for real (issue 19).
        finished = self.controller.take_committed()
        if finished:
            self._write(self.renderer.render(finished, self._width()))
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self._on_signal)
        try:
            # Stray prints (extensions, libraries) become notices: sanitized, and never mid-frame.
            stray = StrayOutput(self.controller)
            with contextlib.redirect_stdout(stray), contextlib.redirect_stderr(stray):
                await self.app.run_async(pre_run=started)
        finally:
            for number in (signal.SIGTERM, signal.SIGHUP):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(number)
            not_sent = await self._stop_run()
            self._unsubscribe()
            for task in list(self._tasks):
                task.cancel()
        remaining = self.controller.take_committed() + self.controller.live_blocks()
        if remaining:
            self._write_plain(self.renderer.render(remaining, self._width()))
        for text in not_sent:
            first = " ".join(text.split())
            self._write_plain(f"\x1b[33mNot sent (queued when you quit): {first[:200]}\x1b[0m")
        if self.exit_message:
            self._write_plain(f"\x1b[2m{self.exit_message}\x1b[0m")
        elif self._interrupted and self.switch_to is None:
            self._write_plain(self._resume_line())
        return 0

    async def _stop_run(self) -> list[str]:
        """Leaving while the agent runs: the run is aborted as Esc aborts it, so the running tool ends
        with pi's aborted result in the session and no call is left without one. Returns the queued
        messages, which were never sent."""
        self._interrupted = (
            self.session.is_streaming or not self.session.is_idle() or self.user_bash is not None
        )
        if not self._interrupted:
            return []
        queued = self.session.clear_queue()
        if self.user_bash is not None:
            self.user_bash.abort()
        try:
            # Bounded: a tool that ignores the abort must not keep tau open (its thread is left).
            await asyncio.wait_for(self.session.abort(), ABORT_GRACE_SECONDS)
        except (TimeoutError, asyncio.CancelledError):
            pass
        except Exception as exc:  # boundary: leaving must not fail; say what happened
            self.controller.notice(f"Abort failed: {exc}", "error")
        return [*queued.get("steering", []), *queued.get("followUp", [])]

    def _resume_line(self) -> str:
        manager = self.session.session_manager
        file = manager.get_session_file()
        if file and os.path.exists(file):
            return (
                f"\x1b[2mStopped during a run. Resume with: tau --session {manager.get_session_id()}\x1b[0m"
            )
        return "\x1b[2mStopped during a run; nothing was saved (no session file).\x1b[0m"

    def _write_plain(self, text: str) -> None:
        with contextlib.suppress(Exception):
            self._write(text)
