"""System-message replay: prompt, sections, tools, collapse, and the fixtures' real transcripts."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.llm.transcript import (
    collapse_system_messages,
    current_system_message,
    current_system_prompt,
    current_tools,
    normalize_context,
    render_system_message_update,
    resolve_transcript_tools,
    tool_state_changes,
)


def tool(name, description="d"):
    return {"name": name, "description": description, "parameters": {"type": "object"}}


SYSTEM_1 = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "You help.", "tools": "<tools>\n- read\n</tools>", "cwd": "<cwd>\n/p\n</cwd>"},
    "timestamp": 5,
    "toolsAdded": [tool("read"), tool("bash")],
}
USER = {"role": "user", "content": "hi", "timestamp": 6}
SYSTEM_2 = {
    "role": "system",
    "content": "Extra rule.",
    "sections": {"tools": None, "todo": "<todo>\n1 open\n</todo>"},
    "timestamp": 7,
    "toolsRemoved": [{"name": "bash"}, {"name": "read"}],
    "toolsAdded": [tool("read", "new"), tool("todo")],
}


def test_replay_patches_sections_and_tools_by_name():
    merged = current_system_message([SYSTEM_1, USER, SYSTEM_2])
    assert merged == {
        "role": "system",
        "content": "Extra rule.",
        "sections": {"preamble": "You help.", "cwd": "<cwd>\n/p\n</cwd>", "todo": "<todo>\n1 open\n</todo>"},
        "toolsAdded": [tool("read", "new"), tool("todo")],
        "timestamp": 5,
    }
    assert current_system_prompt([SYSTEM_1, USER, SYSTEM_2]) == (
        "Extra rule.\n\nYou help.\n\n<cwd>\n/p\n</cwd>\n\n<todo>\n1 open\n</todo>"
    )
    assert [t["name"] for t in current_tools([SYSTEM_1, USER, SYSTEM_2])] == ["read", "todo"]


def test_no_system_messages_means_no_prompt():
    assert current_system_message([USER]) is None
    assert current_system_prompt([USER]) == ""


def test_normalize_context_folds_prompt_and_tools_into_a_leading_message():
    assert normalize_context({"systemPrompt": "Be brief.", "messages": [USER], "tools": [tool("read")]}) == {
        "messages": [
            {"role": "system", "content": "Be brief.", "toolsAdded": [tool("read")], "timestamp": 0},
            USER,
        ]
    }
    assert normalize_context({"systemPrompt": "", "messages": [USER]}) == {"messages": [USER]}


def test_collapse_keeps_one_leading_system_message():
    collapsed = collapse_system_messages({"messages": [SYSTEM_1, USER, SYSTEM_2]})
    assert [m["role"] for m in collapsed["messages"]] == ["system", "user"]
    assert collapsed["messages"][0] == current_system_message([SYSTEM_1, USER, SYSTEM_2])


def test_update_rendering_names_sections():
    assert render_system_message_update(SYSTEM_2) == (
        'Extra rule.\n\nRemoved system prompt section "tools".\n\n'
        'Updated system prompt section "todo":\n\n<todo>\n1 open\n</todo>'
    )


def test_tool_state_changes_treat_a_changed_tool_as_removed_and_added():
    added, removed = tool_state_changes([tool("read"), tool("bash")], [tool("read", "new"), tool("todo")])
    assert added == [tool("read", "new"), tool("todo")]
    assert removed == [{"name": "read"}, {"name": "bash"}]


def test_resolve_transcript_tools():
    messages = [SYSTEM_1, USER, SYSTEM_2]
    assert resolve_transcript_tools(messages, "none") == ([tool("read", "new"), tool("todo")], 2)
    assert resolve_transcript_tools(messages, "changes") == ([], 0)
    # SYSTEM_2 removes tools: additions-only transports fold both system messages into the top level.
    assert resolve_transcript_tools(messages, "additions") == ([tool("read", "new"), tool("todo")], 2)
    additive = dict(SYSTEM_2, toolsRemoved=[], toolsAdded=[tool("todo")])
    assert resolve_transcript_tools([SYSTEM_1, USER, additive], "additions") == (
        [tool("read"), tool("bash")],
        1,
    )


def test_fixture_transcripts_replay(pi_fixtures):
    """Every recorded request's first message is a system message whose sections render to a prompt."""
    for path in sorted((pi_fixtures / "scenarios").glob("*.requests.json")):
        for request in json.loads(path.read_text())["requests"]:
            messages = request["context"]["messages"]
            assert messages[0]["role"] == "system", path.name
            prompt = current_system_prompt(messages)
            assert prompt, path.name
            if request["kind"] == "turn":
                assert prompt.startswith("You are a coding assistant"), path.name
                assert "read" in [t["name"] for t in current_tools(messages)], path.name


def test_system_messages_of_a_growing_transcript_equal_a_fresh_scan():
    """Issue 17: the scan is extended while the same list only grows; anything else scans again."""
    import random

    from tau.llm import transcript

    rnd = random.Random(5)
    messages: list = []
    other: list = []
    for step in range(300):
        action = rnd.random()
        if action < 0.6:
            role = rnd.choice(["system", "user", "assistant", "toolResult"])
            messages.append({"role": role, "content": f"m{step}", "sections": {"s": str(step)}})
        elif action < 0.7 and messages:
            messages[rnd.randrange(len(messages))] = {"role": rnd.choice(["system", "user"]), "content": "r"}
        elif action < 0.75 and messages:
            del messages[rnd.randrange(len(messages))]
        elif action < 0.8:
            other = [{"role": "system", "content": "o"}, *messages[:3]]
            assert transcript._system_messages(other) == [m for m in other if m["role"] == "system"]
        expected = [m for m in messages if m["role"] == "system"]
        assert transcript._system_messages(messages) == expected
        # a tuple is always scanned afresh: the reference
        fresh = transcript.current_system_message(tuple(messages))
        assert transcript.current_system_message(messages) == fresh
        assert transcript._system_messages(messages) == expected


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3), st.sampled_from(["append", "replace", "delete", "fork"]), st.integers(0, 50)
        ),
        max_size=40,
    )
)
def test_system_message_scans_of_lists_sharing_leading_objects_equal_fresh_scans(steps):
    """Issue 17: transcripts that start with the same objects (the session's, the converted copy, a
    request's copy) share a remembered scan; each answer equals a scan of a tuple of the same items."""
    from tau.llm import transcript

    roles = ["system", "user", "assistant", "toolResult"]
    lists: list[list] = [[], [], [], []]
    for number, (which, action, pick) in enumerate(steps):
        messages = lists[which]
        if action == "append":
            message = {"role": roles[pick % 4], "content": f"m{number}", "sections": {"s": str(number)}}
            if pick % 3 == 0:
                message["toolsAdded"] = [tool(f"t{pick % 5}", f"d{number}")]
            messages.append(message)
        elif action == "replace" and messages:
            messages[pick % len(messages)] = {"role": roles[pick % 4], "content": "r", "timestamp": number}
        elif action == "delete" and messages:
            del messages[pick % len(messages)]
        elif action == "fork":
            lists[(which + 1) % 4] = messages[: pick % (len(messages) + 1)]
        for current in lists:
            system = [m for m in current if m["role"] == "system"]
            rest = [m for m in current if m["role"] != "system"]
            assert list(map(id, transcript._system_messages(current))) == list(map(id, system))
            assert list(map(id, transcript.without_system_messages(current))) == list(map(id, rest))
            assert transcript.current_system_message(current) == transcript.current_system_message(
                tuple(current)
            )
            assert transcript.current_tools(current) == transcript.current_tools(tuple(current))
