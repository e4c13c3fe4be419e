"""fix-the-tests: three bugs in a small package; the test run prints ~25 KB of failures at first.

The model runs the suite, reads the module the first failure points to, fixes it (with ``then_run``
when Action Fusion offers it, else an edit and a new run), and repeats until the suite is green.
What it fixes next is read from the newest test output it can see: in full, the excerpt of a
placeholder (recalled with ``obs_recall`` when the excerpt does not name a failure), or a receipt's
quotes; a module is edited only once its buggy line is visible (a read, or a recall of it).

Personas: ``rerun`` reads a module again or re-runs the suite instead of recalling; ``early-facts``
takes the bugs to fix from the first run, reads every module they point to first, then fixes them
one after the other from those early reads (finding each buggy line again when it is hidden), and
only then lets the newest output decide. Finished: the suite passes in the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policy import View, recall_step

from tasks.base import Task, run_tests, write_files

TEST = "python3 -m unittest"
# (test class in the failure lines, module, buggy line, fixed line, function)
BUGS = (
    ("TestScale", "calc/ops.py", "    return value + factor\n", "    return value * factor\n", "scale"),
    (
        "TestMean",
        "calc/stats.py",
        "    return sum(values) / (len(values) - 1)\n",
        "    return sum(values) / len(values)\n",
        "mean",
    ),
    (
        "TestSlug",
        "calc/text.py",
        '    return "-".join(words)\n',
        '    return "-".join(w.lower() for w in words)\n',
        "slug",
    ),
)
CASES = 25


def _filler(module: str, count: int) -> str:
    """Other functions of the module, with docstrings, so a read is a few KB like real code."""
    parts = []
    for n in range(count):
        parts.append(
            f"def {module}_helper_{n:02d}(value, *, limit={n + 3}):\n"
            f'    """Return ``value`` bounded by {n + 3}; helper {n} of the {module} module.\n\n'
            f"    Kept for callers of the 0.{n} API; see the changelog entry for release 0.{n}.\n"
            f'    """\n'
            f"    if value > limit:\n        return limit\n    return value\n\n\n"
        )
    return "".join(parts)


def _modules() -> dict[str, str]:
    ops = (
        '"""Arithmetic helpers."""\n\n\n'
        "def scale(value, factor):\n"
        '    """``value`` times ``factor``."""\n' + BUGS[0][2] + "\n\n" + _filler("ops", 30)
    )
    stats = (
        '"""Statistics helpers."""\n\n\n'
        "def mean(values):\n"
        '    """The arithmetic mean of ``values``."""\n' + BUGS[1][2] + "\n\n" + _filler("stats", 30)
    )
    text = (
        '"""Text helpers."""\n\n\n'
        "def slug(title):\n"
        '    """``title`` as a lower-case, dash-separated slug."""\n'
        "    words = title.split()\n" + BUGS[2][2] + "\n\n" + _filler("text", 30)
    )
    return {"calc/__init__.py": "", "calc/ops.py": ops, "calc/stats.py": stats, "calc/text.py": text}


def _tests() -> dict[str, str]:
    ops = ["import unittest\n\nfrom calc.ops import scale\n\n\nclass TestScale(unittest.TestCase):\n"]
    stats = ["import unittest\n\nfrom calc.stats import mean\n\n\nclass TestMean(unittest.TestCase):\n"]
    text = ["import unittest\n\nfrom calc.text import slug\n\n\nclass TestSlug(unittest.TestCase):\n"]
    for n in range(CASES):
        a, b = n + 2, (n % 5) + 2
        ops.append(
            f"    def test_scale_{n:02d}(self):\n        self.assertEqual(scale({a}, {b}), {a * b})\n\n"
        )
        values = [n + 1, n + 3, n + 8]
        stats.append(
            f"    def test_mean_{n:02d}(self):\n        self.assertEqual(mean({values}), {sum(values) / 3!r})\n\n"
        )
        title = f"Release Notes {n} Final"
        text.append(
            f"    def test_slug_{n:02d}(self):\n"
            f"        self.assertEqual(slug({title!r}), {'-'.join(title.lower().split())!r})\n\n"
        )
    return {
        "tests/__init__.py": "",
        "tests/test_ops.py": "".join(ops),
        "tests/test_stats.py": "".join(stats),
        "tests/test_text.py": "".join(text),
    }


