"""Reading the task list: three sources, newest valid list wins, anything strange is "no list"."""

from __future__ import annotations

import pytest

from tau.bundled.todo_loop.tasks import Task, newest_task_list, task_list_of


def pi_todo(entry_id: str, tasks, custom_type: str = "pi-todo:state") -> dict:
    data = {"schemaVersion": 1, "revision": 1, "tasks": tasks}
    return {"type": "custom", "id": entry_id, "parentId": None, "customType": custom_type, "data": data}


def rpiv(entry_id: str, tasks) -> dict:
    return {
        "type": "custom",
        "id": entry_id,
        "customType": "rpiv-todo-state",
        "data": {"tasks": tasks, "nextId": len(tasks) + 1 if isinstance(tasks, list) else 1},
    }


def todo_result(entry_id: str, details, tool_name: str = "todo") -> dict:
    message = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": tool_name,
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "timestamp": 1,
    }
    if details is not None:
        message["details"] = details
    return {"type": "message", "id": entry_id, "message": message}


def user(entry_id: str, text: str) -> dict:
    return {"type": "message", "id": entry_id, "message": {"role": "user", "content": text}}


def test_pi_todo_state_reads_titles_and_statuses():
    tasks = [
        {"id": "a", "title": "Write parser", "status": "completed", "description": "", "dependencies": []},
        {"id": "b", "title": "Test parser", "status": "in_progress", "description": "", "dependencies": []},
        {"id": "c", "title": "Ship", "status": "pending", "description": "", "dependencies": ["b"]},
    ]
    found = task_list_of(pi_todo("e1", tasks))
    assert found is not None
    assert (found.source, found.entry_id, found.open_count, found.total) == ("pi-todo:state", "e1", 2, 3)
    assert found.tasks[0] == Task("a", "Write parser", "completed")


def test_rpiv_state_reads_subjects_and_counts_tombstones_out_of_the_total():
    tasks = [
        {"id": 1, "subject": "Parse", "status": "deferred", "reason": "later"},
        {"id": 2, "subject": "Lex", "status": "deleted"},
        {"id": 3, "subject": "Emit", "status": "pending"},
        {"id": 4, "subject": "Old", "status": "awaiting_user"},
    ]
    found = task_list_of(rpiv("e2", tasks))
    assert (found.source, found.open_count, found.total) == ("rpiv-todo-state", 1, 3)
    assert [task.text for task in found.tasks] == ["Parse", "Lex", "Emit", "Old"]


def test_todo_tool_results_read_details_tasks_and_content_text():
    details = {"action": "create", "tasks": [{"id": 1, "content": "From content", "status": "pending"}]}
    found = task_list_of(todo_result("e3", details))
    assert (found.source, found.tasks) == ("todo result", (Task(1, "From content", "pending"),))


def test_title_wins_over_subject_and_content_and_a_task_without_text_still_counts():
    found = task_list_of(
        rpiv("e", [{"title": "T", "subject": "S", "content": "C", "status": "pending"}, {"status": "x"}])
    )
    assert [task.text for task in found.tasks] == ["T", ""]


def test_an_empty_array_is_a_list_with_nothing_open():
    found = task_list_of(pi_todo("e", []))
    assert (found.open_count, found.total) == (0, 0)


@pytest.mark.parametrize(
    "tasks",
    [
        None,
        {"0": {"status": "pending"}},
        "pending",
        [{"title": "no status"}],
        [{"title": "x", "status": 3}],
        [{"title": "x", "status": "pending"}, "not an object"],
        [None],
    ],
)
def test_malformed_tasks_are_not_a_list(tasks):
    assert task_list_of(pi_todo("e", tasks)) is None
    assert task_list_of(rpiv("e", tasks)) is None


