"""Invariants of the projection, checked on generated branches (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.common import jsjson
from tau.session.projection import (
    build_context_entries,
    build_session_context,
    build_session_projection,
    convert_to_llm,
    unchanged_prefix,
)

TS = "2026-01-02T03:04:05.678Z"
MESSAGE_ROLES = ["user", "assistant", "toolResult", "system"]
STATE_TYPES = ["model_change", "thinking_level_change", "usage", "custom", "label", "session_info"]
KNOWN_TYPES = [
    "message",
    "model_change",
    "thinking_level_change",
    "usage",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "context_edit",
    "label",
    "session_info",
]


def message_for(role: str, n: int) -> dict:
    content = f"m{n}" if role in ("user", "system") else [{"type": "text", "text": f"m{n}"}]
    return {"role": role, "content": content, "timestamp": n}


def chain(kinds: list[tuple[str, str]]) -> list[dict]:
    """A linear branch: ``("message", role)`` entries and state entries, ids ``e0``, ``e1``, ..."""
    entries = []
    for n, (kind, role) in enumerate(kinds):
        entry = {"type": kind, "id": f"e{n}", "parentId": f"e{n - 1}" if n else None, "timestamp": TS}
        if kind == "message":
            entry["message"] = message_for(role, n)
        entries.append(entry)
    return entries


entry_kinds = st.one_of(
    st.tuples(st.just("message"), st.sampled_from(MESSAGE_ROLES)),
    st.tuples(st.sampled_from(STATE_TYPES), st.just("")),
)


def walk(entries: list[dict], leaf_id: str) -> list[dict]:
    by_id = {entry["id"]: entry for entry in entries}
    branch, current = [], by_id.get(leaf_id)
    while current is not None:
        branch.append(current)
        current = by_id.get(current["parentId"])
    return branch[::-1]


@settings(deadline=None)  # a loaded CI machine must not fail a pure function on time
@given(st.lists(entry_kinds, max_size=30))
def test_without_compaction_or_edits_messages_are_the_message_entries_in_order(kinds):
    branch = chain(kinds)

    projection = build_session_projection(branch)

    assert projection["messages"] == [entry["message"] for entry in branch if entry["type"] == "message"]
    assert [item["sourceEntry"] for item in projection["entries"]] == branch
    assert build_context_entries(branch) == branch


@settings(deadline=None)
@given(st.lists(entry_kinds, min_size=1, max_size=20), st.data())
def test_context_edit_off_the_active_branch_has_no_effect(kinds, data):
    main = chain(kinds)
    leaf = main[-1]["id"]
    side = []
    for n in range(data.draw(st.integers(1, 4))):
        parent = data.draw(st.sampled_from([entry["id"] for entry in main] + [f"s{k}" for k in range(n)]))
        target = data.draw(st.sampled_from([entry["id"] for entry in main]))
        replacement = data.draw(st.sampled_from([None, {"content": "edited"}]))
        side.append({"type": "context_edit", "id": f"s{n}", "parentId": parent, "timestamp": TS,
                     "targetId": target, "replacement": replacement})  # fmt: skip

    with_side = walk(main + side, leaf)

    assert with_side == main
    assert build_session_context(with_side) == build_session_context(main)


@settings(deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant", "toolResult"]), min_size=1, max_size=15), st.data())
def test_null_edits_remove_exactly_their_targets(roles, data):
    branch = chain([("message", role) for role in roles])
    targets = data.draw(st.sets(st.sampled_from([entry["id"] for entry in branch])))
    for n, target in enumerate(sorted(targets)):
        branch.append({"type": "context_edit", "id": f"x{n}", "parentId": branch[-1]["id"], "timestamp": TS,
                       "targetId": target, "replacement": None})  # fmt: skip

    projection = build_session_projection(branch)

    assert projection["messages"] == [
        entry["message"] for entry in branch if entry["type"] == "message" and entry["id"] not in targets
    ]
    omitted = {item["sourceEntry"]["id"] for item in projection["entries"] if not item["messages"]}
    assert omitted == targets | {f"x{n}" for n in range(len(targets))}


@settings(deadline=None)
@given(st.lists(entry_kinds, min_size=1, max_size=20), st.data())
def test_compaction_context_is_summary_then_kept_tail(kinds, data):
    branch = chain(kinds)
    first_kept = data.draw(st.sampled_from([entry["id"] for entry in branch]))
    compaction = {"type": "compaction", "id": "c", "parentId": branch[-1]["id"], "timestamp": TS,
                  "summary": "S", "firstKeptEntryId": first_kept, "tokensBefore": 1}  # fmt: skip
    after = chain([("message", "user")])[0] | {"id": "after", "parentId": "c"}
    branch += [compaction, after]

    messages = build_session_context(branch)["messages"]

    start = next(i for i, entry in enumerate(branch) if entry["id"] == first_kept)
    kept = [
        entry["message"]
        for entry in branch[start:-2]
        if entry["type"] == "message" and entry["message"]["role"] != "system"
    ]
    assert messages[0]["role"] == "compactionSummary"
    assert messages[1:] == [*kept, after["message"]]


FIELDS = ["id", "parentId", "timestamp", "message", "summary", "firstKeptEntryId", "tokensBefore", "systemMessage",
          "fromId", "customType", "content", "display", "details", "targetId", "replacement", "thinkingLevel",
          "provider", "modelId"]  # fmt: skip
small_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "x", TS, "e1"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "text"]), inner, max_size=2)
    ),
    max_leaves=3,
)
field_values = st.one_of(
    small_json,
    st.sampled_from(["e0", "e1", "e2"]),
    st.builds(
        dict,
        role=st.sampled_from(
            [*MESSAGE_ROLES, "custom", "bashExecution", "branchSummary", "compactionSummary"]
        ),
        content=small_json,
    ),
    st.fixed_dictionaries({"content": small_json}),
)
arbitrary_entries = st.lists(
    st.builds(
        lambda kind, fields: {"type": kind, **fields},
        st.sampled_from(KNOWN_TYPES),
        st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=6),
    ),
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(arbitrary_entries)
def test_projection_never_raises_on_entries_with_missing_or_mistyped_fields(branch):
    projection = build_session_projection(branch)
    messages = convert_to_llm(projection["messages"], block_images=True)

    jsjson.dumps(messages)
    jsjson.dumps({"thinkingLevel": projection["thinkingLevel"], "model": projection["model"]})
    assert len(projection["entries"]) == len(build_context_entries(branch))
    context = build_session_context(branch)  # a one-pass shortcut when there is no compaction or edit
    assert jsjson.dumps(context) == jsjson.dumps(
        {key: projection[key] for key in ("messages", "thinkingLevel", "model")}
    )


def _reference_unchanged_prefix(messages: list, previous: list) -> int:
    count = 0
    for left, right in zip(messages, previous, strict=False):
        if left is not right:
            break
        count += 1
    return count


@settings(deadline=None)
@given(st.lists(st.integers(0, 5), max_size=12), st.lists(st.integers(0, 5), max_size=12))
def test_unchanged_prefix_counts_the_leading_identical_objects(left, right):
    """Issue 17: the C-level pass (with its all-identical fast path) equals the item-by-item loop.

    Equal but distinct objects do not count: each number picks one of a few shared dicts, or a new
    dict equal to it.
    """
    pool = [{"role": "user", "content": str(n)} for n in range(3)]

    def objects(picks: list[int]) -> list:
        return [pool[n] if n < 3 else {"role": "user", "content": str(n - 3)} for n in picks]

    messages, previous = objects(left), objects(right)
    assert unchanged_prefix(messages, previous) == _reference_unchanged_prefix(messages, previous)
    assert unchanged_prefix(messages, messages[: len(messages) // 2]) == len(messages) // 2


odd_entries = st.one_of(
    st.builds(lambda n: {"type": "message", "message": message_for("assistant", n) | {"model": f"m{n}", "provider": "p"}}, st.integers(0, 9)),
    st.builds(lambda role: {"type": "message", "message": {"role": role, "content": None}}, st.sampled_from(MESSAGE_ROLES)),
    st.builds(lambda value: {"type": "message", "message": value}, st.sampled_from([None, "text", 3, []])),
    st.builds(lambda level: {"type": "thinking_level_change", "thinkingLevel": level}, st.sampled_from(["off", "high", None])),
    st.builds(lambda n: {"type": "model_change", "provider": "p", "modelId": f"x{n}"}, st.integers(0, 9)),
    st.just({"type": "model_change"}),
    st.builds(lambda n: {"type": "custom_message", "customType": "t", "content": f"c{n}", "display": True}, st.integers(0, 9)),
    st.builds(lambda n: {"type": "branch_summary", "summary": f"s{n}", "fromId": "e0"}, st.integers(0, 9)),
    st.sampled_from([{"type": kind} for kind in STATE_TYPES]),
)


@settings(deadline=None)
@given(st.lists(odd_entries, max_size=25))
def test_the_one_pass_projection_of_a_plain_branch_is_the_general_one(entries):
    """A branch without compaction or context edit is projected in one pass; with repaired, missing
    and malformed messages, custom messages, summaries, and model and thinking changes, it gives
    what the general projection gives."""
    from tau.session.projection import _plain_projection, _projection

    branch = [{**entry, "id": f"e{n}", "parentId": f"e{n - 1}" if n else None, "timestamp": TS} for n, entry in enumerate(entries)]
    plain = _plain_projection(branch)
    assert plain is not None
    assert jsjson.dumps(plain) == jsjson.dumps(_projection(branch))
    assert [item["sourceEntry"] for item in plain["entries"]] == [item["sourceEntry"] for item in _projection(branch)["entries"]]
