"""The todo state machine: every action valid and invalid, limits at N and N+1, revisions, dependency gates."""

from __future__ import annotations

import itertools
import re

import pytest

from tau.bundled import todo_state as state
from tau.bundled.todo import results
from tau.bundled.todo_state import TodoError, apply, check_state, empty_state, state_bytes

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def counter():
    numbers = itertools.count(1)
    return lambda: f"t{next(numbers)}"


def build(*tasks, revision=0):
    """A valid state from (title, status, dependencies) triples; ids t1, t2, ..."""
    out = []
    for number, (title, status, deps) in enumerate(tasks, 1):
        out.append(
            {"id": f"t{number}", "title": title, "description": "", "status": status, "dependencies": deps}
        )
    return check_state({"schemaVersion": 1, "revision": revision, "tasks": out})


def rejected(current, params, code, message):
    with pytest.raises(TodoError) as caught:
        apply(current, params, counter())
    assert (caught.value.code, caught.value.message) == (code, message)


# ------------------------------------------------------------------------------------------ add


def test_add_creates_a_pending_task_with_a_uuid4_and_bumps_the_revision():
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": "Verify behavior"})
    [task] = change.state["tasks"]
    assert UUID4.match(task["id"])
    assert task == {
        "id": task["id"],
        "title": "Verify behavior",
        "description": "",
        "status": "pending",
        "dependencies": [],
    }
    assert change.state["revision"] == 1
    assert change.changed == [task["id"]]


def test_add_with_every_optional_field():
    current = build(("base", "completed", []))
    change = apply(
        current,
        {
            "action": "add",
            "baseRevision": 0,
            "title": "next",
            "description": "Run focused tests",
            "status": "in_progress",
            "dependencies": ["t1", "t1"],
        },
        counter(),
    )
    assert change.state["tasks"][1] == {
        "id": change.changed[0],
        "title": "next",
        "description": "Run focused tests",
        "status": "in_progress",
        "dependencies": ["t1"],  # duplicates stored once
    }


def test_add_never_reuses_an_existing_id():
    current = build(("a", "pending", []))
    ids = iter(["t1", "t1", "fresh"])
    change = apply(current, {"action": "add", "baseRevision": 0, "title": "b"}, lambda: next(ids))
    assert [t["id"] for t in change.state["tasks"]] == ["t1", "fresh"]


@pytest.mark.parametrize("title", ["", "   ", "\u3000\t", None, 5])
def test_add_rejects_a_blank_or_missing_title(title):
    params = {"action": "add", "baseRevision": 0, "title": title}
    if title is None:
        del params["title"]
    rejected(empty_state(), params, "invalid_title", "title must be non-blank and at most 160 characters")


def test_title_limit_counts_code_points_at_160_and_161():
    astral = "\U0001d11e"  # two UTF-16 code units, one code point
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": astral * 160})
    assert change.state["tasks"][0]["title"] == astral * 160
    rejected(
        empty_state(),
        {"action": "add", "baseRevision": 0, "title": "x" * 161},
        "invalid_title",
        "title must be non-blank and at most 160 characters",
    )


def test_description_limit_at_512_and_513():
    ok = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": "a", "description": "é" * 512})
    assert len(ok.state["tasks"][0]["description"]) == 512
    rejected(
        empty_state(),
        {"action": "add", "baseRevision": 0, "title": "a", "description": "é" * 513},
        "description_too_long",
        "description exceeds 512 characters",
    )


def test_dependency_limit_counts_distinct_ids_at_16_and_17():
    current = build(*[(f"p{n}", "pending", []) for n in range(17)])
    sixteen = [f"t{n}" for n in range(1, 17)]
    change = apply(
        current, {"action": "add", "baseRevision": 0, "title": "x", "dependencies": [*sixteen, "t1"]}
    )
    assert change.state["tasks"][-1]["dependencies"] == sixteen
    rejected(
        current,
        {"action": "add", "baseRevision": 0, "title": "x", "dependencies": [*sixteen, "t17"]},
        "too_many_dependencies",
        "too many dependencies (max 16)",
    )


