"""The passes kept between requests give what a full recomputation gives.

Each scenario runs one pass object through a series of requests, as a session does: messages
appended, the head replaced (compaction), the tail swapped (branch switch), messages edited in
place by a handler. After every request the result must equal the pass made from scratch.
"""

from __future__ import annotations

import copy
import operator
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.agent.session.projection_cache import Conversion
from tau.bundled.obspack.projection import ContextScan
from tau.bundled.todo_loop.loop import _MarkerScan
from tau.bundled.todo_loop.marker import MARKER_TYPE, is_marker
from tau.extension.context_copies import ContextCopies
from tau.session.projection import convert_to_llm, unchanged_prefix


def _message(rnd: random.Random, n: int) -> dict:
    kind = rnd.choice(["user", "assistant", "toolResult", "toolResult", "custom", "marker", "bash", "system"])
    if kind == "user":
        return {"role": "user", "content": [{"type": "text", "text": f"u{n}"}], "timestamp": n}
    if kind == "assistant":
        return {"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}], "stopReason": "stop"}
    if kind == "toolResult":
        size = rnd.choice([10, 20_000])
        return {"role": "toolResult", "toolCallId": f"c{n}", "toolName": "bash", "content": [{"type": "text", "text": "x" * size}]}  # fmt: skip
    if kind == "custom":
        return {"role": "custom", "customType": "note", "content": f"c{n}", "display": False, "timestamp": n}
    if kind == "marker":
        return {
            "role": "custom",
            "customType": MARKER_TYPE,
            "content": "go on",
            "display": False,
            "timestamp": n,
        }
    if kind == "bash":
        return {"role": "bashExecution", "command": "ls", "output": f"o{n}", "exitCode": 0, "timestamp": n}
    return {"role": "system", "content": f"prompt {n}", "timestamp": n}


def _requests(seed: int):
    """A session's request lists: appends, then a compaction, a branch switch, more appends."""
    rnd = random.Random(seed)
    messages = [_message(rnd, n) for n in range(30)]
    counter = 30
    for step in range(40):
        action = rnd.random()
        if step and action < 0.1:  # compaction: a new head replaces the older messages
            messages = [{"role": "compactionSummary", "summary": "s", "timestamp": counter}, *messages[-5:]]
        elif step and action < 0.2:  # branch switch: back to an earlier message, another tail
            messages = messages[: rnd.randrange(len(messages))]
        for _ in range(rnd.randrange(4)):
            counter += 1
            messages = [*messages, _message(rnd, counter)]
        yield list(messages)


def test_copies_and_views_equal_fresh_ones_after_appends_compaction_branch_switch_and_edits():
    for seed in range(5):
        copies = ContextCopies()
        rnd = random.Random(seed)
        for messages in _requests(seed):
            expected = copy.deepcopy(messages)
            given = copies.copy(messages)
            assert given == expected
            assert all(a is not b for a, b in zip(given, messages, strict=True))
            for step in range(2):
                visible = copies.visible(step, given)
                assert visible == [m for m in given if m.get("role") != "system"]
                assert all(a is b for a, b in zip(visible, [m for m in given if m.get("role") != "system"], strict=True))  # fmt: skip
            for message in rnd.sample(given, min(3, len(given))):  # a handler edits in place
                message["content"] = [{"type": "text", "text": "[placeholder]"}]
                message["extra"] = True
            if given and isinstance(given[0].get("content"), list) and given[0]["content"]:
                given[0]["content"][0]["text"] = "edited block"
            assert messages == expected  # the sources never see the edits


def test_edited_copies_keep_their_place_so_incremental_passes_continue():
    copies = ContextCopies()
    source = [
        {"role": "toolResult", "content": [{"type": "text", "text": "big"}]},
        {"role": "user", "content": "q"},
    ]
    first = copies.copy(source)
    first[0]["content"] = [{"type": "text", "text": "[placeholder]"}]
    second = copies.copy([*source, {"role": "assistant", "content": []}])
    assert unchanged_prefix(second, first) == 2
    assert second[:2] == source


def test_conversion_equals_convert_to_llm_after_every_change():
    for seed in range(5):
        conversion = Conversion()
        copies = ContextCopies()
        rnd = random.Random(seed)
        for messages in _requests(seed):
            given = copies.copy(messages)
            for message in rnd.sample(given, min(3, len(given))):
                if message.get("role") == "custom":
                    message["content"] = f"edited {rnd.random()}"
                elif message.get("role") == "bashExecution":
                    message["excludeFromContext"] = rnd.random() < 0.5
                    message["output"] = "edited"
            got, want = conversion.convert(given), convert_to_llm(given)
            assert got == want
            sources = set(map(id, given))  # a message passed through is the very object (issue 17)
            assert [id(m) if id(m) in sources else None for m in got] == [
                id(m) if id(m) in sources else None for m in want
            ]


def test_an_unchanged_built_message_keeps_its_conversion_object():
    """Issue 33, item 9: a compaction's summary, converted again on every request, stays the same
    object while it is unchanged, so the passes after conversion keep their work past it."""
    conversion = Conversion()
    summary = {"role": "compactionSummary", "summary": "S", "tokensBefore": 10, "timestamp": 1}
    messages = [summary, {"role": "user", "content": "q", "timestamp": 2}]
    first = conversion.convert(messages)
    second = conversion.convert([*messages, {"role": "assistant", "content": [], "timestamp": 3}])
    assert second[0] is first[0] and second[1] is messages[1]
    summary["summary"] = "edited in place"
    third = conversion.convert(messages)
    assert third[0] is not first[0] and third == convert_to_llm(messages)


def _scanned(scan: ContextScan) -> tuple:
    items = [(id(i.message), i.index, i.turn, i.keys, i.block) for i in scan.items]
    return items, list(scan.sizes), dict(scan.latest), scan.turns


def test_context_scan_equals_the_full_scan():
    for seed in range(5):
        scan = ContextScan()
        copies = ContextCopies()
        for messages in _requests(seed):
            given = [m for m in copies.copy(messages) if m.get("role") != "system"]
            assert _scanned(scan(given)) == _scanned(ContextScan()(given))


def test_marker_scan_equals_the_full_scan():
    for seed in range(5):
        scan = _MarkerScan()
        copies = ContextCopies()
        for messages in _requests(seed):
            given = copies.copy(messages)
            assert scan.any(given) == any(map(is_marker, given))


def test_todo_snapshot_scan_equals_the_full_scan():
    from tau.bundled.todo.context import SNAPSHOT_TYPE, _SnapshotScan, without_snapshots

    for seed in range(6):
        scan = _SnapshotScan()
        blocks: dict[int, dict] = {}  # a "note" becomes a todo block, the same object every request
        for messages in _requests(seed):
            given = [
                blocks.setdefault(id(m), {**m, "customType": SNAPSHOT_TYPE}) if m.get("customType") == "note" else m
                for m in messages
            ]
            assert scan.without(given) == without_snapshots(given)


def test_occ_observed_tokens_equal_a_fresh_sum_after_appends_compaction_branch_switch_and_edits():
    from tau.agent.compaction.estimate import estimate_tokens
    from tau.bundled.occ.estimate import ObservedTokens

    for seed in range(12):
        rnd = random.Random(seed)
        feed = seed % 2 == 1  # with the tracked copies' feed (issue 28), or comparing every message
        copies, tokens = ContextCopies(), ObservedTokens()
        changes = copies.changes if feed else None
        for messages in _requests(seed):
            observed = copies.copy(messages)
            for message in rnd.sample(observed, min(2, len(observed))):  # handlers edit before OCC reads
                if rnd.random() < 0.5:
                    message["content"] = [{"type": "text", "text": "[placeholder]" * rnd.randrange(3)}]
                elif isinstance(message.get("content"), list) and message["content"]:
                    message["content"][0]["text"] = "edited " * rnd.randrange(1, 4)
            assert tokens.total(observed, changes) == sum(estimate_tokens(m) for m in observed)
            if observed and rnd.random() < 0.3:  # a later handler edits after OCC observed
                block = observed[-1].get("content")
                if isinstance(block, list) and block and isinstance(block[0], dict):
                    block[0]["text"] = "x" * 400
                assert tokens.total(observed, changes) == sum(estimate_tokens(m) for m in observed)


# -- the whole chain against a straightforward one (hypothesis) ----------------------------------

HANDLER_ACTIONS = [
    "none",
    "edit",
    "edit_block",
    "delete_in_place",
    "drop_first",
    "append_custom",
    "same_list",
]


def _act(action: str, messages: list, pick: int) -> list | None:
    """What one ``context`` handler does this request (the same in both chains)."""
    if action == "edit" and messages:
        messages[pick % len(messages)]["content"] = [{"type": "text", "text": f"[edited {pick}]"}]
    elif action == "edit_block" and messages:
        content = messages[pick % len(messages)].get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):
            content[0]["text"] = f"block {pick}"
    elif action == "delete_in_place" and messages:
        del messages[pick % len(messages)]
    elif action == "drop_first":
        return messages[1:]
    elif action == "append_custom":
        return [*messages, {"role": "custom", "customType": "snap", "content": f"s{pick}", "display": False}]
    elif action == "same_list":
        return list(messages)
    return None