def setup(repo: Path) -> None:
    write_files(
        repo, {**_modules(), **_tests(), "README.md": "# calc\n\nRun the tests: `python3 -m unittest`\n"}
    )


def _applied(call) -> bool:
    """An edit whose file change went through (a fused edit whose command failed included)."""
    shown = call.shown()
    return shown is not None and (not call.failed or "[then_run:failed]" in shown.text)


def _stale(view: View, run) -> bool:
    """An edit after this run that is not itself this run (a fused edit is its own run)."""
    return any(call.name in ("edit", "write") and call.position > run.position for call in view.calls)


def _failing(view: View, run) -> tuple[tuple[str, ...] | None, bool]:
    """The bug the newest output points to, and whether the output could be read at all."""
    shown = run.command_output()
    visible = shown.excerpts() if shown is not None else ""
    if shown is not None and shown.kind == "placeholder":
        visible += "\n".join(
            call.shown().text for call in view.recalls_of(shown.obs_id) if call.shown() is not None
        )
    for bug in BUGS:
        if f"{bug[0]}." in visible:
            return bug, True
    return None, shown is not None and shown.kind == "full"


def _visible_line(view: View, path: str, line: str) -> bool:
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "obs_recall" and line.strip() in shown.text:
            return True
    return False


def _fix(view: View, bug: tuple[str, ...]) -> dict[str, Any]:
    _, path, old, new, function = bug
    read = view.latest_read(path)
    if not _visible_line(view, path, old):
        return view.bring_back(
            read,
            old.strip(),
            {
                "text": f"The failures point at {function}() in {path}; reading it.",
                "tool": "read",
                "args": {"path": path},
            },
        )
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    if view.fusion:
        args["then_run"] = {"command": TEST, "timeout": 120}
    return {"text": f"{function}() is wrong; fixing it.", "tool": "edit", "args": args}


def _edited(view: View, bug: tuple[str, ...]) -> bool | None:
    return view.edit_state(bug[1], bug[2])


def _early(view: View) -> dict[str, Any] | None:
    """The early-facts plan: the bugs the first run names, their modules read first, then the fixes
    from those reads; ``None`` when the plan has nothing to do (the newest output decides)."""
    runs = view.runs_of(TEST)
    if not runs or runs[0].result is None:
        return None
    seen = view.sees(runs[0])
    bugs = [bug for bug in BUGS if f"{bug[0]}." in seen]
    if not bugs:
        shown = runs[0].shown()
        if shown is not None and shown.kind == "placeholder" and not view.recalls_of(shown.obs_id):
            return recall_step(shown.obs_id, query="FAIL:")
        return None
    for bug in bugs:
        if view.latest_read(bug[1]) is None and _edited(view, bug) is False:
            return {"text": f"Reading {bug[1]} first.", "tool": "read", "args": {"path": bug[1]}}
    for bug in bugs:
        edited = _edited(view, bug)
        if edited is None:
            return {
                "text": f"The edit of {bug[1]} failed; reading it again.",
                "tool": "read",
                "args": {"path": bug[1]},
            }
        if not edited:
            return _fix(view, bug)
    return None


def decide(view: View) -> dict[str, Any]:
    if view.early and (step := _early(view)) is not None:
        return step
    runs = view.runs_of(TEST)
    run = runs[-1] if runs else None
    if run is None or run.result is None or _stale(view, run):
        return {"text": "Running the test suite.", "bash": TEST}
    if not run.failed:
        fixed = sorted({call.args["path"] for call in view.calls if call.name == "edit" and _applied(call)})
        return {"text": f"The suite passes now. Fixed: {', '.join(fixed) or 'nothing'}."}
    bug, _readable = _failing(view, run)
    if bug is not None:
        return _fix(view, bug)
    return view.bring_back(
        run, "FAIL:", {"text": "I cannot see which test fails; running the suite again.", "bash": TEST}
    )


def facts(text: str) -> list[str]:
    return [f"fixed {bug[4]}() in {bug[1]}" for bug in BUGS if bug[3].strip() in text]


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("The suite passes now."):
        return f"the answer is not that the suite passes: {answer[:80]!r}"
    return run_tests(repo)


TASK = Task(
    name="fix-the-tests",
    description="three bugs, a 25 KB failing test log re-run after every edit until green",
    prompts=(
        "The test suite fails (run it with `python3 -m unittest`). Find out why, fix it, and verify that "
        "the whole suite passes.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