def test_task_limit_at_40_and_41():
    current = build(*[(f"task {n}", "pending", []) for n in range(39)])
    forty = apply(current, {"action": "add", "baseRevision": 0, "title": "the 40th"})
    assert len(forty.state["tasks"]) == 40
    rejected(
        forty.state,
        {"action": "add", "baseRevision": 1, "title": "the 41st"},
        "task_limit",
        "task limit 40 reached",
    )


def test_add_rejects_a_missing_dependency_whole():
    rejected(
        build(("a", "pending", [])),
        {"action": "add", "baseRevision": 0, "title": "b", "dependencies": ["t1", "nope"]},
        "missing_dependency",
        "dependency nope not found",
    )


def test_add_in_progress_needs_completed_prerequisites():
    current = build(("a", "pending", []))
    for status in ("in_progress", "completed"):
        with pytest.raises(TodoError) as caught:
            apply(
                current,
                {"action": "add", "baseRevision": 0, "title": "b", "status": status, "dependencies": ["t1"]},
                lambda: "new",
            )
        assert caught.value.message == "prerequisites of new are not completed"
        assert caught.value.code == "prerequisites_incomplete"


def test_add_rejects_an_unknown_status():
    rejected(
        empty_state(),
        {"action": "add", "baseRevision": 0, "title": "a", "status": "done"},
        "invalid_arguments",
        'status must be pending, in_progress or completed, not "done"',
    )


# --------------------------------------------------------------------------------------- state size


def sized_state(target):
    """A valid 40-task state (revision 1) whose compact JSON is exactly ``target`` bytes."""
    tasks = [
        {
            "id": f"t{n:02d}",
            "title": f"task {n:02d}",
            "description": "",
            "status": "pending",
            "dependencies": [],
        }
        for n in range(40)
    ]
    current = {"schemaVersion": 1, "revision": 1, "tasks": tasks}
    for task in tasks:
        missing = target - state_bytes(current)
        if missing <= 0:
            break
        size = min(missing, 2047)  # at most 512 code points: 511 four-byte characters + one more
        fill, rest = divmod(size, 4)
        task["description"] = "\U0001f600" * fill + ["", "a", "é", "€"][rest]
    assert state_bytes(current) == target
    return current


@pytest.mark.parametrize(("target", "accepted"), [(65536, True), (65537, False)])
def test_state_limit_at_64_kib_and_one_byte_more(target, accepted):
    post = sized_state(target)
    index = max(n for n, task in enumerate(post["tasks"]) if task["description"])
    last = post["tasks"][index]
    tasks = [dict(task) for task in post["tasks"]]
    tasks[index]["description"] = ""
    before = check_state({**post, "revision": 0, "tasks": tasks})
    params = {
        "action": "update",
        "baseRevision": 0,
        "updates": [{"id": last["id"], "description": last["description"]}],
    }
    if accepted:
        assert apply(before, params).state == post
    else:
        rejected(before, params, "state_too_large", "state exceeds 64 KiB")


# -------------------------------------------------------------------------------------- revisions


@pytest.mark.parametrize("base", [1, 7])
def test_a_stale_base_revision_is_a_conflict(base):
    rejected(
        empty_state(),
        {"action": "add", "baseRevision": base, "title": "a"},
        "revision_conflict",
        f'revision conflict (baseRevision {base}, current 0); call todo {{"action":"list"}} and retry',
    )


@pytest.mark.parametrize(("base", "shown"), [(None, "missing"), (-1, "-1"), (True, "true"), ("0", '"0"')])
def test_a_missing_or_malformed_base_revision_is_a_conflict(base, shown):
    params = {"action": "clear", "baseRevision": base}
    if base is None:
        del params["baseRevision"]
    rejected(
        empty_state(),
        params,
        "revision_conflict",
        f'revision conflict (baseRevision {shown}, current 0); call todo {{"action":"list"}} and retry',
    )


