"""The message estimate and call keys every request computes for its whole context: the fast forms
give exactly what the straightforward formulas give (issue 28 made them cheaper, not different)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.bundled.obspack.scan import ContextScan
from tau.bundled.obspack.stale import MUTATIONS, _path, argument_chars, call_keys, message_tokens


class Named(str):
    def __str__(self) -> str:  # a str subclass that prints otherwise: measured as printed
        return "named:" + super().__str__()


def reference_message_tokens(message: dict[str, Any]) -> int:
    """The formula as first written (characters of text, thinking and calls, and the summary, / 4)."""

    def text_chars(value: Any) -> int:
        if isinstance(value, str):
            return len(value)
        if isinstance(value, list):
            total = 0
            for block in value:
                if not isinstance(block, dict):
                    continue
                text = block.get("text")
                if isinstance(text, str):
                    total += len(text)
                text = block.get("thinking")
                if isinstance(text, str):
                    total += len(text)
                if block.get("type") == "toolCall":
                    total += 64 + argument_chars(block.get("arguments"))
            return total
        return 0

    return (text_chars(message.get("content")) + len(str(message.get("summary") or ""))) // 4 + 4


def reference_call_keys(name: str, arguments: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(arguments, dict):
        return ()
    keys: list[tuple[str, str]] = []
    if name == "bash" and isinstance(arguments.get("command"), str):
        keys.append(("command", arguments["command"]))
    if name == "read" and (path := _path(arguments)) is not None:
        keys.append(("read", path))
    then_run = arguments.get("then_run") if name in MUTATIONS else None
    if isinstance(then_run, dict) and isinstance(then_run.get("command"), str):
        keys.append(("command", then_run["command"]))
    return tuple(keys)


texts = st.one_of(st.text(max_size=30), st.none(), st.integers(), st.builds(Named, st.text(max_size=10)))
scalars = st.one_of(st.text(max_size=20), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
arguments = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=4)
    ),
    max_leaves=12,
)
blocks = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["text", "thinking", "toolCall", "image", 3]),
            "text": texts,
            "thinking": texts,
            "arguments": arguments,
        },
    ),
    texts,
    st.lists(st.text(max_size=5), max_size=2),
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "toolResult", "compactionSummary"]),
        "content": st.one_of(st.lists(blocks, max_size=5), texts, st.dictionaries(st.text(max_size=3), texts)),
        "summary": st.one_of(texts, st.just(""), st.just(0), st.lists(st.integers(), max_size=3)),
    },
)


@settings(max_examples=400, deadline=None)
@given(messages)
def test_the_message_estimate_is_the_straightforward_formula(message):
    assert message_tokens(message) == reference_message_tokens(message)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["bash", "read", "edit", "write", "grep", "obs_recall"]),
    st.one_of(
        arguments,
        st.fixed_dictionaries(
            {},
            optional={
                "command": texts,
                "path": texts,
                "file_path": texts,
                "then_run": st.one_of(texts, st.fixed_dictionaries({}, optional={"command": texts})),
            },
        ),
    ),
)
def test_the_call_keys_are_the_straightforward_ones(name, arguments):
    assert call_keys(name, arguments) == reference_call_keys(name, arguments)


def test_the_estimate_of_a_typical_context():
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls -la"}}
    assert message_tokens({"role": "assistant", "content": [{"type": "text", "text": "x" * 40}, call]}) == (
        40 + 64 + len("command") + 4 + len("ls -la")
    ) // 4 + 4
    assert message_tokens({"role": "compactionSummary", "summary": "y" * 400}) == 104
    assert message_tokens({"role": "user", "content": "hello world!"}) == 7


call_blocks = st.fixed_dictionaries(
    {"type": st.just("toolCall"), "id": st.sampled_from(["c1", "c2", "c3"]), "name": st.sampled_from(["bash", "read", "edit"])},
    optional={"arguments": arguments, "text": texts, "thinking": texts},
)
context_messages = st.one_of(
    messages.filter(lambda message: message.get("role") != "assistant"),  # (whose content the scan iterates)
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.one_of(st.lists(st.one_of(blocks, call_blocks), max_size=4), st.text(max_size=5), st.none())},
        optional={"summary": texts},
    ),
    st.fixed_dictionaries(
        {"role": st.just("toolResult"), "toolCallId": st.sampled_from(["c1", "c2", "c9"]), "content": st.lists(blocks, max_size=2)},
        optional={"toolName": st.sampled_from(["bash", "todo"]), "isError": st.booleans()},
    ),
    st.fixed_dictionaries({"role": st.just("custom"), "content": texts}),
)


def reading(scan: ContextScan) -> tuple[Any, ...]:
    items = [(i.index, i.turn, i.keys, i.block, id(i.message), id(i.call)) for i in scan.items]
    return items, scan.latest, scan.turns, scan.checklist, [id(call) for call in scan.new_calls], scan.fresh


@settings(max_examples=300, deadline=None)
@given(st.lists(context_messages, max_size=12), st.integers(min_value=0, max_value=12))
def test_a_sized_read_reads_the_same_and_sizes_each_message_as_estimated(context, cut):
    visible = [message for message in context if message.get("role") != "custom"]
    plain, sized = ContextScan(), ContextScan()
    assert reading(sized(context, sized=True)) == reading(plain(context))
    assert sized.sizes == plain.sizes == [message_tokens(message) for message in visible]
    # a read that keeps the leading messages (sizes kept, the new ones estimated when asked for)
    grown = [*context[:cut], {"role": "user", "content": "more"}]
    plain, sized = ContextScan(), ContextScan()
    plain(context[:cut]), sized(context[:cut], sized=True)
    assert reading(sized(grown, sized=True)) == reading(plain(grown))
    assert sized.sizes == [message_tokens(message) for message in grown if message.get("role") != "custom"]
    # hidden messages that are new objects (they move from one request to the next): the others keep
    # their reading, and it is what reading them all afresh gives
    call = {"type": "toolCall", "id": "c7", "name": "bash", "arguments": {"command": "ls"}}
    moved = [dict(message) if message.get("role") == "custom" else message for message in grown]
    moved += [{"role": "assistant", "content": [call]}, {"role": "toolResult", "toolCallId": "c7", "content": []}]
    assert reading(sized(moved, sized=True))[:4] == reading(ContextScan()(moved))[:4]
    assert sized.sizes == [message_tokens(message) for message in moved if message.get("role") != "custom"]
