"""Issue 18, items 6 and 7: a whole plan in one ``add``, and ids shortened to 8 characters.

``add`` takes ``tasks: [{title, description?, dependencies?}]`` instead of ``title``: atomic, one
revision, the same state format and limits; ``"#N"`` names the N-th task of the same batch. Any
unique id prefix of at least 8 characters is accepted wherever an id is; mutation result lines show
8 characters while ``list`` JSON, ``details`` and the state keep full ids.
"""

from __future__ import annotations

import json
from itertools import count

import pytest

from tau.bundled.todo import results
from tau.bundled.todo_loop.tasks import task_list_of
from tau.bundled.todo_state import MAX_TASKS, TodoError, apply, check_state, empty_state

IDS = [
    "aaaaaaaa-1111-4111-8111-000000000001",
    "aaaaaaaa-1111-4111-8111-222222222222",
    "bbbbbbbb-2222-4222-8222-000000000003",
]


def ids(*values):
    supply = iter(values)
    return lambda: next(supply)


def serial():
    numbers = count(1)
    return lambda: f"{next(numbers):08x}-0000-4000-8000-000000000000"


def three_tasks():
    return check_state(
        {
            "schemaVersion": 1,
            "revision": 4,
            "tasks": [
                {"id": task_id, "title": f"t{n}", "description": "", "status": "pending", "dependencies": []}
                for n, task_id in enumerate(IDS, 1)
            ],
        }
    )


def rejected(current, params, code):
    with pytest.raises(TodoError) as caught:
        apply(current, params, serial())
    assert caught.value.code == code
    return caught.value.message


# ------------------------------------------------------------------------------------------ batch


def test_a_batch_is_one_revision_with_every_task_pending_in_order():
    plan = [
        {"title": "parse", "description": "the grammar"},
        {"title": "test", "dependencies": ["#1"]},
        {"title": "document", "dependencies": ["#1", "#2"]},
    ]
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "tasks": plan}, serial())
    tasks = change.state["tasks"]
    assert change.state["revision"] == 1 and len(change.changed) == 3
    assert [(t["title"], t["description"], t["status"]) for t in tasks] == [
        ("parse", "the grammar", "pending"),
        ("test", "", "pending"),
        ("document", "", "pending"),
    ]
    assert tasks[1]["dependencies"] == [tasks[0]["id"]]
    assert tasks[2]["dependencies"] == [tasks[0]["id"], tasks[1]["id"]]
    assert check_state(change.state) == change.state  # the same state format: todo reads it back
    loop_view = task_list_of({"type": "custom", "customType": "pi-todo:state", "data": change.state})
    assert [task.text for task in loop_view.tasks] == ["parse", "test", "document"]  # and todo-loop
    assert results.mutation_text(1, change.changed) == "todo revision 1 (3 changes)"


def test_a_batch_can_depend_on_existing_tasks_by_prefix():
    change = apply(
        three_tasks(),
        {"action": "add", "baseRevision": 4, "tasks": [{"title": "after b", "dependencies": ["bbbbbbbb"]}]},
        serial(),
    )
    assert change.state["tasks"][-1]["dependencies"] == [IDS[2]]


def test_a_batch_is_atomic_and_names_the_bad_item():
    plan = [{"title": "fine"}, {"title": "  "}]
    message = rejected(empty_state(), {"action": "add", "baseRevision": 0, "tasks": plan}, "invalid_title")
    assert message == "title must be non-blank and at most 160 characters (tasks[1])"
    dangling = [{"title": "a", "dependencies": ["#3"]}]
    assert rejected(
        empty_state(), {"action": "add", "baseRevision": 0, "tasks": dangling}, "missing_dependency"
    )
    loop = [{"title": "a", "dependencies": ["#2"]}, {"title": "b", "dependencies": ["#1"]}]
    rejected(empty_state(), {"action": "add", "baseRevision": 0, "tasks": loop}, "dependency_cycle")
    rejected(
        empty_state(),
        {"action": "add", "baseRevision": 0, "tasks": [{"title": "a", "dependencies": ["#1"]}]},
        "self_dependency",
    )


def test_a_batch_has_the_same_limits():
    full = [{"title": f"t{n}"} for n in range(MAX_TASKS)]
    assert (
        len(apply(empty_state(), {"action": "add", "baseRevision": 0, "tasks": full}, serial()).changed) == 40
    )
    message = rejected(three_tasks(), {"action": "add", "baseRevision": 4, "tasks": full[:38]}, "task_limit")
    assert message == "task limit 40 reached"
    rejected(
        empty_state(), {"action": "add", "baseRevision": 0, "tasks": [{"title": "x" * 161}]}, "invalid_title"
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"title": "one", "tasks": [{"title": "two"}]}, "add takes either title or tasks, not both"),
        (
            {"tasks": [{"title": "a"}], "status": "pending"},
            "with tasks, give status inside each task, not beside tasks",
        ),
        ({"tasks": []}, "tasks must be a non-empty array of {title, description?, dependencies?}"),
        ({"tasks": ["a"]}, "tasks must be a non-empty array of {title, description?, dependencies?}"),
    ],
)
def test_a_malformed_batch_is_named(params, message):
    assert (
        rejected(empty_state(), {"action": "add", "baseRevision": 0, **params}, "invalid_arguments")
        == message
    )