def test_a_conflict_is_checked_before_anything_else():
    rejected(
        empty_state(),
        {"action": "remove", "baseRevision": 3, "id": "nope"},
        "revision_conflict",
        'revision conflict (baseRevision 3, current 0); call todo {"action":"list"} and retry',
    )


def test_a_no_op_keeps_the_revision_and_the_state():
    current = build(("a", "pending", []), revision=5)
    same = apply(
        current,
        {"action": "update", "baseRevision": 5, "updates": [{"id": "t1", "title": "a", "status": "pending"}]},
    )
    assert same.is_noop and same.state is current and same.state["revision"] == 5
    assert results.mutation_text(same.state["revision"], same.changed) == "todo revision 5 (0 changes)"
    assert apply(empty_state(), {"action": "clear", "baseRevision": 0}).is_noop


def test_the_revision_is_base_plus_one_after_each_mutation():
    current = empty_state()
    for base in range(3):
        current = apply(current, {"action": "add", "baseRevision": base, "title": f"n{base}"}).state
        assert current["revision"] == base + 1


# ----------------------------------------------------------------------------------------- update


def test_update_applies_every_patch_atomically():
    current = build(("a", "pending", []), ("b", "pending", ["t1"]), ("c", "pending", []))
    change = apply(
        current,
        {
            "action": "update",
            "baseRevision": 0,
            "updates": [
                {"id": "t1", "status": "completed", "description": "done it"},
                {"id": "t2", "status": "completed"},  # valid on the post-state only
                {"id": "t3", "title": "C"},
            ],
        },
    )
    assert [(t["status"], t["title"], t["description"]) for t in change.state["tasks"]] == [
        ("completed", "a", "done it"),
        ("completed", "b", ""),
        ("pending", "C", ""),
    ]
    assert change.changed == ["t1", "t2", "t3"]
    assert results.mutation_text(1, change.changed) == "todo revision 1 (3 changes)"


def test_update_with_an_unknown_id_rejects_every_patch():
    current = build(("a", "pending", []))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "title": "x"}, {"id": "ghost"}]},
        "unknown_task",
        "unknown task id ghost",
    )
    assert current["tasks"][0]["title"] == "a"


@pytest.mark.parametrize("updates", [[], None, "t1", [3]])
def test_update_needs_a_non_empty_array_of_patches(updates):
    with pytest.raises(TodoError) as caught:
        apply(build(("a", "pending", [])), {"action": "update", "baseRevision": 0, "updates": updates})
    assert caught.value.code == "invalid_arguments"


def test_an_empty_description_clears_it_and_empty_dependencies_remove_prerequisites():
    current = check_state(
        {
            "schemaVersion": 1,
            "revision": 0,
            "tasks": [
                {"id": "t1", "title": "a", "description": "", "status": "pending", "dependencies": []},
                {
                    "id": "t2",
                    "title": "b",
                    "description": "long",
                    "status": "pending",
                    "dependencies": ["t1"],
                },
            ],
        }
    )
    change = apply(
        current,
        {
            "action": "update",
            "baseRevision": 0,
            "updates": [{"id": "t2", "description": "", "dependencies": []}],
        },
    )
    assert change.state["tasks"][1] == {
        "id": "t2",
        "title": "b",
        "description": "",
        "status": "pending",
        "dependencies": [],
    }


def test_update_limits_apply_to_patches():
    current = build(("a", "pending", []))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "title": " "}]},
        "invalid_title",
        "title must be non-blank and at most 160 characters",
    )
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "description": "d" * 513}]},
        "description_too_long",
        "description exceeds 512 characters",
    )


