"""The marker draft, and the context rewrite: only a marker next to a human message is removed."""

from __future__ import annotations

import copy

import pytest

from tau.bundled.todo_loop.marker import (
    NUDGE,
    NUDGE_WITH_BLOCK,
    marker_draft,
    without_markers_next_to_human,
)


def human(text: str = "hi") -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def reply(stop: str = "stop") -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": stop}


def marker() -> dict:
    return {"role": "custom", "customType": "todo-loop:continue", "content": NUDGE, "display": False}


def other_custom() -> dict:
    return {
        "role": "custom",
        "customType": "pi-todo:snapshot",
        "content": "[todo snapshot]",
        "display": False,
    }


def test_the_draft_is_one_hidden_custom_message_with_a_fixed_sentence():
    assert marker_draft(with_block=False) == {
        "type": "custom_message",
        "customType": "todo-loop:continue",
        "content": "Continue working: your todo list still has unfinished tasks.",
        "display": False,
    }
    assert marker_draft(with_block=True)["content"] == (
        "Continue working: your todo list still has unfinished tasks. "
        "If you cannot make progress without the user, call todo_loop_block with the reason."
    )
    assert NUDGE_WITH_BLOCK.startswith(NUDGE)


@pytest.mark.parametrize(
    "messages",
    [
        [human(), reply(), marker()],  # the continued request: ends on the marker
        [human(), reply(), marker(), reply(), marker(), reply(), human("next")],
        [human(), reply(), marker(), other_custom()],
        [human(), reply()],
        [],
        [human(), {"role": "toolResult", "toolCallId": "c", "content": []}, marker(), reply()],
    ],
)
def test_every_other_request_passes_through(messages):
    assert without_markers_next_to_human(copy.deepcopy(messages)) is None


def test_a_marker_before_a_human_message_is_removed_and_nothing_else_changes():
    messages = [human("a"), reply(), marker(), human("b")]
    kept = without_markers_next_to_human(messages)
    assert kept == [human("a"), reply(), human("b")]
    assert kept[0] is messages[0] and kept[2] is messages[3]


def test_a_marker_after_a_human_message_is_removed():
    assert without_markers_next_to_human([reply(), human("a"), marker(), reply()]) == [
        reply(),
        human("a"),
        reply(),
    ]


def test_dropped_assistant_messages_do_not_separate_the_marker_from_the_human():
    """The continued request failed, then the human wrote: the provider would see user → user."""
    messages = [human("a"), reply(), marker(), reply("error"), human("b")]
    assert without_markers_next_to_human(messages) == [human("a"), reply(), reply("error"), human("b")]


def test_a_run_of_markers_next_to_a_human_goes_together():
    assert without_markers_next_to_human([reply(), marker(), marker(), human()]) == [reply(), human()]


def test_custom_user_messages_are_not_human():
    resume = {"role": "user", "customType": "other:resume", "content": "go"}
    assert without_markers_next_to_human([reply(), marker(), resume]) is None
