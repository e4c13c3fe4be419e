"""Issue 14, item 1: the checklist never breaks the provider's cached prefix.

The faux provider simulates a prompt cache keyed on the session id: a request's ``cacheRead`` is
the prefix it shares with the previous request of the session. A cache break is a request whose
prompt does not start with the whole previous prompt, so across a run every request's
``cacheRead`` must equal the previous request's whole prompt.
"""

from __future__ import annotations

import asyncio
import json

import todo_churn
from test_todo_extension import Harness, _stores

from tau.bundled import todo_loop
from tau.extension import load_factory


def usages(harness: Harness) -> list[dict]:
    return [
        entry["message"]["usage"]
        for entry in harness.manager.get_branch()
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant"
    ]


def prompt_tokens(usage: dict) -> int:
    return usage["input"] + usage["cacheRead"] + usage["cacheWrite"]


def breaks(harness: Harness) -> list[int]:
    """The requests (by index) whose prompt does not start with the whole previous prompt."""
    found = usages(harness)
    return [n for n in range(1, len(found)) if found[n]["cacheRead"] != prompt_tokens(found[n - 1])]


def test_twenty_revisions_in_one_run_never_break_the_cache(tmp_path):
    harness = Harness(tmp_path, [{"factory": todo_churn.respond}])

    async def scenario() -> None:
        await harness.start()
        await harness.session.prompt("work through the plan")

    asyncio.run(scenario())
    assert [state["revision"] for state in harness.states()] == list(range(1, 21))
    assert len(usages(harness)) == len(harness.requests) == 30  # 20 todo calls, 9 bash calls, one answer
    assert all(usage["cacheRead"] > 0 for usage in usages(harness)[1:])
    assert breaks(harness) == []
    final = json.dumps(harness.requests[-1])
    assert "[todo snapshot" not in final  # every result carried its list


def test_an_edit_outside_the_tool_and_the_loop_add_no_break(tmp_path):
    """A ``/todo`` edit between prompts, then todo-loop's continuations: still every request a prefix."""
    steps = [
        {
            "tool": "todo",
            "args": {"action": "add", "baseRevision": 0, "tasks": [{"title": "a"}, {"title": "b"}]},
        },
        {"text": "planned"},
        {"bash": "true"},
        {"text": "worked"},  # todo-loop continues: two tasks are open
        {"text": "still thinking"},
        {"text": "nothing more"},
    ]
    harness = Harness(tmp_path, steps, settings={"todoLoop": {"maxRounds": 1}})

    async def scenario() -> None:
        await harness.start()
        await load_factory(harness.runner, todo_loop.extension, path="bundled:todo-loop")
        await harness.session.prompt("plan")
        [store] = _stores(harness)
        store.mutate({"action": "add", "baseRevision": 1, "title": "c (from /todo)"})
        await harness.session.prompt("go on")

    asyncio.run(scenario())
    assert len(harness.requests) == 6  # plan, continue, bash; go on (the block is sent), continue
    assert ["[todo snapshot, revision 2]" in json.dumps(request) for request in harness.requests] == [
        False,
        False,
        False,
        False,
        True,
        True,
    ]
    assert sum(entry["type"] == "custom_message" for entry in harness.manager.get_branch()) == 2
    assert breaks(harness) == []