def test_the_schema_declares_the_batch():
    from tau.bundled.todo.schema import PARAMETERS

    batch = PARAMETERS["properties"]["tasks"]
    assert batch["items"]["required"] == ["title"]
    assert set(batch["items"]["properties"]) == {"title", "description", "dependencies"}


# ------------------------------------------------------------------------------------- prefixes


def test_update_and_remove_take_a_unique_prefix_of_eight_or_more():
    current = three_tasks()
    change = apply(
        current,
        {"action": "update", "baseRevision": 4, "updates": [{"id": "bbbbbbbb", "status": "completed"}]},
    )
    assert change.state["tasks"][2]["status"] == "completed" and change.changed == [IDS[2]]
    removed = apply(current, {"action": "remove", "baseRevision": 4, "id": IDS[1][:25]})
    assert [t["id"] for t in removed.state["tasks"]] == [IDS[0], IDS[2]]


def test_a_short_or_ambiguous_prefix_is_refused():
    current = three_tasks()
    short = rejected(current, {"action": "remove", "baseRevision": 4, "id": "bbbbbbb"}, "unknown_task")
    assert short == "unknown task id bbbbbbb"
    message = rejected(current, {"action": "remove", "baseRevision": 4, "id": "aaaaaaaa"}, "ambiguous_task")
    assert message == "task id prefix aaaaaaaa matches 2 tasks; give more characters"
    patch = {"id": "bbbbbbbb", "dependencies": ["aaaaaaaa"]}
    rejected(current, {"action": "update", "baseRevision": 4, "updates": [patch]}, "ambiguous_task")


def test_dependencies_given_as_prefixes_are_stored_in_full_and_once():
    current = three_tasks()
    patch = {"id": IDS[0], "dependencies": ["bbbbbbbb", IDS[2], IDS[1][:25]]}
    change = apply(current, {"action": "update", "baseRevision": 4, "updates": [patch]})
    assert change.state["tasks"][0]["dependencies"] == [IDS[2], IDS[1]]
    self_by_prefix = {"id": IDS[2], "dependencies": ["bbbbbbbb"]}
    rejected(current, {"action": "update", "baseRevision": 4, "updates": [self_by_prefix]}, "self_dependency")


def test_result_lines_show_eight_characters_and_the_list_keeps_full_ids():
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "title": "one"}, ids(IDS[2]))
    reply = results.mutation_reply(change)
    first, carried = reply.text.split("\n")
    assert first == "todo revision 1 (1 change: bbbbbbbb)"
    assert json.loads(carried) == {
        "revision": 1,
        "tasks": [{"id": "bbbbbbbb", "title": "one", "status": "pending"}],
    }
    assert reply.details["tasks"][0]["id"] == IDS[2] and change.state["tasks"][0]["id"] == IDS[2]
    assert json.loads(results.list_reply(change.state).text)["tasks"][0]["id"] == IDS[2]


def test_the_shown_id_grows_until_it_is_unique():
    current = three_tasks()
    change = apply(
        current, {"action": "update", "baseRevision": 4, "updates": [{"id": IDS[1], "title": "x"}]}
    )
    reply = results.mutation_reply(change, before=current)
    first, carried = reply.text.split("\n")
    assert first == "todo revision 5 (1 change: aaaaaaaa-1111-4111-8111-2)"
    assert [task["id"] for task in json.loads(carried)["tasks"]] == [IDS[0][:25], IDS[1][:25], "bbbbbbbb"]


def test_the_compact_list_keeps_descriptions_and_dependencies():
    plan = [{"title": "a", "description": "why"}, {"title": "b", "dependencies": ["#1"]}]
    change = apply(empty_state(), {"action": "add", "baseRevision": 0, "tasks": plan}, ids(*IDS[1:]))
    assert results.compact_json(change.state) == (
        '{"revision":1,"tasks":[{"id":"aaaaaaaa","title":"a","status":"pending","description":"why"},'
        '{"id":"bbbbbbbb","title":"b","status":"pending","dependencies":["aaaaaaaa"]}]}'
    )


def test_rule_errors_name_the_short_id():
    current = three_tasks()
    patch = {"id": IDS[2], "status": "completed", "dependencies": [IDS[0]]}
    message = rejected(
        current, {"action": "update", "baseRevision": 4, "updates": [patch]}, "prerequisites_incomplete"
    )
    assert message == "prerequisites of bbbbbbbb are not completed"
