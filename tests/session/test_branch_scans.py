"""The branch scans give what the straightforward loops give, damaged entries included (issue 28)."""

from __future__ import annotations

import pytest

from tau.session.branch_scans import last_of_type, messages_with_role


def message(role, text="x"):
    return {"type": "message", "id": text, "message": {"role": role, "content": text}}


BRANCHES = {
    "plain": [
        {"type": "thinking_level_change", "thinkingLevel": "low"},
        message("system", "s1"),
        message("user"),
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        message("assistant"),
        message("system", "s2"),
    ],
    "none": [message("user"), message("assistant")],
    "empty": [],
    "a message that is not an object": [
        message("system"),
        {"type": "message", "message": None},
        message("user"),
    ],
    "an entry that is a dict subclass": [type("E", (dict,), {})(message("system", "sub"))],
    "custom entries": [
        {"type": "custom", "customType": "pi-todo:state", "data": 1},
        message("user"),
        {"type": "custom", "customType": "other", "data": 2},
        {"type": "custom", "data": 3},
        {"type": "custom_message", "customType": "pi-todo:state", "data": 4},
        {"type": "custom", "customType": "pi-todo:state", "data": 5},
    ],
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_scans_equal_the_loops(name):
    branch = BRANCHES[name]
    for kind in ("thinking_level_change", "message", "compaction"):
        expected = next((e for e in reversed(branch) if e.get("type") == kind), None)
        assert last_of_type(branch, kind) is expected
    for role in ("system", "user", "assistant"):
        expected = [
            e["message"]
            for e in branch
            if e.get("type") == "message" and (e.get("message") or {}).get("role") == role
        ]
        found = messages_with_role(branch, role)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True))