def test_self_missing_and_cyclic_dependencies_reject_the_whole_update():
    current = build(("a", "pending", []), ("b", "pending", ["t1"]))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "dependencies": ["t1"]}]},
        "self_dependency",
        "task cannot depend on itself",
    )
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "dependencies": ["t9"]}]},
        "missing_dependency",
        "dependency t9 not found",
    )
    rejected(
        current,
        {
            "action": "update",
            "baseRevision": 0,
            "updates": [{"id": "t1", "title": "A", "dependencies": ["t2"]}],
        },
        "dependency_cycle",
        "dependencies would create a cycle",
    )


def test_a_longer_cycle_is_found():
    current = build(("a", "pending", []), ("b", "pending", ["t1"]), ("c", "pending", ["t2"]))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "dependencies": ["t3"]}]},
        "dependency_cycle",
        "dependencies would create a cycle",
    )


# -------------------------------------------------------------------------------- dependency gates


@pytest.mark.parametrize("status", ["in_progress", "completed"])
def test_progress_needs_completed_prerequisites(status):
    current = build(("a", "in_progress", []), ("b", "pending", ["t1"]))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t2", "status": status}]},
        "prerequisites_incomplete",
        "prerequisites of t2 are not completed",
    )


def test_adding_an_open_prerequisite_to_active_work_is_rejected():
    current = build(("a", "pending", []), ("b", "in_progress", []))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t2", "dependencies": ["t1"]}]},
        "prerequisites_incomplete",
        "prerequisites of t2 are not completed",
    )


@pytest.mark.parametrize("dependent", ["in_progress", "completed"])
@pytest.mark.parametrize("reopened", ["pending", "in_progress"])
def test_reopening_a_prerequisite_of_active_work_is_rejected_not_cascaded(dependent, reopened):
    current = build(("a", "completed", []), ("b", dependent, ["t1"]))
    rejected(
        current,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "status": reopened}]},
        "dependents_active",
        "cannot reopen t1: dependent tasks are in progress or completed",
    )


def test_reopening_is_allowed_when_dependents_are_pending_or_reopened_too():
    current = build(("a", "completed", []), ("b", "pending", ["t1"]), ("c", "completed", ["t1"]))
    change = apply(
        current,
        {
            "action": "update",
            "baseRevision": 0,
            "updates": [{"id": "t1", "status": "pending"}, {"id": "t3", "status": "pending"}],
        },
    )
    assert [t["status"] for t in change.state["tasks"]] == ["pending", "pending", "pending"]


# ----------------------------------------------------------------------------------- remove, clear


def test_remove_drops_the_task():
    current = build(("a", "pending", []), ("b", "pending", []))
    change = apply(current, {"action": "remove", "baseRevision": 0, "id": "t1"})
    assert [t["id"] for t in change.state["tasks"]] == ["t2"]
    assert change.changed == ["t1"]
    assert results.mutation_text(1, change.changed) == "todo revision 1 (1 change: t1)"


def test_remove_of_an_unknown_id_is_rejected():
    rejected(
        build(("a", "pending", [])),
        {"action": "remove", "baseRevision": 0, "id": "t9"},
        "unknown_task",
        "unknown task id t9",
    )


@pytest.mark.parametrize("params", [{}, {"id": None}, {"id": 42}])
def test_remove_without_an_id_is_malformed_not_an_unknown_task(params):
    """Issue 33, item 6: malformed arguments answer invalid_arguments (docs/extensions/todo.md)."""
    rejected(
        build(("a", "pending", [])),
        {"action": "remove", "baseRevision": 0, **params},
        "invalid_arguments",
        "remove needs the id of the task to remove",
    )


def test_an_update_patch_without_an_id_is_malformed():
    rejected(
        build(("a", "pending", [])),
        {"action": "update", "baseRevision": 0, "updates": [{"status": "completed"}]},
        "invalid_arguments",
        'each update must be an object with an id, not {"status":"completed"}',
    )


