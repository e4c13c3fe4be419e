"""Hidden tool declarations (``prepare_loadout``): what requests see, kept between requests (issue 28)."""

from __future__ import annotations

import copy

from tau.agent.session.hidden_declarations import HiddenDeclarations, without_declarations


def tool(name: str) -> dict:
    return {"name": name, "description": f"the {name} tool", "parameters": {"type": "object"}}


def system(*names: str, removed: tuple[str, ...] = ()) -> dict:
    message = {"role": "system", "content": "prompt", "toolsAdded": [tool(n) for n in names], "timestamp": 1}
    if removed:
        message["toolsRemoved"] = [tool(n) for n in removed]
    return message


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 2}


def test_requests_leave_hidden_tools_out_and_the_transcript_keeps_them():
    messages = [system("read", "code", "bash"), user("a"), system("grep", removed=("code",)), user("b")]
    stored = copy.deepcopy(messages)
    seen = HiddenDeclarations().apply(messages, {"code", "bash"})
    assert seen == without_declarations(messages, {"code", "bash"})
    assert [t["name"] for t in seen[0]["toolsAdded"]] == ["read"]
    assert "toolsRemoved" not in seen[2] and [t["name"] for t in seen[2]["toolsAdded"]] == ["grep"]
    assert seen[1] is messages[1] and seen[3] is messages[3]
    assert messages == stored


def test_the_next_request_gets_the_same_stripped_copies_so_identity_caches_keep_working():
    declarations = HiddenDeclarations()
    messages = [system("read", "code"), user("a")]
    first = declarations.apply(messages, {"code"})
    messages += [user("b"), system("grep", "code"), user("c")]
    second = declarations.apply(list(messages), {"code"})
    assert second[0] is first[0]
    assert second == without_declarations(messages, {"code"})
    third = declarations.apply(list(messages), {"code"})
    assert all(a is b for a, b in zip(second, third, strict=True))


def test_a_system_message_edited_in_place_is_stripped_again():
    declarations = HiddenDeclarations()
    messages = [system("read", "code"), user("a"), {"role": "system", "content": "plain", "timestamp": 3}]
    first = declarations.apply(messages, {"code"})
    messages[0]["toolsAdded"].append(tool("write"))  # a handler's edit of its copy
    messages[0]["content"] = "edited"
    messages[2]["toolsAdded"] = [tool("code"), tool("grep")]  # one that declared nothing now does
    second = declarations.apply(messages, {"code"})
    assert second == without_declarations(messages, {"code"})
    assert second[0] is not first[0] and second[0]["content"] == "edited"
    assert [t["name"] for t in second[0]["toolsAdded"]] == ["read", "write"]
    assert [t["name"] for t in second[2]["toolsAdded"]] == ["grep"]


def test_another_hidden_set_or_another_list_starts_over():
    declarations = HiddenDeclarations()
    messages = [system("read", "code", "bash"), user("a")]
    declarations.apply(messages, {"code"})
    assert declarations.apply(messages, {"bash"}) == without_declarations(messages, {"bash"})
    other = [user("x"), system("code", "grep")]
    assert declarations.apply(other, {"bash"}) == without_declarations(other, {"bash"})
