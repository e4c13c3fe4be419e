"""Sanitizing and rendering: what reaches the terminal is tau's own styling and nothing else."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.modes.interactive.model import AssistantBlock, ChatController, FooterState, ToolBlock
from tau.modes.interactive.render import BlockRenderer, footer_lines
from tau.modes.interactive.sanitize import sanitize_styled_line, sanitize_text
from tau.tools.base import ToolDefinition

FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile(r"\x1b\[[0-9;:]*m")
TERMINAL_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            " ",
            "\n",
            "\r",
            "\t",
            "\x1b",
            "[",
            "]",
            "2",
            "J",
            ";",
            "m",
            "\x07",
            "\x9b",
            "\u202e",
            "é",
            "\x00",
            "\\",
            "P",
        ]
    ),
    max_size=60,
)


@settings(deadline=None, max_examples=300)
@given(TERMINAL_TEXT)
def test_sanitized_text_has_no_control_characters_but_newlines(text):
    assert not FORBIDDEN.search(sanitize_text(text))


@settings(deadline=None, max_examples=300)
@given(TERMINAL_TEXT)
def test_styled_lines_keep_only_sgr(text):
    line = sanitize_styled_line(text)
    assert not FORBIDDEN.search(SGR.sub("", line))  # ESC is a C0 control: only SGR keeps it
    assert "\n" not in line


@settings(deadline=None, max_examples=100)
@given(TERMINAL_TEXT)
def test_rendered_blocks_carry_only_sgr_sequences(text):
    controller = ChatController()
    controller.handle_event({"type": "message_start", "message": {"role": "user", "content": text}})
    controller.handle_event(
        {
            "type": "message_end",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stopReason": "stop",
            },
        }
    )
    controller.handle_event(
        {"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash", "args": {"command": text}}
    )
    controller.handle_event(
        {
            "type": "tool_execution_end",
            "toolCallId": "c",
            "toolName": "bash",
            "result": {"content": [{"type": "text", "text": text}]},
            "isError": False,
        }
    )
    rendered = BlockRenderer().render(controller.blocks, 50)
    assert not FORBIDDEN.search(SGR.sub("", rendered).replace("\n", ""))


def test_thinking_markdown_and_error_of_an_assistant_message():
    block = AssistantBlock(
        text="# Title\n\n- item", thinking="pondering", done=True, stop_reason="error", error="overloaded"
    )
    text = BlockRenderer().render([block], 60, color=False)
    assert "pondering" in text and "Title" in text and "• item" in text and "Error: overloaded" in text
    assert "#" not in text  # markdown, not raw


def test_extension_tool_renderers_and_their_failure():
    def render_call(args):
        return f"deploy to {args['env']}"

    def render_result(result, options):
        return [f"deployed ({'partial' if options['isPartial'] else 'final'})"]

    definition = ToolDefinition(
        name="deploy",
        label="Deploy",
        description="",
        parameters={},
        execute=None,
        render_call=render_call,
        render_result=render_result,
    )
    broken = ToolDefinition(
        name="broken",
        label="",
        description="",
        parameters={},
        execute=None,
        render_call=lambda args: 1 / 0,
    )
    definitions = {"deploy": definition, "broken": broken}
    renderer = BlockRenderer(definitions.get)
    done = ToolBlock("c", "deploy", {"env": "prod"}, status="done", output="raw", result={"content": []})
    assert renderer.render([done], 60, color=False).splitlines()[:2] == [
        "✓ deploy to prod",
        "  deployed (final)",
    ]
    fallback = ToolBlock("d", "broken", {"x": 1}, status="running")
    assert renderer.render([fallback], 60, color=False).splitlines()[0] == '⋯ broken {"x": 1}'


def test_footer_shows_queues_widgets_model_context_and_statuses():
    footer = FooterState(
        model="faux/faux-1",
        thinking="low",
        context={"tokens": 1500, "contextWindow": 128000, "percent": 1.17},
        session_name="demo",
        statuses={"b": "second", "a": "first"},
        widgets={"w": ["widget line"]},
        steering=["steer text"],
        follow_up=["later text"],
    )
    assert footer_lines(footer, 80, cwd="~/p") == [
        "⤷ steer: steer text",
        "⤷ follow-up: later text",
        "widget line",
        "~/p • demo",
        "faux/faux-1 • low • ctx 1.2% of 128k",
        "first • second",
    ]
    assert all(len(line) <= 20 for line in footer_lines(footer, 20))


def test_counts_read_in_the_singular_for_one():
    """Issue 19: `write a.txt (1 lines)`."""
    one = ToolBlock("c1", "write", {"path": "a.txt", "content": "x"}, status="done")
    two = ToolBlock("c2", "write", {"path": "b.txt", "content": "x\ny\n"}, status="done")
    nine = ToolBlock("c3", "read", {"path": "c.txt"}, status="done", output="\n".join("123456789"))
    text = BlockRenderer().render([one, two, nine], 80, color=False)
    assert "✓ write a.txt (1 line)\n" in text and "✓ write b.txt (2 lines)\n" in text
    assert "… 1 more line (ctrl+o to expand)" in text
