"""Property tests of the session tree: random appends, branches, resets and labels; random broken graphs."""

from __future__ import annotations

import itertools
import json
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.session import SessionManager

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=5)),
        st.tuples(st.just("assistant"), st.text(max_size=5)),
        st.tuples(st.just("custom"), st.integers(0, 3)),
        st.tuples(st.just("note"), st.text(max_size=3)),
        st.tuples(st.just("model"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("branch"), st.integers(0, 1000)),
        st.tuples(st.just("reset"), st.none()),
        st.tuples(st.just("label"), st.integers(0, 1000)),
        st.tuples(st.just("name"), st.text(max_size=4)),
        st.tuples(st.just("summary"), st.integers(-1, 1000)),
    ),
    min_size=1,
    max_size=40,
)


def apply(manager: SessionManager, op: str, arg, ids: list[str]) -> str | None:
    """Run one operation; returns the id of an appended entry, if any."""
    if op == "user":
        return manager.append_message({"role": "user", "content": arg, "timestamp": 1})
    if op == "assistant":
        return manager.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": arg}], "provider": "p", "model": "m"}
        )
    if op == "custom":
        return manager.append_custom_entry("state", {"n": arg})
    if op == "note":
        return manager.append_custom_message_entry("note", arg, True)
    if op == "model":
        return manager.append_model_change(arg, "x")
    if op == "name":
        return manager.append_session_info(arg)
    if op == "reset":
        manager.reset_leaf()
        return None
    if not ids:
        return None
    target = ids[arg % len(ids)] if arg is not None and arg >= 0 else None
    if op == "branch":
        manager.branch(target)
        return None
    if op == "label":
        return manager.append_label_change(target, f"L{arg}")
    return manager.branch_with_summary(target, "summary")


def assert_path(branch: list[dict], leaf: str | None) -> None:
    if leaf is None:
        assert branch == []
        return
    assert branch[0]["parentId"] is None
    for parent, child in itertools.pairwise(branch):
        assert child["parentId"] == parent["id"]
    assert branch[-1]["id"] == leaf


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_random_operations_keep_the_tree_invariants(ops):
    with tempfile.TemporaryDirectory() as directory:
        manager = SessionManager.create("/tmp/proj", directory)
        ids: list[str] = []
        for op, arg in ops:
            leaf_before = manager.get_leaf_id()
            appended = apply(manager, op, arg, ids)
            if appended is not None:
                entry = manager.get_entry(appended)
                expected_parent = (
                    (None if arg is None or arg < 0 else ids[arg % len(ids)])
                    if op == "summary"
                    else leaf_before
                )
                assert entry["parentId"] == expected_parent
                assert manager.get_leaf_id() == appended
                ids.append(appended)
            assert_path(manager.get_branch(), manager.get_leaf_id())
        assert len(set(ids)) == len(ids)
        tree_ids: list[str] = []
        stack = list(manager.get_tree())
        while stack:
            node = stack.pop()
            tree_ids.append(node["entry"]["id"])
            stack.extend(node["children"])
        assert sorted(tree_ids) == sorted(ids)
        path = manager.get_session_file()
        entries = manager.get_entries()
        manager.close()
        if not Path(path).exists():  # no user/assistant message: nothing was written, as in pi
            assert not any(
                e["type"] == "message" and e["message"]["role"] in ("user", "assistant") for e in entries
            )
            return
        reopened = SessionManager.open(path, read_only=True)
        assert reopened.get_entries() == entries
        assert reopened.get_leaf_id() == (entries[-1]["id"] if entries else None)
        assert reopened.problems == []
        assert_path(reopened.get_branch(), reopened.get_leaf_id())
        for entry_id in ids:
            assert reopened.get_label(entry_id) == manager.get_label(entry_id)
        assert reopened.get_session_name() == manager.get_session_name()


def straight_branch(manager: SessionManager, leaf: str | None) -> list[dict]:
    """The branch the straightforward way: parentId links from the leaf, no cache."""
    path: list[dict] = []
    entry = manager.get_entry(leaf) if leaf is not None else None
    while entry is not None:
        path.append(entry)
        entry = manager.get_entry(entry["parentId"]) if entry["parentId"] is not None else None
    return path[::-1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS, st.lists(st.integers(0, 1000), max_size=40))
def test_the_kept_branch_equals_a_fresh_walk(ops, probes):
    """get_branch keeps the last branch and extends it after appends: it must equal a fresh walk,
    with branch(), resets, summaries and other leaves asked for in between."""
    manager = SessionManager.in_memory("/tmp/proj")
    ids: list[str] = []
    for step, (op, arg) in enumerate(ops):
        appended = apply(manager, op, arg, ids)
        if appended is not None:
            ids.append(appended)
        assert manager.get_branch() == straight_branch(manager, manager.get_leaf_id())
        if ids and step < len(probes):
            other = ids[probes[step] % len(ids)]
            assert manager.get_branch(other) == straight_branch(manager, other)
        assert manager.get_branch() == straight_branch(manager, manager.get_leaf_id())


GRAPH = st.lists(
    st.tuples(st.integers(0, 12), st.one_of(st.none(), st.integers(0, 15), st.just(-1))),
    min_size=1,
    max_size=25,
)


@settings(max_examples=80, deadline=None)
@given(GRAPH)
def test_walks_over_broken_graphs_terminate(graph):
    """Ids drawn from a small pool (repeats), parents pointing anywhere: cycles, self-loops, missing parents."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    ]
    for number, (node, parent) in enumerate(graph):
        parent_id = None if parent is None else ("gone" if parent == -1 else f"n{parent}")
        lines.append(
            {
                "type": "message",
                "id": f"n{node}",
                "parentId": parent_id,
                "timestamp": f"2026-01-01T00:00:{number:02d}.000Z",
                "message": {"role": "user", "content": str(number)},
            }
        )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "g.jsonl"
        path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
        with time_limit(10):
            check_walks(path, graph)


def check_walks(path: Path, graph: list) -> None:
    manager = SessionManager.open(path, read_only=True)
    entries = manager.get_entries()
    assert len(entries) == len(graph)
    for entry_id in {f"n{node}" for node, _ in graph}:
        branch = manager.get_branch(entry_id)
        assert branch[-1]["id"] == entry_id
        assert len({id(e) for e in branch}) == len(branch)  # no entry twice: the walk stopped
    manager.build_session_context()
    has_cycle = any("cycle" in message for _, message in manager.problems)
    # Entries on a cycle hang under no root (as in pi); the problems say so.
    if _reachable_from_roots(manager.get_tree()) < len({f"n{node}" for node, _ in graph}):
        assert has_cycle


@contextmanager
def time_limit(seconds: float):
    """Fail instead of hanging: a walk that loops forever is exactly the bug this test looks for."""

    def expire(signum, frame):
        raise TimeoutError(f"walk did not terminate within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _reachable_from_roots(roots: list[dict]) -> int:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        seen.add(node["entry"]["id"])
        stack.extend(node["children"])
    return len(seen)