def _same(left: list, right: list) -> bool:
    return len(left) == len(right) and all(map(operator.is_, left, right))


def _reference_chain(messages: list, actions: list[tuple[str, int]]) -> tuple[list, bool]:
    """pi's ``emitContext``: a deep copy per request, each handler sees the non-system messages."""
    from tau.llm.transcript import current_system_message

    current, rebuilt = copy.deepcopy(messages), False
    for action, pick in actions:
        visible = [m for m in current if m.get("role") != "system"]
        snapshot = list(visible)
        returned = _act(action, visible, pick)
        if returned is None:
            returned = None if _same(visible, snapshot) else visible
        if returned is None or _same(returned, snapshot):
            continue
        head = current_system_message(tuple(current))
        current, rebuilt = ([head, *returned] if head else list(returned)), True
    return current, rebuilt


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 4),
    st.lists(
        st.lists(st.tuples(st.sampled_from(HANDLER_ACTIONS), st.integers(0, 99)), min_size=3, max_size=3),
        min_size=1,
        max_size=12,
    ),
)
def test_context_chain_equals_a_deep_copy_chain_request_after_request(seed, requests):
    """Issue 17: reused copies, restored edits and views shared between handlers while no handler
    replaced the list give, request after request, what a fresh deep copy per request gives."""
    import asyncio

    from test_runner_events import make_runner

    from tau.common import jsjson

    plan: list[list[tuple[str, int]]] = []

    def factory(position: int):
        def load(tau):
            def handler(event, ctx):
                action, pick = plan[-1][position]
                returned = _act(action, event.messages, pick)
                return None if returned is None else {"messages": returned}

            tau.on("context", handler)

        return load

    runner, errors = make_runner(factory(0), factory(1), factory(2))
    sessions = _requests(seed)
    for actions in requests:
        messages = next(sessions, None)
        if messages is None:
            break
        stored = copy.deepcopy(messages)
        plan.append(actions)
        expected, rebuilt = _reference_chain(messages, actions)
        got = asyncio.run(runner.emit_context(messages))
        assert jsjson.dumps(got) == jsjson.dumps(expected)
        assert runner.context_head_rebuilt is rebuilt
        assert messages == stored  # the session's messages never see an edit
    assert errors == []
