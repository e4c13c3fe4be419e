"""The ``todo`` row shows the checklist itself (issue 19: it showed raw JSON arguments and UUIDs).

Driven from real todo results: a faux session with the bundled todo extension, whose events feed
the controller the terminal draws from. What the model receives is checked to be todo's own text.
"""

from __future__ import annotations

import asyncio
import uuid

from interactive_support import controlled, faux_session

from tau.extension.loader import load_extensions
from tau.modes.interactive.model import CONTINUED, ChatController, ToolBlock
from tau.modes.interactive.render import BlockRenderer
from tau.modes.interactive.todo_rows import checklist, todo_title
from tau.modes.interactive.tool_rows import tool_row


def task(title: str, status: str = "pending", description: str = "") -> dict:
    return {
        "id": str(uuid.uuid4()),
        "title": title,
        "description": description,
        "status": status,
        "dependencies": [],
    }


def snapshot(*tasks: dict, revision: int = 1) -> dict:
    return {"schemaVersion": 1, "revision": revision, "tasks": list(tasks)}


def test_titles_say_what_the_call_did_in_task_titles():
    fix, count = task("Fix add()"), task("Count warnings", "in_progress")
    before = snapshot(fix, count)
    after = snapshot({**fix, "status": "completed"}, count, revision=2)
    assert todo_title({"action": "list"}) == "todo list"
    assert todo_title({"action": "clear", "baseRevision": 3}) == "todo clear"
    assert todo_title({"action": "add", "baseRevision": 0, "title": "Fix add()"}) == 'todo add "Fix add()"'
    batch = {"action": "add", "baseRevision": 0, "tasks": [{"title": "A"}, {"title": "B"}]}
    assert todo_title(batch) == 'todo add 2 tasks: "A", "B"'
    update = {
        "action": "update",
        "baseRevision": 1,
        "updates": [{"id": fix["id"][:8], "status": "completed"}],
    }
    assert todo_title(update, before, after) == 'todo update "Fix add()" → completed'
    rename = {"action": "update", "baseRevision": 1, "updates": [{"id": count["id"], "title": "Count them"}]}
    assert todo_title(rename, before) == 'todo update "Count warnings" → renamed "Count them"'
    assert (
        todo_title({"action": "remove", "baseRevision": 1, "id": fix["id"]}, before)
        == 'todo remove "Fix add()"'
    )
    unknown = {
        "action": "update",
        "baseRevision": 1,
        "updates": [{"id": "0123456789abcdef", "status": "pending"}],
    }
    assert todo_title(unknown) == "todo update 01234567 → pending"  # no list known: the short id
    assert todo_title({"action": "explode"}) is None


def test_the_checklist_marks_each_status_and_picks_out_what_changed():
    fix, count, report = (
        task("Fix add()"),
        task("Count warnings"),
        task("Report", description="the first ERROR"),
    )
    before = snapshot(fix, count, report)
    after = snapshot({**fix, "status": "completed"}, {**count, "status": "in_progress"}, report, revision=2)
    listed = checklist({"action": "update"}, before, after, expanded=False)
    assert listed.lines == ["☑ Fix add()", "◐ Count warnings", "☐ Report", "1 of 3 done"]
    assert listed.changed == {0, 1}
    expanded = checklist({"action": "update"}, before, after, expanded=True)
    assert expanded.lines[2:] == ["☐ Report", "    the first ERROR", "1 of 3 done"]
    assert checklist({"action": "clear"}, before, snapshot(revision=3), expanded=False).lines == [
        "(no tasks)"
    ]


def test_a_long_list_folds_its_untouched_completed_tasks_until_expanded():
    done = [task(f"done {n}", "completed") for n in range(9)]
    last = task("last one")
    before = snapshot(*done, last)
    after = snapshot(*done, {**last, "status": "in_progress"}, revision=2)
    collapsed = checklist({"action": "update"}, before, after, expanded=False)
    assert collapsed.lines == ["☑ 9 more completed", "◐ last one", "9 of 10 done"]
    assert collapsed.changed == {1}
    assert len(checklist({"action": "update"}, before, after, expanded=True).lines) == 11


def test_a_result_that_is_not_a_todo_snapshot_gets_the_default_row():
    block = ToolBlock("c1", "todo", {"action": "list"}, status="done", output="whatever", details={"x": 1})
    row = tool_row(block)
    assert row.title == 'todo {"action": "list"}' and row.body == ["whatever"]


def test_an_extension_todo_with_its_own_renderers_keeps_them():
    class Definition:
        render_call = staticmethod(lambda args: "my todo")
        render_result = None

    block = ToolBlock(
        "c1", "todo", {"action": "list"}, status="done", output="x", details=snapshot(task("A"))
    )
    assert tool_row(block, Definition()).title == "my todo"


def test_a_real_todo_session_is_shown_as_a_checklist_and_the_model_gets_todos_text(tmp_path):
    session = faux_session(
        tmp_path,
        [
            {
                "tool": "todo",
                "args": {
                    "action": "add",
                    "baseRevision": 0,
                    "tasks": [{"title": "Fix add()"}, {"title": "Count warnings"}],
                },
            },
            {"factory": "complete_first.py:step"},
            {"text": "done"},
        ],
    )
    (tmp_path / "complete_first.py").write_text(
        "import json\n"
        "def step(request):\n"
        "    text = request['messages'][-1]['content'][0]['text']\n"
        "    first = json.loads(text.split('\\n')[1])['tasks'][0]['id']\n"
        "    return {'tool': 'todo', 'args': {'action': 'update', 'baseRevision': 1,\n"
        "            'updates': [{'id': first, 'status': 'completed'}]}}\n"
    )
    session.model_registry.faux.script_path = tmp_path / "script.json"  # factories are found beside it
    controller = controlled(session)

    async def run() -> None:
        await load_extensions(session, cwd=str(tmp_path), mode="json")
        await session.start()
        await session.prompt("plan and fix")

    asyncio.run(run())
    text = BlockRenderer().render(controller.blocks, 100, color=False)
    assert (
        '✓ todo add 2 tasks: "Fix add()", "Count warnings"\n  ☐ Fix add()\n  ☐ Count warnings\n  0 of 2 done'
        in text
    )
    assert '✓ todo update "Fix add()" → completed\n  ☑ Fix add()\n  ☐ Count warnings\n  1 of 2 done' in text
    assert "baseRevision" not in text and "todo revision" not in text  # no raw arguments, no result text
    results = [m["content"][0]["text"] for m in session.messages if m.get("role") == "toolResult"]
    assert results[0].startswith("todo revision 1 (2 changes)\n{")  # the model's view is todo's own

    shown = ChatController()
    shown.load_messages(session.messages)  # a resumed session shows the same rows
    resumed = BlockRenderer().render(shown.blocks, 100, color=False)
    # plus a line where todo-loop continued (live, the loop's notice went to the UI, not to the controller)
    assert resumed.replace(f"{CONTINUED}\n\n", "") == text and CONTINUED in resumed
