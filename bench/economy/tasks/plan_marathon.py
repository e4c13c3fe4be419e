"""plan-marathon: a six-part audit, ~150 requests in one ``tau -p``; parts 1 and 2 print 25–35 KB logs.

With ``todo`` the model plans the six parts (one batch ``add`` when the tool takes one, else one
``add`` per part), marks each part in progress and completed as it goes, and stops after parts 2
and 4 (todo-loop brings it back). Without ``todo`` it works through the parts in order without
stopping. At the end of each part it notes the part's finding (``Part k done: …``); the final
answer lists all six, so a finding that is no longer visible is looked up again. After a
compaction the summary carries the notes and how far the current part got.

Personas: ``rerun`` behaves as ``recall`` (neither recalls here: a finding no longer visible is
looked up by running the part's last step again); ``early-facts`` notes only that a part is done
(``Part k done.``), never its finding, so its final answer needs all six findings from the context
(or a recall of a packed result, else the part's last step again). Finished: the answer lists the
six findings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import View, text_of

from tasks.base import Task, write_files

TITLES = (
    "Review the build logs",
    "Review the test logs",
    "Audit package alpha",
    "Audit package beta",
    "Audit package gamma",
    "Audit package delta",
)
PACKAGES = ("alpha", "beta", "gamma", "delta")
FINDINGS = ("E4107", "T2291", "alpha-17", "beta-42", "gamma-08", "delta-63")
STOP_AFTER = (2, 4)  # parts after which the model ends its turn when a todo loop can bring it back
MODULES = 10
NOTE = re.compile(r"Part (\d) done: (\S+)\.")
DONE = re.compile(r"Part (\d) done[.:]")
RAN = re.compile(r"Part (\d): ran steps 1-(\d+)")


def _steps(part: int) -> list[str]:
    if part in (1, 2):
        kind = "build" if part == 1 else "test"
        return [f"cat logs/{kind}-0{n}.log" for n in range(1, 6)] + [f"grep -n FINDING logs/{kind}-0*.log"]
    package = PACKAGES[part - 3]
    steps = []
    for n in range(MODULES):
        module = f"src/{package}/mod_{n}.py"
        steps += [f"sed -n '1,40p' {module}", f"grep -n 'def ' {module}", f"sed -n '41,80p' {module}"]
    return [*steps[:29], f"grep -rn FINDING src/{package}"]


def _log(kind: str, n: int, part: int) -> str:
    lines = []
    for i in range(400 + 60 * n):
        level = "WARN" if i % 37 == 0 else "INFO"
        lines.append(f"[{kind} {n}] {level} step {i:04d}: module_{i % 97:02d} finished in {i % 13}.{i % 7}s")
    if n == 5:
        lines.append(f"[{kind} {n}] FINDING first failure code {FINDINGS[part - 1]}")
    return "\n".join(lines) + "\n"


def _module(package: str, n: int, last: bool) -> str:
    lines = [f'"""{package} module {n}."""', ""]
    for f in range(12):
        lines += [
            f"def {package}_{n}_f{f}(value, scale={f + 1}):",
            f'    """Scale ``value`` for {package} stage {f}."""',
            f"    result = value * scale + {n}",
            "    return result",
            "",
            "",
        ]
    if last:
        lines.append(f"# FINDING owner tag {FINDINGS[PACKAGES.index(package) + 2]}")
    return "\n".join(lines) + "\n"


def setup(repo: Path) -> None:
    files = {}
    for part, kind in ((1, "build"), (2, "test")):
        for n in range(1, 6):
            files[f"logs/{kind}-0{n}.log"] = _log(kind, n, part)
    for package in PACKAGES:
        for n in range(MODULES):
            files[f"src/{package}/mod_{n}.py"] = _module(package, n, n == MODULES - 1)
    files["AUDIT.md"] = "# Audit\n\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(TITLES, 1)) + "\n"
    write_files(repo, files)


def _notes(view: View) -> dict[int, str]:
    return {int(part): finding for part, finding in NOTE.findall(view.all_text)}


def _done(view: View) -> set[int]:
    """The parts the model noted as done, with or without their finding."""
    return {int(part) for part in DONE.findall(view.all_text)} | {
        int(part) for part in DONE.findall(view.summaries())
    }


def _ran_through(view: View, part: int) -> int:
    steps = _steps(part)
    seen = [i + 1 for i, step in enumerate(steps) if view.runs_of(step) and view.runs_of(step)[-1].result]
    claimed = [int(n) for p, n in RAN.findall(view.all_text) if int(p) == part]
    return max(seen + claimed + [0])


def _finding(view: View, part: int) -> str | None:
    last = view.runs_of(_steps(part)[-1])
    shown = last[-1].command_output() if last else None
    seen = view.sees(last[-1]) if last else ""
    found = re.search(r"FINDING \S+ \S+ \S+ (\S+)", seen) if shown is not None else None
    if found is None and shown is not None:
        found = re.search(r"FINDING owner tag (\S+)", seen)
    return found.group(1) if found else None


def _look_up(view: View, part: int) -> dict[str, Any]:
    """The step that finds a part's finding again: its last step run again (or, for a model that
    recalls and acts late on early facts, a recall of its packed output)."""
    step = _steps(part)[-1]
    again = {"text": f"Looking up the finding of part {part} again.", "bash": step}
    runs = view.runs_of(step)
    return view.bring_back(runs[-1] if runs else None, "FINDING", again) if view.early else again


def _todo_plan(view: View) -> dict[str, Any] | None:
    """The next planning call, or None when the six parts are on the list."""
    listed = view.todo_list()
    revision = view.todo_revision() or 0
    titles = [task["title"] for task in listed["tasks"]] if listed else []
    if listed is None and revision > 0:
        return {"tool": "todo", "args": {"action": "list"}}
    missing = [title for title in TITLES if title not in titles]
    if not missing:
        return None
    if view.todo_batch():
        tasks = [{"title": title} for title in missing]
        return {
            "text": "Planning the audit.",
            "tool": "todo",
            "args": {"action": "add", "baseRevision": revision, "tasks": tasks},
        }
    return {
        "text": "Planning the audit.",
        "tool": "todo",
        "args": {"action": "add", "baseRevision": revision, "title": missing[0]},
    }


def _todo_update(view: View, patches: list[tuple[int, str]], text: str) -> dict[str, Any]:
    listed = view.todo_list()
    assert listed is not None
    ids = {task["title"]: task["id"] for task in listed["tasks"]}
    updates = [{"id": ids[TITLES[part - 1]], "status": status} for part, status in patches]
    return {
        "text": text,
        "tool": "todo",
        "args": {"action": "update", "baseRevision": view.todo_revision(), "updates": updates},
    }


def _status(view: View) -> dict[str, str]:
    listed = view.todo_list()
    return {task["title"]: task["status"] for task in listed["tasks"]} if listed else {}


def _stopped_after(view: View, part: int) -> bool:
    return (
        any(
            m.get("role") == "assistant" and text_of(m) == f"Part {part} is done; stopping here."
            for m in view.messages
        )
        or f"Part {part} is done; stopping here." in view.summaries()
    )


def decide(view: View) -> dict[str, Any]:
    todo = view.has_tool("todo")
    notes = _notes(view)
    done = _done(view) if view.early else set(notes)
    status: dict[str, str] = {}
    if todo:
        plan = _todo_plan(view)
        if plan is not None:
            return plan
        status = _status(view)
        if view.todo_list()["revision"] != view.todo_revision():
            return {"tool": "todo", "args": {"action": "list"}}
    for part in range(1, 7):
        title = TITLES[part - 1]
        finished = status.get(title) == "completed" if todo else part in done
        if finished:
            if (
                todo
                and part in STOP_AFTER
                and view.has_tool("todo_loop_block")
                and not _stopped_after(view, part)
            ):
                return {"text": f"Part {part} is done; stopping here."}
            continue
        if todo and status.get(title) == "pending":
            return _todo_update(view, [(part, "in_progress")], f"Starting part {part}: {title}.")
        steps = _steps(part)
        through = _ran_through(view, part)
        if through < len(steps):
            note = ""
            if part > 1 and not todo and part - 1 in done and through == 0:
                note = (
                    f"Part {part - 1} done: {notes[part - 1]}. "
                    if part - 1 in notes
                    else f"Part {part - 1} done. "
                )
            return {"text": f"{note}Part {part}, step {through + 1}.", "bash": steps[through]}
        if view.early:  # a part is done when its steps are; its finding is needed only at the end
            if todo:
                patches = [(part, "completed")] + ([(part + 1, "in_progress")] if part < 6 else [])
                return _todo_update(view, patches, f"Part {part} done.")
            if part == 6:
                break
            return {"text": f"Part {part} done. Part {part + 1}, step 1.", "bash": _steps(part + 1)[0]}
        finding = notes.get(part) or _finding(view, part)
        if finding is None:
            return {"text": f"Looking up the finding of part {part} again.", "bash": steps[-1]}
        if todo:
            patches = [(part, "completed")] + ([(part + 1, "in_progress")] if part < 6 else [])
            return _todo_update(view, patches, f"Part {part} done: {finding}.")
        if part == 6:
            notes[6] = finding
            break
        return {"text": f"Part {part} done: {finding}. Part {part + 1}, step 1.", "bash": _steps(part + 1)[0]}
    missing = [part for part in range(1, 7) if part not in notes and _finding(view, part) is None]
    if missing:
        return _look_up(view, missing[0])
    findings = ", ".join(f"part {p}: {notes.get(p) or _finding(view, p)}" for p in range(1, 7))
    return {"text": f"The audit is complete. Findings: {findings}."}


def facts(text: str) -> list[str]:
    notes = {int(part): finding for part, finding in NOTE.findall(text)}
    found = [f"Part {part} done: {finding}." for part, finding in sorted(notes.items())]
    for part in range(1, 7):
        if part in notes:
            continue
        if re.search(rf"Part {part} done\.", text):  # a model that does not note its findings
            found.append(f"Part {part} done.")
            continue
        steps = _steps(part)
        ran = [i + 1 for i, step in enumerate(steps) if step in text]
        if ran:
            found.append(f"Part {part}: ran steps 1-{max(ran)}")
        for stop in STOP_AFTER:
            if f"Part {stop} is done; stopping here." in text:
                found.append(f"Part {stop} is done; stopping here.")
    return list(dict.fromkeys(found))


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("The audit is complete."):
        return f"the audit is not complete: {answer[:80]!r}"
    wrong = [f"part {p}" for p in range(1, 7) if f"part {p}: {FINDINGS[p - 1]}" not in answer]
    return f"wrong or missing findings: {', '.join(wrong)}" if wrong else None


TASK = Task(
    name="plan-marathon",
    description="a six-part audit, ~150 requests in one run; parts 1-2 read 25-35 KB logs",
    prompts=(
        "Carry out the six-part audit in AUDIT.md: plan the parts, work through each part's steps, "
        "and note each part's finding. Report all six findings at the end.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