def task(task_id: str, status: str = "pending", dependencies: list | None = None) -> dict:
    return {
        "id": task_id,
        "title": task_id,
        "description": "",
        "status": status,
        "dependencies": dependencies or [],
    }


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"schemaVersion": 2, "revision": 1, "tasks": [task("a")]}, "an unknown schema version"),
        ({"schemaVersion": 1, "revision": 1, "tasks": [task(f"t{n}") for n in range(41)]}, "over 40 tasks"),
        ({"schemaVersion": 1, "revision": 1, "tasks": [task("a"), task("a")]}, "a duplicate id"),
        ({"schemaVersion": 1, "revision": 1, "tasks": [task("a", dependencies=["a"])]}, "a self dependency"),
        (
            {"schemaVersion": 1, "revision": 1, "tasks": [{"title": "a", "status": "pending"}]},
            "missing fields",
        ),
        ({"schemaVersion": 1, "revision": -1, "tasks": [task("a")]}, "a negative revision"),
        ({"schemaVersion": 1, "revision": 1, "tasks": [task("a")], "extra": 1}, "an unknown key"),
    ],
)
def test_a_pi_todo_state_that_todo_rejects_is_not_a_list(data, why):
    """todo's own check decides, so the loop never reads as current a snapshot todo would skip (even
    when todo is not loaded); the same tasks in another tool's entry are read as before."""
    entry = {"type": "custom", "id": "e", "customType": "pi-todo:state", "data": data}
    assert task_list_of(entry) is None, why
    assert task_list_of(rpiv("e", data["tasks"])) is not None


@pytest.mark.parametrize(
    "entry",
    [
        pi_todo("e", [{"status": "pending"}], custom_type="pi-todo:snapshot"),
        todo_result("e", {"tasks": [{"status": "pending"}]}, tool_name="bash"),
        todo_result("e", None),
        todo_result("e", "details as a string"),
        {"type": "custom", "customType": "pi-todo:state", "data": "not an object"},
        {"type": "custom_message", "customType": "pi-todo:state", "content": "x", "display": False},
        {"type": "message", "message": "not an object"},
        {"type": "message"},
        "not an entry",
        None,
        user("u", "hello"),
    ],
)
def test_other_entries_are_not_lists(entry):
    assert task_list_of(entry) is None


def test_the_newest_valid_list_wins_walking_backwards():
    branch = [
        pi_todo("old", [{"title": "a", "status": "pending"}]),
        user("u", "go on"),
        todo_result("mid", {"tasks": [{"subject": "b", "status": "completed"}]}),
        rpiv("new", [{"subject": "c", "status": "in_progress"}]),
        user("u2", "more"),
    ]
    assert newest_task_list(reversed(branch)).entry_id == "new"
    assert newest_task_list(reversed(branch[:3])).entry_id == "mid"


def test_a_malformed_newer_entry_falls_back_to_the_older_valid_list():
    """An errored todo call (no tasks, or broken tasks) must never read as an empty list."""
    branch = [
        pi_todo("valid", [task("a")]),
        todo_result("errored", {"error": "boom"}),
        pi_todo("broken", [{"title": "b"}]),
        todo_result("thrown", None),
    ]
    found = newest_task_list(reversed(branch))
    assert (found.entry_id, found.open_count) == ("valid", 1)


def test_no_list_anywhere_is_none():
    assert newest_task_list(reversed([user("u", "hi"), todo_result("t", {"error": "x"})])) is None
    assert newest_task_list([]) is None


def test_reading_stops_at_the_first_valid_list():
    consumed = []

    def entries():
        for entry in [pi_todo("newest", []), pi_todo("older", [])]:
            consumed.append(entry["id"])
            yield entry
        raise AssertionError("read past the first valid list")

    assert newest_task_list(entries()).entry_id == "newest"
    assert consumed == ["newest"]


def test_a_hostile_entry_degrades_to_no_list():
    class Exploding(dict):
        def get(self, *args):
            raise RuntimeError("boom")

    assert task_list_of(Exploding(type="custom")) is None
