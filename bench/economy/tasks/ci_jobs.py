"""ci-jobs: three CI jobs whose logs are 11–21 KB (pytest, jest, cargo); one fails only once (flaky).

``sh ci/<job>.sh`` prints a job's log as its tool would: pytest a traceback in the middle and the
short summary at the end, jest the failing test's name in its closing summary, cargo the error at
the end. The model runs the three jobs, runs jest again to see whether its timeout was flaky, fixes the
two real failures (cargo's, then pytest's: a one-line fix each, read at the ``file:line`` the log
gives), and reports each job with the lines it fixed.

Personas: ``recall`` recalls a packed log with a search for what it needs (the traceback's
``file:line``), ``rerun`` runs the job again instead; ``early-facts`` runs the three jobs first and
acts late: it reads each file at the line the log gave, and names those lines in its final answer
(a fixed job no longer prints them, so it recalls the packed log or greps the fixed line).
Finished: both fixes are in, every job passes, and the answer names the flaky test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import Call, View, readable

from tasks.base import Task, write_files

PYTEST, JEST, CARGO = "sh ci/pytest.sh", "sh ci/jest.sh", "sh ci/cargo.sh"
JOBS = (PYTEST, JEST, CARGO)
FLAKY = "src/api/retry.test.js"
# (job, file, line number, buggy line, fixed line, what the log names at file:line)
FIXES = (
    (
        CARGO,
        "src/lib.rs",
        14,
        "    let total: u32 = items.len();\n",
        "    let total: u32 = items.len() as u32;\n",
        "src/lib.rs:14",
    ),
    (
        PYTEST,
        "src/prices.py",
        27,
        "    return price * (1 - rate / 10)\n",
        "    return price * (1 - rate / 100)\n",
        "src/prices.py:27",
    ),
)
WHERE = re.compile(r"(src/(?:prices\.py|lib\.rs)):(\d+)")


def _pytest() -> str:
    lines = [
        "#!/bin/sh",
        'echo "============ test session starts ============"',
        "echo 'collected 270 items'",
    ]
    lines += [
        f"echo 'tests/test_mod_{n // 12:02d}.py::test_case_{n:03d} PASSED [{n * 100 // 270:3d}%]'"
        for n in range(135)
    ]
    lines += [
        "if grep -q 'rate / 10)' src/prices.py; then",
        "echo 'tests/test_prices.py::test_discount FAILED'",
        "echo '================= FAILURES ================='",
        "echo '_____________ test_discount _____________'",
        "echo '    def test_discount():'",
        "echo '>       assert discounted(100, 10) == 90'",
        "echo 'E       assert 0.0 == 90'",
        "echo '  where 0.0 = discounted(100, 10)'",
        "echo ''",
        "echo 'src/prices.py:27: AssertionError'",
        "fi",
    ]
    lines += [
        f"echo 'tests/test_mod_{n // 12:02d}.py::test_case_{n:03d} PASSED [{n * 100 // 270:3d}%]'"
        for n in range(135, 270)
    ]
    lines += [
        "if grep -q 'rate / 10)' src/prices.py; then",
        "echo '========== short test summary info =========='",
        "echo 'FAILED tests/test_prices.py::test_discount - assert 0.0 == 90'",
        "echo '======= 1 failed, 269 passed in 4.21s ======='",
        "exit 1",
        "fi",
        "echo '============ 270 passed in 4.02s ============'",
    ]
    return "\n".join(lines) + "\n"


def _jest() -> str:
    lines = ["#!/bin/sh", "mkdir -p .ci"]
    lines += [f"echo 'PASS src/components/widget_{n:03d}.test.js (0.{n % 9}1 s)'" for n in range(430)]
    lines += [
        "if [ ! -f .ci/jest-ran ]; then",
        "touch .ci/jest-ran",
        f"echo 'FAIL {FLAKY}'",
        "echo '  ● retries › gives up after 3 attempts'",
        "echo '    thrown: Exceeded timeout of 5000 ms for a test.'",
        "echo ''",
        "echo 'Summary of all failing tests'",
        f"echo 'FAIL {FLAKY}'",
        "echo '  ● retries › gives up after 3 attempts'",
        "echo 'Tests:       1 failed, 430 passed, 431 total'",
        "exit 1",
        "fi",
        f"echo 'PASS {FLAKY}'",
        "echo 'Tests:       431 passed, 431 total'",
    ]
    return "\n".join(lines) + "\n"


def _cargo() -> str:
    lines = ["#!/bin/sh"]
    lines += [f"echo '   Compiling dependency_{n:03d} v0.{n % 7}.{n % 5} (registry)'" for n in range(240)]
    lines += [
        "echo '   Compiling shop v0.1.0 (/repo)'",
        "if grep -q 'items.len();' src/lib.rs; then",
        "echo 'error[E0308]: mismatched types'",
        "echo '  --> src/lib.rs:14:22'",
        "echo '   |'",
        "echo '14 |     let total: u32 = items.len();'",
        "echo '   |                ---   ^^^^^^^^^^^ expected `u32`, found `usize`'",
        "echo 'error: could not compile `shop` (lib) due to 1 previous error'",
        "exit 101",
        "fi",
        "echo '    Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.12s'",
    ]
    return "\n".join(lines) + "\n"


def setup(repo: Path) -> None:
    prices = (
        ['"""Prices."""', ""]
        + [f"# pricing rule {n}: rounded to the cent" for n in range(21)]
        + [
            "",
            "def discounted(price, rate):",
            '    """``price`` less ``rate`` percent."""',
            FIXES[1][3].rstrip("\n"),
        ]
    )
    lib = [f"// shop: order totals, part {n}" for n in range(11)] + [
        "",
        "pub fn total(items: &[u32]) -> u32 {",
        FIXES[0][3].rstrip("\n"),
        "    total",
        "}",
    ]
    assert prices[FIXES[1][2] - 1] == FIXES[1][3].rstrip("\n") and lib[FIXES[0][2] - 1] == FIXES[0][3].rstrip(
        "\n"
    )
    write_files(
        repo,
        {
            "ci/pytest.sh": _pytest(),
            "ci/jest.sh": _jest(),
            "ci/cargo.sh": _cargo(),
            "src/prices.py": "\n".join(prices) + "\n",
            "src/lib.rs": "\n".join(lib) + "\n",
            "README.md": "CI: `sh ci/pytest.sh`, `sh ci/jest.sh`, `sh ci/cargo.sh`.\n",
        },
    )


# -- what the model sees ---------------------------------------------------------------------


def _first(view: View, job: str) -> Call | None:
    runs = view.runs_of(job)
    return runs[0] if runs else None


def _where(view: View, job: str) -> tuple[str, int] | None:
    """The ``file:line`` a (failing) log of the job gives, as visible now."""
    found = WHERE.search("\n".join(view.sees(run) for run in view.runs_of(job)))
    return (found.group(1), int(found.group(2))) if found else None


def _line_visible(view: View, path: str, line: str) -> bool:
    for call in view.calls:
        shown = call.shown()
        if shown is None or shown.kind != "full":
            continue
        if call.name == "read" and call.args.get("path") == path and line in shown.text:
            return True
        if call.name == "obs_recall" and line.strip() in readable(shown.text):
            return True
    return False


def _fixed(view: View, path: str) -> bool:
    return any(c.name == "edit" and c.args.get("path") == path for c in view.calls)


def _fix(view: View, fix: tuple[Any, ...]) -> dict[str, Any]:
    job, path, _, old, new, _ = fix
    where = _where(view, job)
    if where is None:  # the log's traceback is hidden: a search of the packed log, or the job again
        return view.bring_back(_first(view, job), f"{path}:", {"text": "Running it again.", "bash": job})
    if not _line_visible(view, path, old):
        reads = [c for c in view.calls if c.name == "read" and c.args.get("path") == path]
        read = {
            "text": f"Reading {path} where the log points.",
            "tool": "read",
            "args": {"path": path, "offset": max(1, where[1] - 3), "limit": 8},
        }
        return view.bring_back(reads[-1], old.strip(), read) if reads else read
    args: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    if view.fusion:
        args["then_run"] = {"command": job, "timeout": 120}
    return {"text": f"Fixing {path}.", "tool": "edit", "args": args}


def _passed(view: View, job: str) -> bool:
    runs = view.runs_of(job)
    return bool(runs) and runs[-1].result is not None and not runs[-1].failed


def _answer_lines(view: View) -> tuple[list[str], dict[str, Any] | None]:
    """``file:line`` of each fix as the early logs gave it, or the step that finds it again."""
    found = []
    for fix in FIXES:
        where = _where(view, fix[0])
        if where is not None:
            found.append(f"{where[0]}:{where[1]}")
            continue
        grep = f"grep -n '{fix[4].strip()}' {fix[1]}"
        greps = view.runs_of(grep)
        hit = re.search(r"^(\d+):", view.sees(greps[-1]), re.MULTILINE) if greps else None
        if hit is not None:
            found.append(f"{fix[1]}:{hit.group(1)}")
            continue
        return [], view.bring_back(
            _first(view, fix[0]), f"{fix[1]}:", {"text": "Where was it?", "bash": grep}
        )
    return found, None


def _note(view: View) -> str:
    """A note of the flaky-looking failure, written when the jest log shows it (all but early-facts)."""
    if view.early or FLAKY not in view.sees(_first(view, JEST)) or FLAKY in view.own_text():
        return ""
    return f"jest: {FLAKY} failed on a timeout. "


def _flaky(view: View) -> str | None:
    """The test that failed once, from the model's note or the first jest log."""
    return FLAKY if FLAKY in view.own_text() or FLAKY in view.sees(_first(view, JEST)) else None


