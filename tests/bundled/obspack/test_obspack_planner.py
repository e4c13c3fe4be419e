"""Issue 17: the planner kept between requests decides what :func:`plan_projection` decides.

``plan_projection`` walks every item of the context on every request (the reference); the
:class:`Planner` visits only the packed items, the candidates up to the cap, and the large and
recorded ones. Both run side by side on generated sessions (hypothesis): tool calls that supersede
each other, results of every size and kind, turns that use earlier results (issue 25: age from last
use) and the economic floor, duplicates, hidden messages, appends, a leaf moved off
and back, branch switches and compactions, a failing archive, a changing price ratio. Every
request's plan and the messages it leaves must be the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.bundled.obspack.observation import RECEIPT_LINE, Observation
from tau.bundled.obspack.planner import Planner
from tau.bundled.obspack.projection import (
    ROOT_LEAF,
    Applied,
    ContextScan,
    PackRules,
    SendCounts,
    plan_projection,
)
from tau.common import jsjson
from tau.extension.context_copies import ContextCopies

COMMANDS = ["make test", "ls", "git status"]
PATHS = ["a.py", "b.py", "c.md"]
SIZES = [10, 200, 480, 700, 2_000, 11_000]


@dataclass
class Session:
    """A branch of entries (``(id, message or None)``) and the ids ever made."""

    branch: list[tuple[str, dict[str, Any] | None]] = field(default_factory=list)
    counter: int = 0

    def add(self, message: dict[str, Any] | None) -> None:
        self.counter += 1
        self.branch.append((f"e{self.counter}", message))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [message for _, message in self.branch if message is not None]


def _text(size: int, seed: int) -> str:
    # ``1000 + seed`` is a distinctive token: a later turn whose text names it uses the result
    return (f"line {1000 + seed} " * (size // 9 + 1))[:size]


def _call(name: str, pick: int, number: int) -> dict[str, Any]:
    if name == "bash":
        arguments: dict[str, Any] = {"command": COMMANDS[pick % 3]}
    elif name == "read":
        arguments = {"path": PATHS[pick % 3]}
    elif name == "edit":
        arguments = {"path": PATHS[pick % 3], "oldText": _text(SIZES[pick % 3], number), "newText": "y"}
    elif name == "write":
        arguments = {"path": PATHS[pick % 3], "content": _text(SIZES[pick % 4], number)}
        if pick % 2:
            arguments["then_run"] = {"command": COMMANDS[pick % 3]}
    else:
        arguments = {"tasks": pick}
    return {"type": "toolCall", "id": f"call{number}", "name": name, "arguments": arguments}


def _result(call: dict[str, Any], kind: str, size: int, number: int) -> dict[str, Any]:
    text = _text(size, number)
    if kind == "receipt":
        text = f"{text}\n{RECEIPT_LINE}\n"
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if kind == "image":
        content.append({"type": "image", "data": "aGk=", "mimeType": "image/png"})
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": content,
        "isError": kind == "error",
        "timestamp": number,
    }


TURN = st.tuples(
    st.lists(st.sampled_from(["bash", "read", "edit", "write", "todo"]), max_size=3),
    st.lists(
        st.tuples(st.sampled_from(["ok", "ok", "error", "receipt", "image"]), st.sampled_from(SIZES)),
        min_size=3,
        max_size=3,
    ),
    st.integers(0, 11),
)
STEP = st.one_of(
    st.tuples(st.just("turn"), TURN),
    st.tuples(st.just("turns"), st.lists(TURN, min_size=2, max_size=5)),
    st.tuples(
        st.sampled_from(["user", "hidden", "duplicate", "leaf", "back", "switch", "compact"]),
        st.integers(0, 99),
    ),
)


def _apply_step(session: Session, step: tuple[str, Any]) -> None:
    action, value = step
    if action == "turn":
        _turn(session, value)
    elif action == "turns":
        for turn in value:
            _turn(session, turn)
    elif action == "user":
        session.add({"role": "user", "content": f"u{value}", "timestamp": value})
    elif action == "hidden":
        session.add({"role": "custom", "customType": "note", "content": f"h{value}", "display": False})
    elif action == "duplicate":
        last = next((m for m in reversed(session.messages) if m["role"] == "toolResult"), None)
        if last is not None:
            session.add({**last, "content": [dict(block) for block in last["content"]]})
    elif action == "leaf":
        session.add(None)  # a custom entry: a leaf without a message
    elif action == "back":
        if session.branch and session.branch[-1][1] is None:
            session.branch.pop()  # the leaf moves to its parent: same messages, another leaf
    elif action == "switch" and session.branch:
        del session.branch[value % len(session.branch) :]
    elif action == "compact":
        kept = session.branch[-(value % 6) :] if value % 6 else []
        session.branch = []
        session.add({"role": "compactionSummary", "summary": f"s{value}", "timestamp": value})
        session.branch += kept


def _turn(session: Session, turn: tuple[list[str], list[tuple[str, int]], int]) -> None:
    names, results, pick = turn
    number = session.counter
    calls = [_call(name, pick + index, number * 10 + index) for index, name in enumerate(names)]
    used = f"see {1000 + pick * 7}" if pick % 2 else "ok"  # now and then a number an earlier result holds
    session.add(
        {"role": "assistant", "content": [{"type": "text", "text": used}, *calls], "stopReason": "toolUse"}
    )
    for call, (kind, size) in zip(calls, results, strict=False):
        session.add(_result(call, kind, size, number))


@dataclass
class Side:
    """One pipeline: the host's copies, ObservationPack's state, what it stored."""

    copies: ContextCopies = field(default_factory=ContextCopies)
    counts: SendCounts = field(default_factory=SendCounts)
    applied: Applied = field(default_factory=Applied)
    stored: list[str] = field(default_factory=list)
    scan: ContextScan = field(default_factory=ContextScan)
    planner: Planner = field(default_factory=Planner)

    def request(
        self, session: Session, number: int, rules: PackRules, ratio: float, fast: bool
    ) -> tuple[str, str]:
        visible = [m for m in self.copies.copy(session.messages) if m.get("role") != "system"]
        ids = {entry_id for entry_id, _ in session.branch}

        def store(observation: Observation) -> None:
            if (number + int(observation.id[-2:], 16)) % 11 == 0:
                raise OSError("disk full")
            self.stored.append(observation.id)

        arguments: dict[str, Any] = dict(
            store=store,
            send_counts=self.counts,
            branch_ids=lambda: ids,
            rules=rules,
            applied=self.applied,
            write_read_ratio=ratio,
        )
        if fast:
            plan = self.planner.plan(visible, **arguments)
            replaced = [self.planner._replaced_from(start) for start in range(len(visible) + 1)]
        else:
            plan = plan_projection(visible, scan=self.scan, **arguments)
            saved = [(item.index, item.memo["saved"]) for item, _ in plan.kept if item.block is None]
            replaced = [sum(t for index, t in saved if index >= start) for start in range(len(visible) + 1)]
        decided = jsjson.dumps_str(
            {
                "records": plan.records,
                "kept": [(visible.index(item.message), item.block, content) for item, content in plan.kept],
                "edits": [(visible.index(item.message), item.block, content) for item, content in plan.edits],
                "counts": plan.counts,
                "first": plan.first_savings,
                "applied": plan.applied,
                "stored": self.stored,
                "replaced": replaced,  # what the packed results save from each position on
            }
        )
        leaf = session.branch[-1][0] if session.branch else ROOT_LEAF
        if number % 5 != 4:  # now and then the ledger append fails: only the kept swaps are applied
            plan.apply(leaf, self.counts, self.applied)
        else:
            plan.apply_kept()
        return decided, jsjson.dumps_str(visible)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(STEP, min_size=1, max_size=25),
    st.sampled_from([1, 2, 3, 32]),
    st.sampled_from([1, 2, 4]),
    st.sampled_from([50, 120]),
    st.booleans(),
    st.booleans(),
    st.lists(st.sampled_from([1.0, 12.5, 0.5]), min_size=1, max_size=3),
    st.sampled_from([0.0, 0.1, 1.0]),
    st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=1, max_size=4),
)
def test_the_planner_decides_every_request_as_the_reference(
    steps, cap, after, floor, stale, batch, ratios, refetch_chance, widenings
):
    session = Session()
    reference, planner = Side(), Side()
    for number, step in enumerate(steps):
        _apply_step(session, step)
        # the window widens now and then (a refetch), never narrows: the same scan, other rules
        after += widenings[number % len(widenings)] if number % 3 == 2 else 0
        rules = PackRules(
            stale=stale,
            batch=batch,
            after_turns=after,
            min_tokens=floor,
            max_new_objects=cap,
            refetch_chance=refetch_chance,
        )
        ratio = ratios[number % len(ratios)]
        expected = reference.request(session, number, rules, ratio, fast=False)
        assert planner.request(session, number, rules, ratio, fast=True) == expected


def test_a_wider_window_keeps_what_was_packed_and_decides_as_the_reference():
    """Issue 25: the window widens mid-session (other rules, the same scan); what the planner packed
    before stays packed (re-applied, no new record), exactly as the reference decides."""
    session = Session()
    reference, planner = Side(), Side()
    turn = (["bash", "read"], [("ok", 700), ("ok", 2_000), ("ok", 10)], 1)
    small = ([], [("ok", 10)] * 3, 0)
    steps = [("turn", turn), *[("turn", small)] * 4, ("turn", small), ("turn", small)]
    records = []
    for number, step in enumerate(steps):
        _apply_step(session, step)
        after = 2 if number < 5 else 4  # widened after the swaps of request 4
        rules = PackRules(after_turns=after, min_tokens=50, batch=False, refetch_chance=0)
        expected = reference.request(session, number + 1, rules, 12.5, fast=False)
        assert planner.request(session, number + 1, rules, 12.5, fast=True) == expected
        records.append(jsjson.loads(expected[0])["records"])
    assert any(records[:5]) and records[5] == [] and records[6] == []


def test_a_result_filed_before_anything_was_recorded_is_found_by_a_later_record_of_its_identity():
    """A resumed session's first request files its items before any swap is recorded; a record of
    a duplicate's identity (the same call's result twice) in a later request finds the copy that
    request did not visit, as the reference does, even in a request that files nothing new."""
    session = Session()
    reference, planner = Side(), Side()
    for step in [("turn", (["bash"], [("ok", 700)] * 3, 1)), ("duplicate", 0), ("turn", ([], [], 0))]:
        _apply_step(session, step)  # the session so far is resumed: its first request reads it all
    rules = PackRules(after_turns=1, min_tokens=50, batch=False, refetch_chance=0, max_new_objects=1)
    decided = []
    for number in range(1, 4):
        expected = reference.request(session, number, rules, 12.5, fast=False)
        assert planner.request(session, number, rules, 12.5, fast=True) == expected, number
        decided.append(jsjson.loads(expected[0]))
        _apply_step(session, ("user", number))
    assert len(decided[0]["edits"]) == 1 and len(decided[1]["kept"]) == 2  # the copy follows its swap
