"""The anchor and the branch reader: newest human message, newest list, only new entries walked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from todo_loop_fakes import FakeView, assistant, marker_entry, tasks_state, user

from tau.bundled.todo_loop.branch import BranchReader, anchor_of, scan_entries


def test_the_anchor_is_the_newest_plain_human_message():
    view = FakeView()
    first = view.add(user("first"))
    view.add(assistant())
    human = view.add(user("second question"))
    view.add(assistant())
    view.add(marker_entry())
    view.add(user("hidden resume", customType="other-ext:resume"))
    view.add(assistant())
    scan = BranchReader().read(view)
    assert (scan.anchor.entry_id, scan.anchor.text) == (human, "second question")
    assert first != human


def test_text_blocks_are_joined_and_images_ignored():
    entry = {
        "type": "message",
        "id": "x",
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": ""},
                {"type": "text", "text": "b"},
            ],
        },
    }
    assert anchor_of(entry).text == "a b"


def test_custom_messages_and_other_roles_never_anchor():
    assert anchor_of(marker_entry()) is None
    assert anchor_of(user("x", customType="rpiv-todo-plan-reminder")) is None
    assert anchor_of(assistant()) is None
    assert anchor_of({"type": "custom", "customType": "x"}) is None
    assert anchor_of("junk") is None


def test_no_anchor_and_no_list_on_an_empty_session():
    scan = BranchReader().read(FakeView())
    assert (scan.tasks, scan.anchor) == (None, None)


def test_a_second_read_walks_only_the_new_entries():
    view = FakeView()
    view.add(user("go"))
    for _ in range(500):
        view.add(assistant(tool="bash"))
    reader = BranchReader()
    assert reader.read(view).tasks is None  # the whole branch is walked once
    view.reads = 0
    view.add(assistant())
    view.add(user("more"))
    view.add(assistant())
    assert reader.read(view).anchor.text == "more"
    assert view.reads <= 3
    view.reads = 0
    view.add(assistant(tool="bash"))
    assert reader.read(view).tasks is None
    assert view.reads == 1


def test_a_branch_switch_changes_the_list_and_the_anchor():
    view = FakeView()
    view.add(user("plan"))
    fork_point = view.add(tasks_state("pending", "pending"))
    view.add(user("left"))
    view.add(tasks_state("completed", "completed"))
    left_leaf = view.add(assistant())
    reader = BranchReader()
    left = reader.read(view)
    assert (left.tasks.open_count, left.anchor.text) == (0, "left")
    view.leaf = fork_point
    view.add(user("right"))
    view.add(assistant())
    right = reader.read(view)
    assert (right.tasks.open_count, right.tasks.total, right.anchor.text) == (2, 2, "right")
    view.leaf = left_leaf
    assert reader.read(view).tasks.open_count == 0


def test_a_missing_parent_or_a_cycle_ends_the_walk():
    view = FakeView()
    view.add(tasks_state("pending"))
    view.add(user("orphan"), parent="gone")
    assert BranchReader().read(view).tasks is None
    cyc = FakeView()
    cyc.add({"type": "custom", "customType": "x", "id": "a"}, parent="b")
    cyc.add({"type": "custom", "customType": "x", "id": "b"}, parent="a")
    cyc.add(user("after the cycle"))
    scan = BranchReader().read(cyc)
    assert (scan.tasks, scan.anchor.text) == (None, "after the cycle")


def test_another_session_does_not_reuse_remembered_walks():
    reader = BranchReader()
    one = FakeView("s1")
    one.add({**tasks_state("pending"), "id": "same"}, parent=None)
    assert reader.read(one).tasks.open_count == 1
    two = FakeView("s2")
    two.add({**user("hi"), "id": "same"}, parent=None)
    assert reader.read(two).tasks is None


def test_a_failing_view_reads_as_nothing():
    class Broken(FakeView):
        def get_entry(self, entry_id):
            raise OSError("file gone")

    view = Broken()
    view.add(user("x"))
    scan = BranchReader().read(view)
    assert (scan.tasks, scan.anchor) == (None, None)


kinds = st.sampled_from(["user", "assistant", "list", "closed", "broken", "marker", "custom"])


def make(kind: str) -> dict:
    return {
        "user": lambda: user("u"),
        "assistant": assistant,
        "list": lambda: tasks_state("pending"),
        "closed": lambda: tasks_state("completed"),
        "broken": lambda: {"type": "custom", "customType": "pi-todo:state", "data": {"tasks": [1]}},
        "marker": marker_entry,
        "custom": lambda: {"type": "custom", "customType": "other"},
    }[kind]()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(kinds, st.integers(min_value=0, max_value=40), st.sampled_from(["none", "read", "anchor"])),
        max_size=60,
    ),
    st.sampled_from([1, 4, 64]),
)
def test_remembered_walks_give_what_a_full_backward_walk_gives(steps, memo_size):
    """Whatever the tree and the order of reads, the reader agrees with walking get_branch() backwards;
    so does the walk that stops at the anchor (issue 17), between full reads or alone."""
    view = FakeView()
    reader = BranchReader(memo_size=memo_size)
    for kind, jump, read in steps:
        if jump and view.order and jump % 3 == 0:
            view.leaf = view.order[jump % len(view.order)]  # move to another branch point
        view.add(make(kind))
        expected = scan_entries(reversed(view.get_branch()))
        if read == "read":
            got = reader.read(view)
            assert got.tasks == expected.tasks
            assert got.anchor == expected.anchor
        elif read == "anchor":
            assert reader.anchor(view) == expected.anchor