def test_remove_of_a_task_others_depend_on_is_rejected_even_when_they_are_pending():
    current = build(("a", "pending", []), ("b", "pending", ["t1"]), ("c", "pending", ["t1"]))
    rejected(
        current,
        {"action": "remove", "baseRevision": 0, "id": "t1"},
        "has_dependents",
        "cannot remove t1: 2 task(s) depend on it",
    )


def test_clear_removes_every_task_and_counts_each():
    current = build(("a", "completed", []), ("b", "pending", ["t1"]))
    change = apply(current, {"action": "clear", "baseRevision": 0})
    assert change.state == {"schemaVersion": 1, "revision": 1, "tasks": []}
    assert change.changed == ["t1", "t2"]


def test_ids_are_not_reset_by_clear():
    first = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": "a"}).state
    cleared = apply(first, {"action": "clear", "baseRevision": 1}).state
    again = apply(cleared, {"action": "add", "baseRevision": 2, "title": "a"}).state
    assert again["tasks"][0]["id"] != first["tasks"][0]["id"]
    assert again["revision"] == 3


def test_an_unknown_action_is_rejected():
    rejected(
        empty_state(),
        {"action": "list", "baseRevision": 0},
        "invalid_arguments",
        "unknown action 'list'; use list, add, update, remove or clear",
    )


def test_mutations_never_touch_the_pre_state():
    current = build(("a", "pending", []), ("b", "pending", ["t1"]))
    frozen = check_state(current)
    apply(current, {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "status": "completed"}]})
    apply(current, {"action": "clear", "baseRevision": 0})
    assert current == frozen


# ---------------------------------------------------------------------------------- check_state


def valid_data():
    return {
        "schemaVersion": 1,
        "revision": 2,
        "tasks": [
            {"id": "a", "title": "A", "description": "", "status": "completed", "dependencies": []},
            {"id": "b", "title": "B", "description": "d", "status": "in_progress", "dependencies": ["a"]},
        ],
    }


def test_check_state_accepts_a_valid_state_and_copies_it():
    data = valid_data()
    checked = check_state(data)
    assert checked == data and checked is not data and checked["tasks"][0] is not data["tasks"][0]
    assert check_state({"schemaVersion": 1, "revision": 0, "tasks": []}) == empty_state()


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.update(schemaVersion=2),
        lambda d: d.update(revision=-1),
        lambda d: d.update(revision=1.5),
        lambda d: d.update(revision=True),
        lambda d: d.update(extra=1),
        lambda d: d.pop("tasks"),
        lambda d: d["tasks"].append(dict(d["tasks"][0])),  # duplicate id
        lambda d: d["tasks"][0].update(status="done"),
        lambda d: d["tasks"][0].update(title=""),
        lambda d: d["tasks"][0].update(description=None),
        lambda d: d["tasks"][0].pop("description"),
        lambda d: d["tasks"][0].update(dependencies=["a"]),  # self
        lambda d: d["tasks"][1].update(dependencies=["zz"]),  # missing
        lambda d: d["tasks"][1].update(dependencies=["a", "a"]),
        lambda d: d["tasks"][0].update(status="pending"),  # active dependent of an open task
        lambda d: d["tasks"][0].update(dependencies=["b"]),  # cycle
        lambda d: d["tasks"].extend(
            {"id": f"x{n}", "title": "x", "description": "", "status": "pending", "dependencies": []}
            for n in range(39)
        ),
    ],
)
def test_check_state_rejects_malformed_data(spoil):
    data = valid_data()
    spoil(data)
    with pytest.raises(ValueError):
        check_state(data)


def test_check_state_rejects_non_objects():
    for data in (None, [], "x", {"schemaVersion": 1}):
        with pytest.raises(ValueError):
            check_state(data)


def test_limits_are_the_documented_values():
    assert (state.MAX_TASKS, state.MAX_TITLE, state.MAX_DESCRIPTION, state.MAX_DEPENDENCIES) == (
        40,
        160,
        512,
        16,
    )
    assert state.MAX_STATE_BYTES == 65536
