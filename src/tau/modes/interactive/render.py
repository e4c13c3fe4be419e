"""Blocks to terminal text, with ``rich``: markdown answers, dim thinking, tool rows, notices, footer.

Every string that reaches these functions has been sanitized by the controller; ``rich`` adds the
only escape sequences (SGR styling; hyperlinks are off). ``color=False`` gives plain text for tests.
"""

from __future__ import annotations

import dataclasses
import io
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text

from tau.modes.interactive.keybindings import active as active_keys
from tau.modes.interactive.model import (
    AssistantBlock,
    Block,
    CustomBlock,
    FooterState,
    NoticeBlock,
    ToolBlock,
    UserBlock,
)
from tau.modes.interactive.sanitize import sanitize_styled_line, sanitize_text
from tau.modes.interactive.tool_rows import tool_row
from tau.modes.interactive.tool_timer import timer_text
from tau.modes.themes import SYSTEM, Theme, builtin_theme
from tau.modes.wording import counted

__all__ = ["BlockRenderer", "footer_lines", "live_tail", "to_text"]

LIVE_TAIL_CHARS = 6000

_NOTICE_TOKENS = {"info": "accent", "warning": "warning", "error": "error", "dim": "dim"}
_STATUS_MARKS = {"running": ("⋯", "warning"), "done": ("✓", "success"), "error": ("✗", "error")}
_ROW_BACKGROUNDS = {"running": "toolPendingBg", "done": "toolSuccessBg", "error": "toolErrorBg"}
_SYSTEM_THEME = builtin_theme(SYSTEM) or Theme(SYSTEM)


