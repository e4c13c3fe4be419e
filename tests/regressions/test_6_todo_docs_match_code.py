"""Issue 6 (todo): the error texts and codes of docs/extensions/todo.md are the ones the tool gives.

Each rule of the doc's "Limits and dependency rules" table is triggered through the state machine;
the message it raises, with the concrete task id and count put back as ``<id>``/``<n>``, must be the
text the doc's row shows next to the same ``details.error`` code.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tau.bundled.todo_state import TodoError, apply, check_state, empty_state

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions" / "todo.md"


def build(*tasks):
    out = [
        {"id": f"t{n}", "title": title, "description": "", "status": status, "dependencies": deps}
        for n, (title, status, deps) in enumerate(tasks, 1)
    ]
    return check_state({"schemaVersion": 1, "revision": 0, "tasks": out})


def ids():
    numbers = itertools.count(100)
    return lambda: f"t{next(numbers)}"


FULL = build(*[(f"task {n}", "pending", []) for n in range(40)])
PAIR_DONE = build(("a", "completed", []), ("b", "in_progress", ["t1"]))
PAIR_OPEN = build(("a", "pending", []), ("b", "pending", ["t1"]))
CASES = {
    "task_limit": (FULL, {"action": "add", "baseRevision": 0, "title": "one more"}),
    "invalid_title": (empty_state(), {"action": "add", "baseRevision": 0, "title": "x" * 161}),
    "description_too_long": (
        empty_state(),
        {"action": "add", "baseRevision": 0, "title": "t", "description": "d" * 513},
    ),
    "too_many_dependencies": (
        build(*[(f"d{n}", "pending", []) for n in range(17)]),
        {"action": "add", "baseRevision": 0, "title": "t", "dependencies": [f"t{n}" for n in range(1, 18)]},
    ),
    "state_too_large": (
        # 23 tasks of 4-byte characters stay under 64 KiB; one more full task goes over
        check_state(
            {
                "schemaVersion": 1,
                "revision": 0,
                "tasks": [
                    {
                        "id": f"t{n}",
                        "title": f"{n:03d}" + "\U0001f600" * 150,
                        "description": "\U0001f600" * 512,
                        "status": "pending",
                        "dependencies": [],
                    }
                    for n in range(23)
                ],
            }
        ),
        {"action": "add", "baseRevision": 0, "title": "\U0001f600" * 160, "description": "\U0001f600" * 512},
    ),
    "missing_dependency": (
        empty_state(),
        {"action": "add", "baseRevision": 0, "title": "t", "dependencies": ["t9"]},
    ),
    "self_dependency": (
        PAIR_OPEN,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "dependencies": ["t1"]}]},
    ),
    "dependency_cycle": (
        PAIR_OPEN,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "dependencies": ["t2"]}]},
    ),
    "prerequisites_incomplete": (
        PAIR_OPEN,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t2", "status": "in_progress"}]},
    ),
    "dependents_active": (
        PAIR_DONE,
        {"action": "update", "baseRevision": 0, "updates": [{"id": "t1", "status": "pending"}]},
    ),
    "has_dependents": (PAIR_OPEN, {"action": "remove", "baseRevision": 0, "id": "t1"}),
    "unknown_task": (PAIR_OPEN, {"action": "remove", "baseRevision": 0, "id": "t9"}),
    "ambiguous_task": (
        check_state(
            {
                "schemaVersion": 1,
                "revision": 0,
                "tasks": [
                    {
                        "id": f"abcdefgh-{n}",
                        "title": "t",
                        "description": "",
                        "status": "pending",
                        "dependencies": [],
                    }
                    for n in (1, 2)
                ],
            }
        ),
        {"action": "remove", "baseRevision": 0, "id": "abcdefgh"},
    ),
}


def doc_row(code: str) -> str:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if f"(`{code}`)" in line]
    assert len(rows) == 1, f"docs/extensions/todo.md: expected one table row for {code}, found {rows}"
    return rows[0]


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_rule_of_the_doc_gives_the_documented_text_and_code(code):
    current, params = CASES[code]
    with pytest.raises(TodoError) as caught:
        apply(current, params, ids())
    assert caught.value.code == code
    shown = caught.value.message
    for concrete in ("t100", "t9", "t2", "t1"):
        shown = shown.replace(concrete, "<id>")
    shown = shown.replace(": 1 task(s)", ": <n> task(s)")
    shown = shown.replace("prefix abcdefgh matches 2", "prefix <prefix> matches <n>")
    assert f"`{shown}` (`{code}`)" in doc_row(code)


def test_the_documented_conflict_text_is_the_tools():
    with pytest.raises(TodoError) as caught:
        apply(PAIR_OPEN, {"action": "clear", "baseRevision": 3}, ids())
    assert caught.value.code == "revision_conflict"
    documented = 'revision conflict (baseRevision B, current C); call todo {"action":"list"} and retry'
    assert caught.value.message == documented.replace("B", "3").replace("C", "0")
    assert documented in DOC.read_text(encoding="utf-8").replace("\n  ", " ")


# the `details.error` codes as decisions.md ("todo") lists them
DECIDED_CODES = [
    "revision_conflict",
    "unknown_task",
    "invalid_title",
    "description_too_long",
    "too_many_dependencies",
    "missing_dependency",
    "self_dependency",
    "dependency_cycle",
    "prerequisites_incomplete",
    "dependents_active",
    "has_dependents",
    "task_limit",
    "state_too_large",
    "storage_unavailable",
    "no_conversation",
]


@pytest.mark.parametrize("code", DECIDED_CODES)
def test_every_error_code_of_the_decisions_is_named_in_the_doc(code):
    """decisions.md "todo" lists the ``details.error`` codes; a user reading todo.md should find each."""
    assert f"`{code}`" in DOC.read_text(encoding="utf-8")
