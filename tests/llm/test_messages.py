"""tau.llm.messages: pi's message shapes and the accessors every layer (and every extension) uses."""

from __future__ import annotations

import typing

import pytest

import tau.extension
from fixture_paths import fixtures_dir
from tau.llm import messages as m
from tau.session import SessionManager
from tau.session.projection import build_session_projection

FIXTURES = fixtures_dir()
SESSIONS = sorted(p for d in ("scenarios", "real") for p in FIXTURES.glob(f"{d}/*.jsonl")) if FIXTURES else []
SHAPES = {
    "system": m.SystemMessage,
    "user": m.UserMessage,
    "assistant": m.AssistantMessage,
    "toolResult": m.ToolResultMessage,
    "custom": m.CustomMessage,
    "bashExecution": m.BashExecutionMessage,
    "branchSummary": m.BranchSummaryMessage,
    "compactionSummary": m.CompactionSummaryMessage,
}
BLOCKS = {
    "text": m.TextContent,
    "thinking": m.ThinkingContent,
    "image": m.ImageContent,
    "toolCall": m.ToolCall,
}


# real/ sessions were written by pi 0.x (2025), whose streaming left its buffer on tool calls
OLDER_PI = {"partialJson"}


def _fits(value: dict, shape: type) -> list[str]:
    # (``__required_keys__`` cannot be trusted under postponed annotations before Python 3.12)
    hints = typing.get_type_hints(shape, include_extras=True)
    required = {key for key, hint in hints.items() if typing.get_origin(hint) is not typing.NotRequired}
    return [f"missing {key}" for key in sorted(required - set(value))] + [
        f"unknown {key}" for key in sorted(set(value) - set(hints) - OLDER_PI)
    ]


@pytest.mark.skipif(not SESSIONS, reason="pi fixtures not found (../shared/fixtures/pi or TAU_FIXTURES)")
def test_every_message_pi_wrote_or_tau_projects_fits_its_shape():
    """The TypedDicts are pi's shapes: every message of pi's own session files, and every agent
    message tau projects from them (summaries, custom messages), has the keys its shape names."""
    problems, roles, kinds = [], set(), set()
    for path in SESSIONS:
        if path.name.endswith(".events.jsonl"):
            continue
        manager = SessionManager.open(path, read_only=True)
        stored = [entry["message"] for entry in manager.get_entries() if m.entry_message(entry)]
        for message in stored + build_session_projection(manager.get_branch())["messages"]:
            role = m.role_of(message)
            roles.add(role)
            problems += [f"{path.name} {role}: {p}" for p in _fits(message, SHAPES[role])]
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                kinds.add(block["type"])
                problems += [
                    f"{path.name} {role} {block['type']}: {p}" for p in _fits(block, BLOCKS[block["type"]])
                ]
    assert problems == []
    assert roles >= {
        "system",
        "user",
        "assistant",
        "toolResult",
        "custom",
        "bashExecution",
        "branchSummary",
        "compactionSummary",
    }
    assert kinds >= {"text", "toolCall"}


def test_content_text_reads_strings_blocks_and_anything_a_file_may_hold():
    blocks = [
        {"type": "text", "text": "one"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "thinking", "thinking": "hidden"},
        {"type": "text", "text": "two"},
    ]
    assert m.content_text("plain") == "plain"
    assert m.content_text(blocks) == "one\ntwo"
    assert m.content_text(blocks, " ") == "one two"
    assert m.content_text(None) == m.content_text({"text": "x"}) == m.content_text(7) == ""
    # a file may hold anything: non-objects are skipped, a text block without a string text is empty
    assert (
        m.content_text(
            ["raw", 3, {"type": "text"}, {"type": "text", "text": 5}, {"type": "text", "text": "z"}]
        )
        == "\n\nz"
    )


def test_message_text_reads_any_message_with_content_tool_results_included():
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "out"}, {"type": "text", "text": "err"}],
        "isError": False,
        "timestamp": 1,
    }
    assert m.message_text(result) == "out\nerr"
    assert m.message_text({"role": "user", "content": "hi"}) == "hi"
    assert m.message_text({"role": "branchSummary", "summary": "s"}) == ""
    assert m.message_text(None) == m.message_text("text") == ""


def test_tool_calls_in_order_and_nothing_else():
    first = {"type": "toolCall", "id": "a", "name": "read", "arguments": {"path": "x"}}
    second = {"type": "toolCall", "id": "b", "name": "bash", "arguments": {}}
    message = {"role": "assistant", "content": [first, {"type": "text", "text": "t"}, "junk", second]}
    assert m.tool_calls(message) == [first, second]
    assert m.tool_calls(message)[0] is first
    assert m.has_tool_calls(message)
    for other in (
        {"role": "assistant", "content": [{"type": "text", "text": "t"}]},
        {"content": "s"},
        None,
        [],
    ):
        assert m.tool_calls(other) == []
        assert not m.has_tool_calls(other)


def test_roles_are_checked_without_trusting_the_value():
    assert m.role_of({"role": "assistant"}) == "assistant"
    assert m.role_of({"role": ["assistant"]}) is None
    assert m.role_of("assistant") is None
    checks = {
        "system": m.is_system,
        "user": m.is_user,
        "assistant": m.is_assistant,
        "toolResult": m.is_tool_result,
        "custom": m.is_custom,
        "bashExecution": m.is_bash_execution,
    }
    for role, check in checks.items():
        assert [name for name, other in checks.items() if other({"role": role})] == [role]
        assert not check(None) and not check([role])
    assert m.is_custom({"role": "custom", "customType": "todo"}, "todo")
    assert not m.is_custom({"role": "custom", "customType": "todo"}, "other")


def test_entry_message_and_message_key():
    message = {"role": "toolResult", "timestamp": 5, "toolCallId": "c"}
    entry = {"type": "message", "id": "e", "message": message}
    assert m.entry_message(entry) is message
    assert m.entry_message(entry, "toolResult") is message
    assert m.entry_message(entry, "assistant") is None
    assert m.entry_message({"type": "custom_message", "message": message}) is None
    assert m.entry_message({"type": "message", "message": "text"}) is None
    assert m.entry_message(None) is None
    assert m.message_key(message) == ("toolResult", 5, "c", None)
    assert m.message_key(dict(message)) == m.message_key(message)
    assert m.message_key("x") == (None, None, None, None)


def test_extensions_reach_the_same_objects():
    for name in m.__all__:
        if name in tau.extension.__all__:
            assert getattr(tau.extension, name) is getattr(m, name)
    assert {"content_text", "message_text", "tool_calls", "entry_message", "AgentMessage"} <= set(
        tau.extension.__all__
    )