def _style(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def to_text(renderable: RenderableType, width: int, *, color: bool = True, theme: Theme | None = None) -> str:
    """Render to a string: ANSI-styled for the terminal (in ``theme``'s markdown colours), or plain."""
    from rich.theme import Theme as RichTheme

    styles = theme.markdown_styles() if theme is not None and color else {}
    # A theme file's exact colours where the terminal says it shows them; 256 colours otherwise.
    truecolor = bool(styles) and os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")
    console = Console(
        theme=RichTheme(styles) if styles else None,
        file=io.StringIO(),
        width=max(20, width),
        force_terminal=color,
        no_color=not color,
        color_system=("truecolor" if truecolor else "256") if color else None,
        legacy_windows=False,
        emoji=False,
        highlight=False,
        markup=False,
        soft_wrap=False,
    )
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


class BlockRenderer:
    """Renders blocks; knows the tool definitions and message renderers extensions registered.

    Args:
        tool_definition: name → ``ToolDefinition`` (for ``render_call``/``render_result``), or ``None``.
        message_renderer: custom type → renderer ``(message, {"expanded"}) -> str | list[str]``, or ``None``.
        hide_thinking: Whether thinking is shown as one ``Thinking...`` line (pi's ``hideThinkingBlock``).
        theme: The theme in use (read at each render, so a change shows at once); ``system`` if ``None``.
        clock: The clock the tool rows' timers read (the controller's; tests give a fake one).
    """

    def __init__(
        self,
        tool_definition: Callable[[str], Any] | None = None,
        message_renderer: Callable[[str], Any] | None = None,
        hide_thinking: Callable[[], bool] | None = None,
        theme: Callable[[], Theme] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._theme = theme or (lambda: _SYSTEM_THEME)
        self._clock = clock
        self._tool_definition = tool_definition or (lambda name: None)
        self._message_renderer = message_renderer or (lambda custom_type: None)
        self._hide_thinking = hide_thinking or (lambda: False)

    @property
    def theme(self) -> Theme:
        return self._theme()

    def renderable(self, block: Block) -> RenderableType:
        theme = self.theme
        if isinstance(block, UserBlock):
            text = Text(block.text, style=_style("bold", theme.fg("userMessageText")))
            return Padding(text, (0, 0, 0, 0), style=theme.bg("userMessageBg"), expand=True)
        if isinstance(block, AssistantBlock):
            return self._assistant(block)
        if isinstance(block, ToolBlock):
            return self._tool(block)
        if isinstance(block, NoticeBlock):
            token = _NOTICE_TOKENS.get(block.level)
            if token is None:
                return Text(block.text)
            return Text(block.text, style=_style("bold" if block.level == "error" else "", theme.fg(token)))
        return self._custom(block)

    def render(self, blocks: Iterable[Block], width: int, *, color: bool = True) -> str:
        """The blocks as one string, a blank line between them."""
        theme = self.theme
        parts = [
            to_text(self.renderable(block), width, color=color, theme=theme)
            for block in blocks
            if not _empty(block)
        ]
        return "\n".join(parts)

    def _assistant(self, block: AssistantBlock) -> RenderableType:
        theme = self.theme
        parts: list[RenderableType] = []
        if block.thinking:
            # pi's hideThinkingBlock: the thoughts become one "Thinking..." line
            shown = "Thinking..." if self._hide_thinking() else block.thinking
            parts.append(Text(shown, style=_style(theme.fg("thinkingText"), "italic")))
        if block.text:
            code_theme = "ansi_light" if theme.appearance == "light" else "ansi_dark"
            parts.append(Markdown(block.text, hyperlinks=False, code_theme=code_theme))
        if block.error:
            parts.append(
                Text(
                    f"{'Aborted' if block.stop_reason == 'aborted' else 'Error'}: {block.error}",
                    style=theme.fg("error"),
                )
            )
        if not parts:
            parts.append(Text("…" if not block.done else "", style=theme.fg("dim")))
        return Group(*parts)

    def _tool(self, block: ToolBlock) -> RenderableType:
        theme = self.theme
        row = tool_row(block, self._tool_definition(block.name), timer=timer_text(block, self._clock()))
        mark, token = _STATUS_MARKS[block.status]
        title = _Indented(
            Text(f"{mark} ", theme.fg(token)), Text(row.title, _style("bold", theme.fg("toolTitle")))
        )
        lines: list[RenderableType] = [title]
        expand = active_keys().text("app.tools.expand")
        more = f"  … {counted(row.hidden, 'more line')}" + (f" ({expand} to expand)" if expand else "")
        hint = Text(more, style=theme.fg("dim"))
        if row.hidden and row.hidden_at_start:
            lines.append(hint)
        body_style = theme.fg("error" if block.status == "error" else "toolOutput")
        lines.extend(
            _Indented(Text("  "), Text(line, style="bold" if index in row.highlighted else body_style))
            for index, line in enumerate(row.body)
        )
        if row.hidden and not row.hidden_at_start:
            lines.append(hint)
        lines.extend(_Indented(Text("  "), Text(line, style=theme.fg("muted"))) for line in row.footer)
        # pi's tool boxes: the row on its status's background, the width of the screen (none in ``system``).
        background = theme.bg(_ROW_BACKGROUNDS[block.status])
        if not background:
            return Group(*lines)
        return Padding(Group(*lines), (0, 0, 0, 0), style=background, expand=True)

    def _custom(self, block: CustomBlock) -> RenderableType:
        renderer = self._message_renderer(block.custom_type) if block.custom_type else None
        if renderer is not None and block.message is not None:
            try:
                value = renderer(block.message, {"expanded": False})
                lines = value if isinstance(value, (list, tuple)) else str(value).split("\n")
                return Text.from_ansi("\n".join(sanitize_styled_line(str(line)) for line in lines))
            except Exception:  # boundary: a broken extension renderer falls back to the default
                pass
        return Group(Text(f"[{block.label}]", style=self.theme.fg("customMessageLabel")), Text(block.text))


class _Indented:
    """``prefix`` then ``text``, whose wrapped lines start below the text, not at column 0."""

    def __init__(self, prefix: Text, text: Text) -> None:
        self.prefix, self.text = prefix, text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = self.prefix.cell_len
        lines = self.text.wrap(console, max(1, options.max_width - indent)) or [Text()]
        for index, line in enumerate(lines):
            line.rstrip()
            yield Text.assemble(self.prefix if index == 0 else " " * indent, line)


def _empty(block: Block) -> bool:
    """A finished assistant message with nothing to show (only tool calls: their rows follow)."""
    return (
        isinstance(block, AssistantBlock) and block.done and not (block.text or block.thinking or block.error)
    )


def _context_text(usage: dict[str, Any] | None) -> str:
    if not usage:
        return "ctx ?"
    window = usage.get("contextWindow") or 0
    percent = usage.get("percent")
    tokens = usage.get("tokens")
    if percent is None or tokens is None:
        return f"ctx ?/{window // 1000}k"
    return f"ctx {percent:.1f}% of {window // 1000}k"


def footer_lines(footer: FooterState, width: int, *, cwd: str = "") -> list[str]:
    """The footer as plain lines (queued messages, widgets, model line, extension statuses)."""
    lines: list[str] = []
    for text in footer.steering:
        lines.append(_clip(f"⤷ steer: {text}", width))
    for text in footer.follow_up:
        lines.append(_clip(f"⤷ follow-up: {text}", width))
    for widget in footer.widgets.values():
        lines.extend(_clip(line, width) for line in widget)
    place = " • ".join(part for part in (cwd, footer.session_name) if part)
    if place:
        lines.append(_clip(place, width))
    lines.append(_clip(f"{footer.model} • {footer.thinking} • {_context_text(footer.context)}", width))
    if footer.statuses:
        lines.append(_clip(" • ".join(footer.statuses[key] for key in sorted(footer.statuses)), width))
    return lines


def _clip(text: str, width: int) -> str:
    text = sanitize_text(text).replace("\n", " ")
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def live_tail(block: Any) -> Any:
    """A long streaming answer's last paragraphs: the live area shows only its end anyway.

    The whole answer is rendered once, when it is printed into the scrollback.
    """
    if not isinstance(block, AssistantBlock) or len(block.text) <= LIVE_TAIL_CHARS:
        return block
    cut = block.text.find("\n\n", len(block.text) - LIVE_TAIL_CHARS)
    cut = cut + 2 if cut >= 0 else len(block.text) - LIVE_TAIL_CHARS
    tail = block.text[cut:]
    if block.text[:cut].count("```") % 2:  # the cut fell inside a code block: reopen it
        tail = "```\n" + tail
    return dataclasses.replace(block, text=tail)