def decide(view: View) -> dict[str, Any]:
    for job in JOBS:
        if not view.runs_of(job):
            return {"text": _note(view) + "Running the CI job.", "bash": job}
    if len(view.runs_of(JEST)) == 1:  # a timeout: flaky or not?
        return {"text": _note(view) + "Running jest again.", "bash": JEST}
    for fix in FIXES:
        if not _fixed(view, fix[1]):
            step = _fix(view, fix)
            if "text" in step:
                step["text"] = _note(view) + step["text"]
            return step
    for job in JOBS:
        runs = view.runs_of(job)
        if job == JEST:
            after = runs[1:]
        else:
            path = next(fix[1] for fix in FIXES if fix[0] == job)
            edits = [c for c in view.calls if c.name == "edit" and c.args.get("path") == path]
            after = [r for r in runs if r.position >= edits[-1].position]
        if not after or after[-1].result is None:
            return {"text": "Running it again.", "bash": job}
        if after[-1].failed:
            return {"text": f"{job} still fails; stopping here."}
    flaky = _flaky(view)
    if flaky is None:
        again = {"text": "I cannot tell which jest test failed.", "bash": "ls .ci"}
        return view.bring_back(_first(view, JEST), "FAIL", again)
    lines = ["src/lib.rs", "src/prices.py"]
    if view.early:
        lines, step = _answer_lines(view)
        if step is not None:
            return step
    return {
        "text": f"All three jobs pass: fixed {lines[1]} (pytest) and {lines[0]} (cargo); "
        f"jest's {flaky} failed once on a timeout and passed on a re-run (flaky)."
    }


def facts(text: str) -> list[str]:
    return [f"fixed {fix[1]}" for fix in FIXES if fix[4].strip() in text]


def check(repo: Path, answer: str) -> str | None:
    if not answer.startswith("All three jobs pass") or FLAKY not in answer:
        return f"the answer does not report the flaky test: {answer[:100]!r}"
    for fix in FIXES:
        if fix[4] not in (repo / fix[1]).read_text(encoding="utf-8"):
            return f"{fix[1]} is not fixed"
        named = re.search(rf"{re.escape(fix[1])}:(\d+)", answer)
        if named is not None and int(named.group(1)) != fix[2]:
            return f"the answer names the wrong line: {named.group(0)}"
    return None


TASK = Task(
    name="ci-jobs",
    description="three CI jobs with 11-21 KB logs (pytest, jest, cargo), one flaky; two one-line fixes",
    prompts=(
        "CI is red: run the three jobs (`sh ci/pytest.sh`, `sh ci/jest.sh`, `sh ci/cargo.sh`), fix what "
        "is broken, and tell me what each job needed.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
