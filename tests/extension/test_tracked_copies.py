"""Context handlers get tracked copies (issue 28, item 5): the host learns which messages a handler
changed without comparing every copy with its source, and Online Context Compact observes changes
the same way. pi's semantics stay: a handler edits its copies in place, the next request's handlers
see the session's messages again, and the session's messages never see an edit."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle

import pytest
from test_runner_events import make_runner

from tau.agent.compaction.estimate import estimate_tokens
from tau.bundled.occ.estimate import ObservedTokens
from tau.extension import context_copies
from tau.extension.context_copies import ContextCopies
from tau.extension.tracked import TrackedMessage


def result(text: str, call: str = "c1") -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "details": {"k": 1},
        "isError": False,
    }


def session(count: int) -> list[dict]:
    return [result(f"output {n}", f"c{n}") for n in range(count)]


class Comparisons:
    """Counts every comparison of a tracked copy (``==``, ``!=``: what the host made per copy before)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0

        def eq(copied, other):
            self.count += 1
            return dict.__eq__(copied, other)

        def ne(copied, other):
            self.count += 1
            return dict.__ne__(copied, other)

        monkeypatch.setattr(TrackedMessage, "__eq__", eq)
        monkeypatch.setattr(TrackedMessage, "__ne__", ne)


EDITS = {
    "set a key": lambda m: m.__setitem__("content", [{"type": "text", "text": "[packed]"}]),
    "add a key": lambda m: m.__setitem__("note", "x"),
    "edit a block": lambda m: m["content"][0].__setitem__("text", "[edited]"),
    "append a block": lambda m: m["content"].append({"type": "text", "text": "more"}),
    "delete a block": lambda m: m["content"].pop(),
    "replace a block": lambda m: m["content"].__setitem__(0, {"type": "text", "text": "other"}),
    "delete a key": lambda m: m.__delitem__("details"),
    "pop a key": lambda m: m.pop("isError"),
    "update": lambda m: m.update(isError=True, extra=1),
    "setdefault": lambda m: m.setdefault("extra", 2),
    "clear": lambda m: m.clear(),
    "block update": lambda m: m["content"][0].update(text="u"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_in_place_edit_is_seen_and_restored_for_the_next_request(edit):
    source = session(3)
    stored = copy.deepcopy(source)
    copies = ContextCopies()
    first = copies.copy(source)
    mark = copies.changes.mark
    EDITS[edit](first[1])
    assert first[1] != source[1]
    assert copies.changes.dirty == [first[1]]  # the host knows which copy changed, by its report
    assert first[1] in (copies.changes.since(mark) or [])
    second = copies.copy(source)
    assert second[1] is first[1]  # restored in place: passes that remember objects find it there
    assert second == source and source == stored
    assert copies.restored == 1
    assert json.dumps(second[1]) == json.dumps(source[1])  # the key order too


def test_a_handler_that_edits_a_copy_in_place_is_seen_by_the_chain_and_gone_next_request():
    """Through the runner: an in-place edit reaches the later handler and the request; the next
    request's handlers see the session's message again."""
    seen: list[str] = []
    edit = {"on": True}

    def editor(tau):
        def handler(event, ctx):
            if edit["on"]:
                event.messages[1]["content"][0]["text"] = "[packed]"

        tau.on("context", handler)

    def reader(tau):
        tau.on("context", lambda event, ctx: seen.append(event.messages[1]["content"][0]["text"]))

    runner, errors = make_runner(editor, reader)
    messages = session(3)
    sent = asyncio.run(runner.emit_context(messages))
    assert sent[1]["content"][0]["text"] == "[packed]"
    edit["on"] = False
    messages.append(result("new", "c9"))
    sent = asyncio.run(runner.emit_context(messages))
    assert seen == ["[packed]", "output 1"]
    assert sent[1]["content"][0]["text"] == "output 1"
    assert messages[1]["content"][0]["text"] == "output 1"
    assert runner.context_copies.restored == 1
    assert errors == []


def test_a_handler_that_edits_nothing_costs_no_comparison(monkeypatch):
    """No copy is compared with its source (nor restored) while handlers only read, request after request."""
    comparisons = Comparisons(monkeypatch)
    texts: list[int] = []

    def reader(tau):
        tau.on(
            "context",
            lambda event, ctx: texts.append(sum(len(m["content"][0]["text"]) for m in event.messages)),
        )

    runner, errors = make_runner(reader, reader)
    messages = session(200)
    for n in range(5):
        messages.append(result(f"more {n}", f"d{n}"))
        asyncio.run(runner.emit_context(messages))
    assert comparisons.count == 0
    assert runner.context_copies.restored == 0
    assert len(texts) == 10 and errors == []


def test_only_the_edited_copy_is_restored(monkeypatch):
    restored: list[dict] = []
    original = context_copies.restore_all

    def spy(copies, log):
        restored.extend(copies)
        return original(copies, log)

    monkeypatch.setattr(context_copies, "restore_all", spy)
    copies = ContextCopies()
    source = session(500)
    first = copies.copy(source)
    first[321]["content"] = [{"type": "text", "text": "[packed]"}]
    first[321]["content"][0]["text"] = "[packed again]"  # (an untracked value: the copy is already edited)
    second = copies.copy([*source, result("new", "n1")])
    assert restored == [first[321]]
    assert second[321] == source[321] and copies.restored == 1


def test_occ_estimates_again_only_what_changed(monkeypatch):
    """Online Context Compact reads the same feed: an unedited request compares no message."""
    copies, tokens = ContextCopies(), ObservedTokens()
    source = session(300)
    for n in range(3):  # the first sums take their snapshots
        source = [*source, result(f"more {n}", f"m{n}")]
        observed = copies.copy(source)
        tokens.total(observed, copies.changes)
    before = tokens.compared
    source = [*source, result("next", "x1")]
    observed = copies.copy(source)
    assert tokens.total(observed, copies.changes) == sum(map(estimate_tokens, observed))
    assert tokens.compared == before  # nothing edited: nothing compared
    observed[7]["content"] = [{"type": "text", "text": "[packed] " * 50}]
    assert tokens.total(observed, copies.changes) == sum(map(estimate_tokens, observed))
    assert tokens.compared == before + 1
    observed[7]["content"].append({"type": "text", "text": "again " * 30})  # an edited copy edited again
    assert tokens.total(observed, copies.changes) == sum(map(estimate_tokens, observed))
    observed = copies.copy(source)  # restored: estimated as its source again
    assert tokens.total(observed, copies.changes) == sum(map(estimate_tokens, observed))


def test_tracked_copies_are_plain_dicts_to_their_readers():
    copies = ContextCopies()
    copied = copies.copy(session(1))[0]
    assert isinstance(copied, dict) and isinstance(copied["content"], list)
    assert copied == result("output 0", "c0")
    for duplicate in (copy.copy(copied), copy.deepcopy(copied), pickle.loads(pickle.dumps(copied))):
        assert type(duplicate) is dict and duplicate == copied
        duplicate["content"] = []  # a duplicate is not tracked
    assert copies.changes.dirty == []
    assert type(copy.deepcopy(copied)["content"]) is list


def test_copies_made_in_one_pass_report_each_edit_to_its_own_message():
    from tau.extension.tracked import ChangeLog, tracked_copies

    log = ChangeLog()
    sources = [
        {"role": "user", "content": "plain text", "timestamp": 1},
        result("one", "c1"),
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, "not a block"], "timestamp": 2},
        "not a message",
    ]
    stored = copy.deepcopy(sources)
    copies = tracked_copies(sources, log)
    assert copies == sources and copies[3] is sources[3]
    assert [c is s for c, s in zip(copies, sources, strict=True)] == [False, False, False, True]
    copies[2]["content"][0]["text"] = "edited"
    copies[1]["content"].append({"type": "text", "text": "more"})
    assert log.dirty == [copies[2], copies[1]]
    assert sources == stored  # the session's messages never see an edit
