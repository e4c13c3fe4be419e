"""What context handlers may edit never reaches the session's stored messages."""

from __future__ import annotations

from tau.extension.context_copies import ContextCopies


def message(text: str) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": text}],
        "details": {"k": 1},
    }


def test_edits_to_copies_leave_the_sources_alone():
    source = [message("long output")]
    copies = ContextCopies()
    first = copies.copy(source)
    first[0]["content"][0]["text"] = "[placeholder]"
    first[0]["content"].append({"type": "text", "text": "more"})
    first[0]["isError"] = True
    assert source == [message("long output")]


def test_unchanged_copies_are_reused_and_edited_ones_restored():
    source = [message("a"), message("b")]
    copies = ContextCopies()
    first = copies.copy(source)
    first[1]["content"][0]["text"] = "edited"
    second = copies.copy(source)
    assert second[0] is first[0]
    assert second[1] == source[1]  # restored in place: it keeps its place for incremental passes
    assert second[1] is first[1]


def test_a_new_source_object_gets_a_new_copy():
    copies = ContextCopies()
    first = copies.copy([message("a")])
    second = copies.copy([message("a")])
    assert second[0] is not first[0]
