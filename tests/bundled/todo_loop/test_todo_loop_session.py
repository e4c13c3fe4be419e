"""todo-loop on the run-time session with faux: what a user of tau would see in the transcript."""

from __future__ import annotations

from itertools import pairwise

from todo_loop_harness import NUDGE, NUDGE_WITH_BLOCK, NUDGES, Harness, plan_step

from tau.bundled.todo import extension as bundled_todo
from tau.bundled.todo_loop import extension as todo_loop
from tau.extension import load_factory


def last_text(request) -> str:
    content = request[-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_settle_with_open_tasks_continues_with_one_hidden_entry_and_a_request(tmp_path):
    harness = Harness(
        [
            plan_step("in_progress", "pending"),
            {"text": "did some"},
            plan_step("completed", "completed"),
            {"text": "all done"},
        ],
        tmp_path,
    )
    harness.run("build it")
    assert harness.kinds() == [
        "user:build it",
        "call:todo",
        "plan",
        "result:todo",
        "say:did some",
        "marker",
        "call:todo",
        "plan",
        "result:todo",
        "say:all done",
    ]
    (marker,) = harness.markers()
    assert marker["display"] is False
    assert marker["content"] == NUDGE_WITH_BLOCK  # todo_loop_block is active
    assert len(harness.requests) == 4
    assert harness.requests[2][-1]["role"] == "user" and last_text(harness.requests[2]) == NUDGE_WITH_BLOCK
    assert harness.errors == []


def test_a_tool_call_turn_never_continues(tmp_path):
    """Open tasks after every tool-call turn, a cap of one round: one marker, after the final answer."""
    harness = Harness(
        [
            plan_step("pending"),
            {"bash": "true"},
            {"text": "paused here"},
            {"bash": "true"},
            {"text": "again"},
        ],
        tmp_path,
        settings={"todoLoop": {"maxRounds": 1}},
    )
    harness.run("go")
    assert harness.kinds() == [
        "user:go",
        "call:todo",
        "plan",
        "result:todo",
        "call:bash",
        "result:bash",
        "say:paused here",
        "marker",
        "call:bash",
        "result:bash",
        "say:again",
    ]


def test_no_list_does_not_continue(tmp_path):
    harness = Harness([{"text": "hello"}], tmp_path)
    harness.run("hi")
    assert harness.kinds() == ["user:hi", "say:hello"]
    assert len(harness.requests) == 1


def test_todoloop_without_a_list_says_no_list_and_source_none(tmp_path):
    """Issue 33, item 6 (seed 000: ``stopped: no list``): not ``stopped: all tasks closed`` with
    ``source: pi-todo:state`` when no list was ever made."""
    harness = Harness([{"text": "hello"}], tmp_path)

    shown: list[str] = []

    async def scenario():
        # tau's own todo (not the harness's test tool): it answers the loop on the event bus
        for index, factory in enumerate([bundled_todo, todo_loop]):
            await load_factory(harness.runner, factory, path=f"ext{index + 1}.py")
        harness.runner.bind(harness.session)
        await harness.session.prompt("hi")
        shown.extend(await harness.command("/todoloop"))

    harness.run_more(scenario)
    lines = shown[0].split("\n")
    assert lines[0] == "state: stopped: no list"
    assert lines[-1] == "tasks: 0/0 (source: none)"


def test_an_all_closed_list_does_not_continue(tmp_path):
    harness = Harness([plan_step("completed", "completed"), {"text": "done"}], tmp_path)
    harness.run("go")
    assert harness.markers() == []
    assert len(harness.requests) == 2


def test_an_exhausted_budget_stops_and_re_arms_only_on_a_new_human_message(tmp_path):
    steps = [plan_step("pending", "pending"), {"text": "one"}, {"text": "two"}, {"text": "three"}]
    steps += [{"text": "four"}, {"text": "five"}, {"text": "six"}]
    harness = Harness(steps, tmp_path, settings={"todoLoop": {"maxRounds": 1}})

    async def scenario():
        await harness.load()
        await harness.session.prompt("start")
        assert (await harness.command("/todoloop"))[0].splitlines()[0] == "state: stopped: round cap (1)"
        # another extension's hidden message starts a run: it is no human message, the cap holds
        await harness.session.send_custom_message(
            {"customType": "other:resume", "content": "resume", "display": False}, trigger_turn=True
        )
        await harness.session.prompt("next")

    harness.run_more(lambda: scenario())
    assert harness.kinds() == [
        "user:start",
        "call:todo",
        "plan",
        "result:todo",
        "say:one",
        "marker",
        "say:two",
        "say:three",  # answered the other extension's message: not continued
        "user:next",
        "say:four",
        "marker",
        "say:five",
    ]


def provider_roles(request) -> list[str]:
    """Roles as an alternation-requiring provider sees them: tool results are user turns."""
    roles = []
    for message in request:
        if message["role"] == "system":
            continue
        if message["role"] == "assistant" and message.get("stopReason") in ("error", "aborted"):
            continue
        roles.append("user" if message["role"] == "toolResult" else message["role"])
    return roles


def test_markers_keep_the_conversation_alternating_across_many_rounds(tmp_path):
    rounds = 8
    steps = [plan_step(*["pending"] * rounds)]
    for done in range(1, rounds + 1):
        steps.append({"text": f"round {done}"})
        steps.append(plan_step(*(["completed"] * done + ["pending"] * (rounds - done))))
    steps.append({"text": "finished"})
    harness = Harness(steps, tmp_path)
    harness.run("do all eight")
    assert len(harness.markers()) == rounds
    assert harness.kinds()[-1] == "say:finished"
    for request in harness.requests:
        roles = provider_roles(request)
        assert all(a != b for a, b in pairwise(roles)), roles
        assert roles[-1] == "user"
    # the hook passed every one of these requests through: what was sent is the session's projection
    assert harness.requests == harness.projected


def is_nudge(message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(block.get("text") in NUDGES for block in content)


def test_a_marker_next_to_a_human_message_is_removed_and_nothing_else_changes(tmp_path):
    """The continued request failed; the human writes next: the marker would make user → user."""
    steps = [plan_step("pending"), {"text": "partial"}]
    steps += [{"content": [], "stopReason": "error", "errorMessage": "upstream broke"}]
    steps += [{"text": "back"}, {"text": "more"}]
    harness = Harness(steps, tmp_path, settings={"retry": {"enabled": False}, "todoLoop": {"maxRounds": 1}})
    harness.run("go", "are you there?")
    assert harness.kinds()[4:] == [
        "say:partial",
        "marker",
        "say:",
        "user:are you there?",
        "say:back",
        "marker",
        "say:more",
    ]

    # the session keeps the marker before the failed answer; every request after the human wrote lacks
    # exactly that message, and nothing else changed (the newer marker at the end stays)
    def without_stale(messages):
        return [
            m
            for m, after in zip(messages, [*messages[1:], {}], strict=True)
            if not (is_nudge(m) and after.get("stopReason") == "error")
        ]

    assert harness.requests[:3] == harness.projected[:3]
    for sent, projected in zip(harness.requests[3:], harness.projected[3:], strict=True):
        assert len(projected) == len(sent) + 1
        assert without_stale(projected) == sent
    assert provider_roles(harness.requests[3])[-2:] == ["assistant", "user"]
    assert is_nudge(harness.requests[4][-1])


def test_with_the_kill_switch_on_the_context_hook_rewrites_nothing(tmp_path, monkeypatch):
    steps = [plan_step("pending"), {"text": "partial"}]
    steps += [{"content": [], "stopReason": "error", "errorMessage": "upstream broke"}, {"text": "back"}]
    harness = Harness(steps, tmp_path, settings={"retry": {"enabled": False}})
    harness.on_request.append(lambda n: monkeypatch.setenv("TAU_TODO_LOOP_DISABLED", "1") if n == 3 else None)
    harness.run("go", "are you there?")
    assert harness.kinds()[4:] == ["say:partial", "marker", "say:", "user:are you there?", "say:back"]
    assert harness.requests == harness.projected


def test_the_second_sentence_only_while_the_block_tool_is_active(tmp_path):
    steps = [plan_step("pending"), {"text": "a"}, {"text": "b"}]
    harness = Harness(steps, tmp_path, settings={"todoLoop": {"maxRounds": 1}})

    async def scenario():
        await harness.load()
        harness.session.set_active_tools(["todo", "read"])
        await harness.session.prompt("go")

    harness.run_more(lambda: scenario())
    assert [m["content"] for m in harness.markers()] == [NUDGE]


def test_todo_loop_block_stops_until_the_next_human_message(tmp_path):
    steps = [plan_step("pending", "pending"), {"text": "first"}]
    steps += [
        {"tool": "todo_loop_block", "args": {"reason": "need the API key"}},
        {"text": "waiting for you"},
    ]
    steps += [{"text": "thanks, going on"}, {"text": "still going"}]
    harness = Harness(steps, tmp_path, settings={"todoLoop": {"maxRounds": 1}})

    async def scenario():
        await harness.load()
        await harness.session.prompt("go")
        status = await harness.command("/todoloop")
        assert status[0].splitlines()[0] == "state: stopped: blocked (need the API key)"
        await harness.session.prompt("here is the key")

    harness.run_more(lambda: scenario())
    assert harness.kinds()[4:] == [
        "say:first",
        "marker",
        "call:todo_loop_block",
        "result:todo_loop_block",
        "say:waiting for you",
        "user:here is the key",
        "say:thanks, going on",
        "marker",
        "say:still going",
    ]
    result = harness.tool_result("todo_loop_block")
    assert result["content"] == [
        {"type": "text", "text": "todo loop stopped until the next human message: need the API key"}
    ]
    assert result["isError"] is False


def test_the_kill_switch_takes_effect_on_the_next_request(tmp_path, isolated_agent_dir):
    switch = isolated_agent_dir / "todo-loop.disabled"
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    steps = [plan_step("pending", "pending"), {"text": "one"}, {"text": "two"}]
    steps += [{"tool": "todo_loop_block", "args": {"reason": "x"}}, {"text": "three"}]
    steps += [{"text": "four"}, {"text": "five"}]
    harness = Harness(steps, tmp_path, settings={"todoLoop": {"maxRounds": 1}})
    # the file appears while the third request runs: the settle after it does not continue
    harness.on_request.append(lambda n: switch.touch() if n == 3 else None)

    async def scenario():
        await harness.load()
        await harness.session.prompt("go")
        assert (await harness.command("/todoloop"))[0].splitlines()[0] == "state: disabled (kill switch)"
        await harness.session.prompt("disabled run")
        switch.unlink()  # removed while running, no reload: the next settle continues again
        await harness.session.prompt("enabled again")

    harness.run_more(lambda: scenario())
    assert harness.kinds()[4:] == [
        "say:one",
        "marker",
        "say:two",
        "user:disabled run",
        "call:todo_loop_block",
        "result:todo_loop_block",
        "say:three",
        "user:enabled again",
        "say:four",
        "marker",
        "say:five",
    ]
    refused = harness.tool_result("todo_loop_block")
    assert refused["content"] == [{"type": "text", "text": "todo loop not running"}]
    assert refused["isError"] is True


def test_a_branch_switch_changes_the_list(tmp_path):
    steps = [plan_step("pending", "pending"), {"text": "working"}, plan_step("completed", "completed")]
    steps += [{"text": "all done"}, {"text": "resumed on the old branch"}, {"text": "and on"}]
    harness = Harness(steps, tmp_path, settings={"todoLoop": {"maxRounds": 1}})

    async def scenario():
        await harness.load()
        await harness.session.prompt("go")
        assert "tasks: 0/2 open (source: pi-todo:state)" in (await harness.command("/todoloop"))[0]
        working = next(
            e
            for e in harness.entries()
            if e["type"] == "message"
            and e["message"]["role"] == "assistant"
            and e["message"]["content"][0].get("text") == "working"
        )
        await harness.session.navigate_tree(working["id"])
        assert "tasks: 2/2 open (source: pi-todo:state)" in (await harness.command("/todoloop"))[0]
        await harness.session.prompt("keep going")

    harness.run_more(lambda: scenario())
    assert harness.kinds() == [
        "user:go",
        "call:todo",
        "plan",
        "result:todo",
        "say:working",
        "user:keep going",
        "say:resumed on the old branch",
        "marker",
        "say:and on",
    ]


def test_a_model_that_changes_nothing_is_stopped_after_max_stalls_rounds(tmp_path):
    steps = [plan_step("pending"), {"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]
    harness = Harness(steps, tmp_path)

    async def scenario():
        await harness.load()
        await harness.session.prompt("go")
        status = (await harness.command("/todoloop"))[0].splitlines()
        assert status[0] == "state: stopped: stalled (3 rounds without progress)"
        assert status[2:4] == ["rounds: 3/25", "stalls: 3/3"]

    harness.run_more(lambda: scenario())
    assert harness.kinds()[4:] == ["say:a", "marker", "say:b", "marker", "say:c", "marker", "say:d"]


def test_no_continuation_while_a_human_prompt_waits_for_the_settle(tmp_path):
    """Issue 25, item 6: a human prompt that arrives while ``agent_settled`` handlers run (an RPC
    prompt behind the run) waits for them; another extension's hidden continuation runs first, and
    todo-loop does not continue that run while the human's prompt waits."""
    harness = Harness(
        [
            plan_step("completed"),
            {"text": "first done"},  # nothing open: the run settles, and the human arrives then
            plan_step("completed", "pending"),  # the other extension's continuation run
            {"text": "resumed, one open"},
            {"text": "answering the human"},
            plan_step("completed", "completed"),
            {"text": "all done"},
        ],
        tmp_path,
    )
    sent = {"done": False}

    def continuing(tau):
        async def settled(event, ctx):
            if sent["done"]:
                return
            sent["done"] = True
            tau.send_message({"customType": "other:resume", "content": "resume", "display": False}, trigger_turn=True)
            await harness.session.prompt("the human's next message", source="rpc")

        tau.on("agent_settled", settled)

    async def scenario():
        await harness.load(continuing)
        await harness.session.prompt("build it")

    harness.run_more(scenario)
    texts = [kind for kind in harness.kinds() if kind.startswith(("say:", "user:")) or kind == "marker"]
    assert texts == [
        "user:build it",
        "say:first done",
        "say:resumed, one open",
        "user:the human's next message",
        "say:answering the human",
        "marker",
        "say:all done",
    ]
